//! The environment of every program Bridle starts for the user (bash commands, MCP servers,
//! hooks): built from an allow-list, never scrubbed from a deny-list, which always misses a name.
//!
//! Rule (DESIGN §4.2): a variable passes when its name is on the built-in list, a locale category
//! (`LC_*`) whose value is a locale, or on the config's `[sandbox] env`, and its value does not
//! look secret ([`crate::redact`]'s shapes: one list of what a secret looks like), so
//! `DATABASE_URL=postgres://app:pw@db/app` stays behind even when listed; beyond the built-in
//! names, a secret-looking name never passes (`LC_API_KEY`, a listed `GITHUB_TOKEN`). What stays
//! behind for looking secret becomes a secret the audit knows by value ([`redact::remember_named`])
//! before the first redaction after the host environment is read ([`redact::learn_later`]: the
//! test compiles every secret shape, which a launch's first screen does not wait for).

use std::collections::HashSet;
use std::ffi::OsString;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use regex::Regex;

use crate::redact;

/// The environment Bridle was launched with, read once by the front end's wiring and handed down
/// as a value (the core reads none). Its `Debug` shows the names only: values hold API keys.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct HostEnvironment(Arc<[(OsString, OsString)]>);

/// The host variables whose values were tested for looking secret (or are queued to be).
static TESTED: LazyLock<Mutex<HashSet<(OsString, OsString)>>> = LazyLock::new(Mutex::default);

impl HostEnvironment {
    /// The environment of `vars`; the values of those a child never gets for looking secret are
    /// remembered as secrets before the next redaction (so the audit redacts them wherever they
    /// show up).
    pub fn new(vars: impl IntoIterator<Item = (OsString, OsString)>) -> Self {
        let vars: Arc<[(OsString, OsString)]> = vars.into_iter().collect();
        // Each variable is tested once per process: the same environment read again (by every
        // test's session, say) queues nothing, so no redaction waits for a pile of repeats.
        let untested: Vec<(OsString, OsString)> = {
            let mut tested = TESTED.lock().unwrap_or_else(PoisonError::into_inner);
            vars.iter().filter(|pair| tested.insert((*pair).clone())).cloned().collect()
        };
        if !untested.is_empty() {
            redact::learn_later(move || {
                let kept_back = untested
                    .iter()
                    .map(|(name, value)| (name.to_string_lossy(), value.to_string_lossy()))
                    .filter(|(name, value)| !passes(name, value, &[]));
                redact::remember_named(kept_back);
            });
        }
        Self(vars)
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

/// Names every child gets (when set and not secret-looking); `LC_*` too, holding a locale.
const ALLOWED: &[&str] = &["PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "TERM", "TZ", "TMPDIR", "PWD"];

/// A locale as `setlocale` reads one: `C`, `POSIX`, `language[_TERRITORY][.codeset][@modifier]`,
/// or a codeset alone (macOS sets `LC_CTYPE=UTF-8`).
static LOCALE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"^(?:(?:C|POSIX|[a-z]{2,3}(?:_(?:[A-Z]{2}|[0-9]{3}))?)(?:\.[A-Za-z0-9_-]{1,20})?(?:@[A-Za-z0-9_-]{1,20})?|(?i:utf-?8))$",
    )
    .ok()
});

/// Whether a variable of this name passes, given the config's extra names (its value is judged
/// apart: see [`child_environment`]).
pub fn allows_name(name: &str, extra: &[String]) -> bool {
    ALLOWED.contains(&name)
        || ((name.starts_with("LC_") || extra.iter().any(|e| e == name)) && !redact::is_secret_key(name))
}

/// Whether `value` is a locale (or empty: the category is unset).
fn is_locale(value: &str) -> bool {
    value.is_empty() || LOCALE.as_ref().is_some_and(|locale| locale.is_match(value))
}

/// Whether the variable passes to a child: an allowed name, a locale under `LANG` and `LC_*`, and
/// a value that does not look secret.
fn passes(name: &str, value: &str, extra: &[String]) -> bool {
    let locale_ok = !(name == "LANG" || name.starts_with("LC_")) || is_locale(value);
    allows_name(name, extra) && locale_ok && !redact::looks_secret(value)
}

/// `vars` reduced to the allowed names whose values do not look secret.
pub fn child_environment(
    vars: impl Iterator<Item = (OsString, OsString)>,
    extra: &[String],
) -> Vec<(OsString, OsString)> {
    vars.filter(|(name, value)| passes(&name.to_string_lossy(), &value.to_string_lossy(), extra)).collect()
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

    /// `LC_*` passes holding a locale only, and never under a secret-looking name; nor does a
    /// secret-looking name the config lists.
    #[test]
    fn a_locale_variable_passes_only_holding_a_locale() {
        let locales =
            ["C", "POSIX", "C.UTF-8", "en_US.UTF-8", "de_DE@euro", "sr_RS.UTF-8@latin", "es_419.UTF-8", "UTF-8", ""];
        for value in locales {
            assert_eq!(pass(&[("LC_ALL", value), ("LANG", value)], &[]), ["LC_ALL", "LANG"], "{value:?}");
        }
        for value in
            ["hunter2hunter2", "sk-not-a-locale", "en_US.UTF-8; rm -rf /", "/home/u/.secrets", "Q7x9Lm2Pz8Rk4Vb6"]
        {
            assert!(pass(&[("LC_MESSAGES", value), ("LANG", value)], &[]).is_empty(), "{value}");
        }
        assert!(pass(&[("LC_API_KEY", "C.UTF-8"), ("LC_TOKEN", "C"), ("LC_DB_PASS", "C")], &[]).is_empty());
        assert!(pass(&[("GITHUB_TOKEN", "abc"), ("NPM_AUTH", "x")], &["GITHUB_TOKEN", "NPM_AUTH"]).is_empty());
        // A built-in name is not judged by its name (`PWD` is the working folder).
        assert_eq!(pass(&[("PWD", "/home/u/project")], &[]), ["PWD"]);
    }

    /// What stays behind for looking secret is redacted wherever it shows up later.
    #[test]
    fn the_values_kept_back_become_known_secrets() {
        let vars = [
            ("ENV_TEST_DEPLOY_TOKEN", "envtest-plain-token-value"),
            ("LC_ENV_TEST_SECRET", "envtest-lc-secret-value"),
            ("ENV_TEST_HELPER", "envtest-helper-plain-value"),
        ];
        let host = HostEnvironment::new(vars.iter().map(|(k, v)| (OsString::from(k), OsString::from(v))));
        assert_eq!(host.vars().count(), 3);
        assert_eq!(
            redact::sanitize_text("envtest-plain-token-value envtest-lc-secret-value envtest-helper-plain-value"),
            "[redacted:value] [redacted:value] envtest-helper-plain-value"
        );
    }
}
