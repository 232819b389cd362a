//! The environment of every program Bridle starts for the user (bash commands, MCP servers,
//! hooks): built from an allow-list, never scrubbed from a deny-list, which always misses a name.
//!
//! Rule (DESIGN §4.2): a variable passes when its name is on the built-in list or the config's
//! `[sandbox] env`, and its value does not look secret ([`crate::redact`]'s shapes: one list of
//! what a secret looks like), so `DATABASE_URL=postgres://app:pw@db/app` stays behind even when
//! listed.

use std::ffi::OsString;
use std::sync::Arc;

use crate::redact;

/// The environment Bridle was launched with, read once by the front end's wiring and handed down
/// as a value (the core reads none). Its `Debug` shows the names only: values hold API keys.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct HostEnvironment(Arc<[(OsString, OsString)]>);

impl HostEnvironment {
    /// The environment of `vars`.
    pub fn new(vars: impl IntoIterator<Item = (OsString, OsString)>) -> Self {
        Self(vars.into_iter().collect())
    }

    /// The value of `name`, when set.
    pub fn get(&self, name: &str) -> Option<&OsString> {
        self.0.iter().find(|(k, _)| k == name).map(|(_, v)| v)
    }

    /// Every variable, in the order read.
    pub fn vars(&self) -> impl Iterator<Item = (OsString, OsString)> + '_ {
        self.0.iter().cloned()
    }
}

impl std::fmt::Debug for HostEnvironment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.0.iter().map(|(k, _)| k)).finish()
    }
}

/// Names every child gets (when set and not secret-looking); `LC_*` too.
const ALLOWED: &[&str] = &["PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "TERM", "TZ", "TMPDIR", "PWD"];

/// Whether a variable of this name passes, given the config's extra names.
pub fn allows_name(name: &str, extra: &[String]) -> bool {
    ALLOWED.contains(&name) || name.starts_with("LC_") || extra.iter().any(|e| e == name)
}

/// `vars` reduced to the allowed names whose values do not look secret.
pub fn child_environment(
    vars: impl Iterator<Item = (OsString, OsString)>,
    extra: &[String],
) -> Vec<(OsString, OsString)> {
    vars.filter(|(name, value)| {
        allows_name(&name.to_string_lossy(), extra) && !redact::looks_secret(&value.to_string_lossy())
    })
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pass(vars: &[(&str, &str)], extra: &[&str]) -> Vec<String> {
        let extra: Vec<String> = extra.iter().map(|e| e.to_string()).collect();
        child_environment(vars.iter().map(|(k, v)| (OsString::from(k), OsString::from(v))), &extra)
            .into_iter()
            .map(|(k, _)| k.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn only_allowed_names_pass_and_the_config_adds_names() {
        // The measured misses of the old deny-list, and the desktop's doors.
        let vars = [
            ("PATH", "/usr/bin"),
            ("HOME", "/home/u"),
            ("LC_ALL", "C.UTF-8"),
            ("GPG_PASSPHRASE", "correct horse"),
            ("SESSION_COOKIE", "abc"),
            ("AWS_CREDS", "x"),
            ("SENTRY_DSN", "https://abc@o1.ingest.sentry.io/1"),
            ("SLACK_WEBHOOK_URL", "https://hooks.slack.com/services/T/B/X"),
            ("DBUS_SESSION_BUS_ADDRESS", "unix:path=/run/user/1000/bus"),
            ("DISPLAY", ":0"),
            ("SSH_AUTH_SOCK", "/tmp/ssh-x/agent.1"),
            ("JAVA_HOME", "/usr/lib/jvm/java-17"),
        ];
        assert_eq!(pass(&vars, &[]), ["PATH", "HOME", "LC_ALL"]);
        assert_eq!(pass(&vars, &["JAVA_HOME"]), ["PATH", "HOME", "LC_ALL", "JAVA_HOME"]);
    }

    #[test]
    fn a_listed_name_with_a_secret_value_stays_behind() {
        let body = "Q7x9Lm2Pz8Rk4Vb6Nw1Hj3Tf5Yc0Gd";
        for value in [
            "postgres://app:hunter2@db.internal:5432/app".to_string(),
            format!("sk_live_{body}"),
            format!("glpat-{body}"),
            format!("sk-proj-{body}{body}"),
        ] {
            assert!(pass(&[("DATABASE_URL", &value)], &["DATABASE_URL"]).is_empty(), "{value}");
        }
        assert_eq!(pass(&[("DATABASE_URL", "postgres://db.internal:5432/app")], &["DATABASE_URL"]), ["DATABASE_URL"]);
    }
}
