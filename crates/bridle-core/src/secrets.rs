//! API keys in the OS keychain (DESIGN §8): service `bridle`, one entry per provider kind and
//! base URL, through the `keyring` crate (Secret Service on Linux, Keychain on macOS, the
//! Credential Manager on Windows).
//!
//! Rule: a key goes to the keychain and nowhere else — never the config, the store, a log or
//! the audit; nothing here logs a key, and every key read or written here becomes a secret the
//! audit knows by value ([`crate::redact::remember`]), so it is redacted whatever its shape. A
//! keychain that cannot be reached (no Secret Service, a locked collection, a daemon that does
//! not answer within [`KEYCHAIN_LIMIT`]) is an [`SecretError`] for writes and "no key" for
//! reads, so a front end falls back to the environment instead of hanging.

use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use crate::config::ProviderKind;

/// The keychain service every entry is filed under.
pub const SERVICE: &str = "bridle";

/// How long one keychain call may take before it counts as unreachable.
pub const KEYCHAIN_LIMIT: Duration = Duration::from_secs(5);

/// Why a key could not be written or removed.
#[derive(Debug, thiserror::Error)]
pub enum SecretError {
    /// The keychain refused or failed.
    #[error("the OS keychain refused: {0}")]
    Keychain(String),
    /// The keychain did not answer in time.
    #[error("the OS keychain did not answer within {} s", KEYCHAIN_LIMIT.as_secs())]
    Timeout,
    /// An empty key was given.
    #[error("the key is empty")]
    Empty,
}

/// Where a provider's key was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeySource {
    /// The OS keychain.
    Keychain,
    /// `OPENAI_API_KEY` / `ANTHROPIC_API_KEY`.
    Environment,
}

impl KeySource {
    /// `keychain` or `environment`.
    pub fn as_str(self) -> &'static str {
        match self {
            KeySource::Keychain => "keychain",
            KeySource::Environment => "environment",
        }
    }
}

/// The keychain account of a provider: its kind and base URL (without a trailing `/`), so two
/// servers of one kind keep two keys.
pub fn account(kind: ProviderKind, base_url: &str) -> String {
    format!("{}@{}", kind.as_str(), base_url.trim().trim_end_matches('/'))
}

/// The stored key for this provider, if the keychain has one and answers.
pub fn get(kind: ProviderKind, base_url: &str) -> Option<String> {
    get_account(account(kind, base_url))
}

/// The keychain account of a telemetry header (DESIGN §17): its name and the collector's URL.
pub fn header_account(name: &str, endpoint: &str) -> String {
    format!("telemetry-header:{}@{}", name.trim().to_ascii_lowercase(), endpoint.trim().trim_end_matches('/'))
}

/// The value of the telemetry header `name` for `endpoint`, if the keychain has one.
pub fn header(name: &str, endpoint: &str) -> Option<String> {
    get_account(header_account(name, endpoint))
}

/// Stores `value` for the telemetry header `name` of `endpoint`, replacing any earlier one.
pub fn set_header(name: &str, endpoint: &str, value: &str) -> Result<(), SecretError> {
    let value = value.trim().to_string();
    if value.is_empty() {
        return Err(SecretError::Empty);
    }
    crate::redact::remember([&value]);
    let account = header_account(name, endpoint);
    bounded(move || entry(&account)?.set_password(&value)).map_err(Failure::into_error)
}

fn get_account(account: String) -> Option<String> {
    match bounded(move || entry(&account)?.get_password()) {
        Ok(key) => {
            crate::redact::remember([&key]);
            Some(key).filter(|k| !k.is_empty())
        }
        Err(Failure::Keyring(keyring::Error::NoEntry)) => None,
        Err(e) => {
            tracing::debug!("keychain read failed: {}", e.describe());
            None
        }
    }
}

/// Stores `key` for this provider, replacing any earlier one.
pub fn set(kind: ProviderKind, base_url: &str, key: &str) -> Result<(), SecretError> {
    let key = key.trim().to_string();
    if key.is_empty() {
        return Err(SecretError::Empty);
    }
    crate::redact::remember([&key]);
    let account = account(kind, base_url);
    bounded(move || entry(&account)?.set_password(&key)).map_err(Failure::into_error)
}

/// Removes this provider's key; `Ok(false)` when there was none.
pub fn clear(kind: ProviderKind, base_url: &str) -> Result<bool, SecretError> {
    let account = account(kind, base_url);
    match bounded(move || entry(&account)?.delete_credential()) {
        Ok(()) => Ok(true),
        Err(Failure::Keyring(keyring::Error::NoEntry)) => Ok(false),
        Err(e) => Err(e.into_error()),
    }
}

fn entry(account: &str) -> keyring::Result<keyring::Entry> {
    keyring::Entry::new(SERVICE, account)
}

enum Failure {
    Keyring(keyring::Error),
    Timeout,
}

impl Failure {
    fn describe(&self) -> String {
        match self {
            Failure::Keyring(e) => e.to_string(),
            Failure::Timeout => "timed out".into(),
        }
    }

    fn into_error(self) -> SecretError {
        match self {
            Failure::Keyring(e) => SecretError::Keychain(e.to_string()),
            Failure::Timeout => SecretError::Timeout,
        }
    }
}

/// Runs a keychain call on its own thread and waits at most [`KEYCHAIN_LIMIT`]: a Secret
/// Service that waits for a prompt nobody can answer must not hang a front end. (A call that
/// times out finishes, or not, on its thread; its answer is dropped.)
fn bounded<T: Send + 'static>(call: impl FnOnce() -> keyring::Result<T> + Send + 'static) -> Result<T, Failure> {
    let (tx, rx) = mpsc::channel();
    let spawned = thread::Builder::new().name("bridle-keychain".into()).spawn(move || {
        let _ = tx.send(call());
    });
    if let Err(e) = spawned {
        return Err(Failure::Keyring(keyring::Error::PlatformFailure(Box::new(e))));
    }
    match rx.recv_timeout(KEYCHAIN_LIMIT) {
        Ok(result) => result.map_err(Failure::Keyring),
        Err(_) => Err(Failure::Timeout),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accounts_name_the_kind_and_the_server() {
        assert_eq!(account(ProviderKind::Openai, "http://127.0.0.1:8080/v1/"), "openai@http://127.0.0.1:8080/v1");
        assert_ne!(
            account(ProviderKind::Openai, "https://api.openai.com/v1"),
            account(ProviderKind::Anthropic, "https://api.openai.com/v1")
        );
    }

    #[test]
    fn an_empty_key_is_refused_before_the_keychain_is_asked() {
        assert!(matches!(set(ProviderKind::Openai, "http://x", "  "), Err(SecretError::Empty)));
    }
}
