//! The secrets Bridle knows by value: what it kept out of a command's environment, its own
//! provider keys, and the values under secret-looking keys of `.env`-style files its tools read.
//! Each is redacted wherever it appears, as `[redacted:value]`, whatever its shape.
//!
//! Rules: a value shorter than [`MIN_VALUE_CHARS`] is never remembered (it would redact ordinary
//! words); values live in this process's memory only, never on disk, in a log or in a `Debug`;
//! an occurrence glued into a longer token (a known signature inside a JWT, a known password
//! inside a base64 line) takes the whole token with it, so no part of either survives.
//!
//! This is the one process-wide registry in the core, by design: a key learnt by one session's
//! tool must be redacted in every audit row any session of this process writes afterwards, and
//! the registry holds nothing read from the outside world but what Bridle itself was given.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::sync::{LazyLock, PoisonError, RwLock};

use regex::{Regex, RegexBuilder};

/// Values shorter than this many characters are not remembered.
pub const MIN_VALUE_CHARS: usize = 8;
/// At most this many values are remembered (a `.env` of millions of lines must not make every
/// audit row slow); later ones are left to the shapes.
const MAX_VALUES: usize = 10_000;
/// What replaces a known value.
pub const MARKER: &str = "[redacted:value]";

#[derive(Default)]
struct Known {
    values: BTreeSet<String>,
    /// Every value, longest first, as one alternation (the regex engine turns a set of literals
    /// into one Aho-Corasick scan).
    matcher: Option<Regex>,
}

static KNOWN: LazyLock<RwLock<Known>> = LazyLock::new(|| RwLock::new(Known::default()));

/// Remembers each of `values` that is long enough (trimmed), and its JSON-escaped spelling when
/// that differs (a value with a quote or a backslash, seen inside JSON text).
pub fn remember<S: AsRef<str>>(values: impl IntoIterator<Item = S>) {
    let mut fresh: Vec<String> = Vec::new();
    for value in values {
        let value = value.as_ref().trim();
        if value.chars().count() < MIN_VALUE_CHARS || value.starts_with("[redacted") {
            continue;
        }
        let escaped = serde_json::to_string(value).unwrap_or_default();
        let escaped = escaped.get(1..escaped.len().saturating_sub(1)).unwrap_or_default();
        if escaped != value && !escaped.is_empty() {
            fresh.push(escaped.to_string());
        }
        fresh.push(value.to_string());
    }
    if fresh.is_empty() {
        return;
    }
    let mut known = KNOWN.write().unwrap_or_else(PoisonError::into_inner);
    let before = known.values.len();
    for value in fresh {
        if known.values.len() >= MAX_VALUES {
            tracing::warn!("audit sanitiser: {MAX_VALUES} secret values already known; no more are remembered");
            break;
        }
        known.values.insert(value);
    }
    if known.values.len() != before {
        known.matcher = build(&known.values);
    }
}

fn build(values: &BTreeSet<String>) -> Option<Regex> {
    let mut sorted: Vec<&String> = values.iter().collect();
    // Longest first: at one position the alternation takes the first that matches.
    sorted.sort_by_key(|v| std::cmp::Reverse(v.len()));
    let alternation = sorted.iter().map(|v| regex::escape(v)).collect::<Vec<_>>().join("|");
    RegexBuilder::new(&alternation)
        .size_limit(256 << 20)
        .dfa_size_limit(256 << 20)
        .build()
        .inspect_err(|e| tracing::error!("audit sanitiser: the known values cannot be matched: {e}"))
        .ok()
}

/// Characters of the token a known value may be glued into.
fn token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '_' | '.' | '-')
}

/// `text` with every known value (and the token it sits in) replaced; borrows when none is there.
pub fn redact(text: &str) -> Cow<'_, str> {
    let known = KNOWN.read().unwrap_or_else(PoisonError::into_inner);
    let Some(matcher) = &known.matcher else { return Cow::Borrowed(text) };
    let mut spans: Vec<(usize, usize)> = Vec::new();
    for found in matcher.find_iter(text) {
        let (start, end) = widen(text, found.start(), found.end());
        match spans.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => spans.push((start, end)),
        }
    }
    if spans.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (start, end) in spans {
        out.push_str(&text[at..start]);
        out.push_str(MARKER);
        at = end;
    }
    out.push_str(&text[at..]);
    Cow::Owned(out)
}

