//! The environment a command sees: the user's, minus what looks secret and the keychain's door.

use std::ffi::OsString;

/// Substrings of variable names that mark a secret (compared in upper case).
const SECRET_MARKERS: &[&str] = &["KEY", "SECRET", "TOKEN", "PASSWORD", "PASSWD", "CREDENTIAL"];
/// Removed by name: the session bus leads to the keychain.
const REMOVED: &[&str] = &["DBUS_SESSION_BUS_ADDRESS"];

/// Whether a variable of this name is kept.
pub fn keeps(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    !REMOVED.contains(&upper.as_str()) && !SECRET_MARKERS.iter().any(|m| upper.contains(m))
}

/// `vars` without secret-looking names.
pub fn scrubbed_environment(vars: impl Iterator<Item = (OsString, OsString)>) -> Vec<(OsString, OsString)> {
    vars.filter(|(name, _)| keeps(&name.to_string_lossy())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_and_the_session_bus_are_removed() {
        for name in [
            "OPENAI_API_KEY",
            "github_token",
            "AWS_SECRET_ACCESS_KEY",
            "DB_PASSWORD",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "DBUS_SESSION_BUS_ADDRESS",
        ] {
            assert!(!keeps(name), "{name}");
        }
        for name in ["PATH", "HOME", "LANG", "CARGO_HOME", "TERM"] {
            assert!(keeps(name), "{name}");
        }
    }
}
