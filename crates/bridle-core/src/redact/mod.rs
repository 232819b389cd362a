//! Redacting secrets and cutting size: what the audit log stores, and what a child process's
//! environment may carry, is never a secret (and, stored, never huge). A leaf: the one list of
//! what a secret looks like, and of the secrets Bridle knows by value, used by the audit log and
//! the environment builder alike.
//!
//! Rule: redact first, cut second — a secret straddling the cut point is replaced whole before
//! any string is shortened, so half a key never reaches the disk. Values under secret-looking
//! keys (`password`, `api_key`, `Authorization`, …, matched case-insensitively as substrings)
//! are replaced by `[redacted]`; a secret Bridle knows by value ([`remember`]: what it kept out
//! of a command's environment, its provider keys, the secret values of `.env`-style files its
//! tools read) is replaced by `[redacted:value]` wherever it appears, before any shape is looked
//! for; secret-shaped text anywhere in any string (vendor API keys, tokens, JWTs, private keys,
//! credentials in URLs and command lines) is replaced by a `[redacted:<kind>]` marker; strings
//! over [`MAX_STRING_CHARS`] and collections over [`MAX_ITEMS`] are cut with a marker giving the
//! original size.
//!
//! ```
//! use bridle_core::redact::sanitize;
//! let clean = sanitize(&serde_json::json!({
//!     "command": "curl -H 'Authorization: Bearer abcdef0123456789' https://api.example.com",
//!     "env": {"OPENAI_API_KEY": "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"},
//! }));
//! let text = clean.to_string();
//! assert!(!text.contains("abcdef0123456789") && !text.contains("sk-proj-"));
//! ```

mod commands;
mod env_file;
mod gitleaks;
mod keys;
mod known;
mod later;
mod patterns;
mod vendors;

#[cfg(test)]
pub(crate) mod fixtures;
#[cfg(test)]
mod shapes_tests;
#[cfg(test)]
mod tests;

use std::borrow::Cow;
use std::sync::LazyLock;

use serde_json::{Map, Value};

pub use env_file::{is_env_file, learn as learn_file};
pub use known::{remember, MIN_VALUE_CHARS};
pub use later::learn_later;
pub use patterns::REDACTED;

/// Strings longer than this many characters are cut.
pub const MAX_STRING_CHARS: usize = 2000;
/// Arrays and objects with more entries than this are cut.
pub const MAX_ITEMS: usize = 100;
/// Nesting deeper than this is replaced by a marker.
pub const MAX_DEPTH: usize = 32;
/// Object keys longer than this many characters are cut.
const MAX_KEY_CHARS: usize = 200;

/// Secret-looking key fragments, compared with the key lowercased and stripped of `_ - . `.
const SECRET_KEY_PARTS: &[&str] = &[
    "password",
    "passwd",
    "passphrase",
    "secret",
    "token",
    "apikey",
    "authorization",
    "cookie",
    "privatekey",
    "credential",
    "accesskey",
    "sessionkey",
    "signingkey",
    "encryptionkey",
];

/// Keys that are secret only by their exact (normalised) name.
const SECRET_KEYS_EXACT: &[&str] = &["auth", "pass", "pwd"];

/// Keys that are secret when their last word is one of these (`DB_PASS`, `MYSQL_PWD`, `SMTP_PW`,
/// `NPM_AUTH`).
const SECRET_KEY_LAST_WORDS: &[&str] = &["pass", "pwd", "pw", "passwd", "auth"];

/// Key fragments about token *counts*, not tokens (`max_tokens`, `tokenUsage`).
const TOKEN_COUNT_PARTS: &[&str] = &["tokens", "tokencount", "tokenusage", "tokenlimit"];

/// `text` with every known secret value replaced, then every secret shape: Bridle's own shapes
/// first (their markers name the kind), then the gitleaks rule set's (their markers name the
/// rule).
fn redact(text: &str) -> Cow<'_, str> {
    later::settle();
    let mut out = known::redact(text);
    for pass in [patterns::redact, gitleaks::redact] {
        if let Cow::Owned(replaced) = pass(&out) {
            out = Cow::Owned(replaced);
        }
    }
    out
}

/// Remembers the value of each variable or file key `(name, value)` whose name or value looks
/// secret (and the password inside it when it is a URL with credentials): the one test of what
/// the environment builder keeps back and what a `.env` file holds. One call takes a whole file
/// or environment, so the known values are re-indexed once.
pub fn remember_named<N: AsRef<str>, V: AsRef<str>>(pairs: impl IntoIterator<Item = (N, V)>) {
    let mut values: Vec<String> = Vec::new();
    for (name, value) in pairs {
        let (name, value) = (name.as_ref(), value.as_ref());
        if !(is_secret_key(name) || looks_secret(value)) {
            continue;
        }
        values.extend(url_password(value).map(String::from));
        values.push(value.to_string());
    }
    remember(values);
}

/// The password of `scheme://user:password@host`, if `text` is such a URL.
fn url_password(text: &str) -> Option<&str> {
    URL_PASSWORD.as_ref()?.captures(text)?.get(1).map(|m| m.as_str())
}