/// `start..end` grown over the token characters around it (and `=` padding after it), but not
/// over a full stop that ends a sentence.
fn widen(text: &str, start: usize, end: usize) -> (usize, usize) {
    let before = text[..start].char_indices().rev().take_while(|&(_, c)| token_char(c)).last();
    let start = before.map_or(start, |(i, _)| i);
    let after = &text[end..];
    let run = after.find(|c: char| !token_char(c)).unwrap_or(after.len());
    let padding = after[run..].len() - after[run..].trim_start_matches('=').len();
    let grown = if padding > 0 { run + padding } else { after[..run].trim_end_matches('.').len() };
    (start, end + grown)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::super::{learn_file, remember_named, sanitize_text};
    use super::*;

    // The registry is the process's: each test remembers values no other test uses.

    #[test]
    fn a_remembered_value_is_redacted_wherever_it_appears() {
        let value = "kv1-Ahq7Zp2Lw9Rt4Xc8";
        remember([value]);
        assert_eq!(sanitize_text(&format!("echo {value} done")), "echo [redacted:value] done");
        assert_eq!(sanitize_text(&format!("it is {value}.")), "it is [redacted:value].");
        // Glued into a longer token (a JWT's signature, a base64 line): the token goes whole.
        assert_eq!(sanitize_text(&format!("x eyJhbGci.eyJzdWIi.{value}Zz9 y")), "x [redacted:value] y");
        assert_eq!(sanitize_text(&format!("{value}==, then")), "[redacted:value], then");
        let clean = super::super::sanitize(&serde_json::json!({"output": format!("A{value}"), "n": [value]}));
        assert_eq!(clean, serde_json::json!({"output": MARKER, "n": [MARKER]}));
    }

    #[test]
    fn a_short_value_is_not_remembered() {
        remember(["kv2-7Zp", "  kv2-Q  "]);
        assert_eq!(sanitize_text("kv2-7Zp and kv2-Q stay"), "kv2-7Zp and kv2-Q stay");
    }

    #[test]
    fn a_value_with_a_quote_is_known_inside_json_text_too() {
        remember(["kv3\"Wq8Zr3Lm"]);
        let json_text = r#"{"content":[{"text":"kv3\"Wq8Zr3Lm"}]}"#;
        assert!(!sanitize_text(json_text).contains("Wq8Zr3Lm"), "{}", sanitize_text(json_text));
    }

    #[test]
    fn a_named_value_is_remembered_when_its_name_or_value_looks_secret() {
        remember_named([
            ("KV4_GREETING", "kv4-plain-greeting"),
            ("KV4_DEPLOY_TOKEN", "kv4-plainwords-token"),
            ("KV4_SMTP_PASS", "kv4-smtp-password"),
            ("KV4_DATABASE_URL", "postgres://app:kv4Pg7hunterQ@db/app"),
        ]);
        assert_eq!(
            sanitize_text("kv4-plain-greeting kv4-plainwords-token kv4-smtp-password; pw kv4Pg7hunterQ"),
            "kv4-plain-greeting [redacted:value] [redacted:value]; pw [redacted:value]"
        );
    }

    #[test]
    fn an_env_file_a_tool_read_teaches_its_secret_values() {
        learn_file(
            "app/.env.local",
            "# comment\nexport KV5_API_TOKEN=\"kv5-token-value\"\nKV5_GREETING=kv5-hello-world\nKV5_SECRET='kv5 two words'\n",
        );
        learn_file("notes.txt", "KV5_OTHER_TOKEN=kv5-not-an-env-file\n");
        learn_file(".netrc", "machine h login bob password kv5-netrc-pw\n");
        learn_file(".npmrc", "//registry.npmjs.org/:_authToken=kv5-npm-auth-token\n");
        learn_file(".git-credentials", "https://bob:kv5-git-cred-pw@github.com\n");
        assert_eq!(
            sanitize_text("kv5-token-value kv5-hello-world | kv5 two words | kv5-not-an-env-file | kv5-netrc-pw | kv5-npm-auth-token | kv5-git-cred-pw"),
            "[redacted:value] kv5-hello-world | [redacted:value] | kv5-not-an-env-file | [redacted:value] | [redacted:value] | [redacted:value]"
        );
    }
}
