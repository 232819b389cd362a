//! The environment a command sees: the user's, minus what looks secret and the keychain's door.
//!
//! Rule: a variable goes when its name or its value looks secret. Names are matched on the
//! markers of DESIGN §4.2; values on the audit sanitiser's shapes (one list of what a secret
//! looks like), so `DATABASE_URL=postgres://app:pw@db/app` goes whatever it is called.

use std::ffi::OsString;

use crate::audit::sanitize;

/// Substrings of variable names that mark a secret (compared in upper case).
const SECRET_MARKERS: &[&str] = &["KEY", "SECRET", "TOKEN", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH"];
/// Endings of variable names that mark a secret (`DB_PASS`, `MYSQL_PWD`, `GITHUB_PAT`).
const SECRET_ENDINGS: &[&str] = &["PASS", "_PWD", "_PW", "_PAT"];
/// Removed by name: the session bus leads to the keychain.
const REMOVED: &[&str] = &["DBUS_SESSION_BUS_ADDRESS"];

/// Whether a variable of this name is kept, whatever its value.
pub fn keeps_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    !REMOVED.contains(&upper.as_str())
        && !SECRET_MARKERS.iter().any(|m| upper.contains(m))
        && !SECRET_ENDINGS.iter().any(|e| upper.ends_with(e))
}

/// Whether a variable is kept: neither its name nor its value looks secret.
pub fn keeps(name: &str, value: &str) -> bool {
    keeps_name(name) && !sanitize::looks_secret(value)
}

/// `vars` without secret-looking names or values.
pub fn scrubbed_environment(vars: impl Iterator<Item = (OsString, OsString)>) -> Vec<(OsString, OsString)> {
    vars.filter(|(name, value)| keeps(&name.to_string_lossy(), &value.to_string_lossy())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_names_and_the_session_bus_are_removed() {
        for name in [
            "OPENAI_API_KEY",
            "github_token",
            "AWS_SECRET_ACCESS_KEY",
            "DB_PASSWORD",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "DBUS_SESSION_BUS_ADDRESS",
            "DB_PASS",
            "MYSQL_PWD",
            "GITHUB_PAT",
            "SMTP_PW",
            "NPM_AUTH",
            "BASIC_AUTH_USER",
        ] {
            assert!(!keeps_name(name), "{name}");
        }
        for name in ["PATH", "HOME", "LANG", "CARGO_HOME", "TERM", "PWD", "OLDPWD", "PATHS", "SSH_TTY"] {
            assert!(keeps_name(name), "{name}");
        }
    }

    #[test]
    fn secret_values_are_removed_whatever_the_name() {
        let body = "Q7x9Lm2Pz8Rk4Vb6Nw1Hj3Tf5Yc0Gd";
        for (name, value) in [
            ("DATABASE_URL", "postgres://app:hunter2@db.internal:5432/app".to_string()),
            ("REDIS_URL", "redis://:hunter2@cache:6379/0".to_string()),
            ("STRIPE", format!("sk_live_{body}")),
            ("HF", format!("hf_{body}")),
            ("DEPLOY", format!("glpat-{body}")),
            ("OPENAI", format!("sk-proj-{body}{body}")),
        ] {
            assert!(!keeps(name, &value), "{name}={value}");
        }
        for (name, value) in [
            ("PATH", "/usr/local/bin:/usr/bin:/bin"),
            ("DATABASE_URL", "postgres://db.internal:5432/app"),
            ("LS_COLORS", "rs=0:di=01;34:ln=01;36"),
            ("GIT_COMMIT", "4b825dc642cb6eb9a060e54bf8d69288fbee4904"),
        ] {
            assert!(keeps(name, value), "{name}={value}");
        }
    }
}