/// The password of `scheme://user:password@host`.
static URL_PASSWORD: LazyLock<Option<regex::Regex>> =
    LazyLock::new(|| regex::Regex::new(r"^[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]*:([^/\s@]+)@").ok());

/// How many gitleaks rules there are, and how many the regex engine cannot compile.
#[cfg(test)]
pub fn gitleaks_rules() -> (usize, usize) {
    gitleaks::counts()
}

/// A sanitised copy of `value` (see the module docs for what changes).
pub fn sanitize(value: &Value) -> Value {
    walk(value, 0)
}

/// `text` with every secret-shaped value replaced, then cut to [`MAX_STRING_CHARS`].
pub fn sanitize_text(text: &str) -> String {
    redact_then_cut(text, MAX_STRING_CHARS)
}

/// Whether `text` holds something secret-shaped (the bash environment scrub asks this of each
/// variable's value).
pub fn looks_secret(text: &str) -> bool {
    redact(text) != text
}

/// Whether a value stored under `key` is replaced whatever it looks like.
pub fn is_secret_key(key: &str) -> bool {
    let normal = normalise_key(key);
    let last = key.rsplit(['_', '-', '.', ' ']).next().unwrap_or(key).to_ascii_lowercase();
    SECRET_KEYS_EXACT.contains(&normal.as_str())
        || SECRET_KEY_PARTS.iter().any(|part| normal.contains(part))
        || SECRET_KEY_LAST_WORDS.contains(&last.as_str())
}

fn normalise_key(key: &str) -> String {
    key.chars().filter(|c| !matches!(c, '_' | '-' | '.' | ' ')).flat_map(char::to_lowercase).collect()
}

/// A secret key whose only secret-looking part is about token counts (`max_tokens`).
fn is_token_count_key(key: &str) -> bool {
    let mut normal = normalise_key(key);
    if !TOKEN_COUNT_PARTS.iter().any(|part| normal.contains(part)) {
        return false;
    }
    for part in TOKEN_COUNT_PARTS {
        normal = normal.replace(part, "");
    }
    !normal.contains("token") && !SECRET_KEY_PARTS.iter().any(|part| normal.contains(part))
}

fn walk(value: &Value, depth: usize) -> Value {
    match value {
        Value::String(s) => Value::String(sanitize_text(s)),
        Value::Array(items) => {
            if depth >= MAX_DEPTH {
                return Value::String(format!("[cut: nested deeper than {MAX_DEPTH}]"));
            }
            let mut out: Vec<Value> = items.iter().take(MAX_ITEMS).map(|v| walk(v, depth + 1)).collect();
            if items.len() > MAX_ITEMS {
                out.push(Value::String(format!("[cut: {} items in all]", items.len())));
            }
            Value::Array(out)
        }
        Value::Object(entries) => {
            if depth >= MAX_DEPTH {
                return Value::String(format!("[cut: nested deeper than {MAX_DEPTH}]"));
            }
            let mut out = Map::new();
            for (key, v) in entries.iter().take(MAX_ITEMS) {
                let clean = if is_secret_key(key) { under_secret_key(key, v, depth) } else { walk(v, depth + 1) };
                out.insert(redact_then_cut(key, MAX_KEY_CHARS), clean);
            }
            if entries.len() > MAX_ITEMS {
                out.insert("[cut]".into(), Value::String(format!("[cut: {} entries in all]", entries.len())));
            }
            Value::Object(out)
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => value.clone(),
    }
}

/// A value under a secret-looking key: nothing of it survives, except what cannot be a secret
/// (null, booleans, empty strings) and token counts.
fn under_secret_key(key: &str, value: &Value, depth: usize) -> Value {
    match value {
        Value::Null | Value::Bool(_) => value.clone(),
        Value::String(s) if s.is_empty() => value.clone(),
        Value::Number(_) | Value::Object(_) if is_token_count_key(key) => walk(value, depth + 1),
        _ => Value::String(REDACTED.into()),
    }
}

/// `text` cut to `max` characters, with a marker giving the original length.
/// Characters past the cut that are still redacted, so a secret straddling the cut is seen whole
/// (the longest shapes, PEM keys, are a few thousand).
const STRADDLE_MARGIN: usize = 64 * 1024;

/// `text` redacted, then cut to `max` characters. Only what is kept and the margin past it are
/// read by the shapes: a huge string (an 8 MiB file write) costs what its kept part costs.
fn redact_then_cut(text: &str, max: usize) -> String {
    let Some((window, _)) = text.char_indices().nth(max + STRADDLE_MARGIN) else {
        return cut(&redact(text), max);
    };
    let total = text.chars().count();
    let kept = redact(&text[..window]);
    match kept.char_indices().nth(max) {
        Some((end, _)) => format!("{}…[cut: {total} chars in all]", &kept[..end]),
        // The redacted window came out shorter than `max`: it is still not the whole text.
        None => format!("{kept}…[cut: {total} chars in all]"),
    }
}

fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_string(),
        Some((end, _)) => {
            let total = text.chars().count();
            format!("{}…[cut: {total} chars in all]", &text[..end])
        }
    }
}
