//! The secret shapes recognised inside any string, each a regex compiled once with what replaces
//! a match, and the engine that applies them. The shapes live by family — key material
//! ([`super::keys`]), vendors' tokens ([`super::vendors`]), command lines ([`super::commands`]) —
//! and the generic ones (credentials in URLs, headers, `name=value` under a secret-looking name)
//! here; [`PATTERNS`] puts them in the order they run.
//!
//! Rule: when in doubt, redact — a false positive costs a few characters of an audit row, a
//! false negative puts a credential on disk for good. Vendor-shaped tokens are replaced before
//! the generic `key=value` rules so their marker names what was there.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::{Captures, Regex, RegexSet};

use super::{commands, keys, vendors};

/// What replaces a value found under a secret-looking key or after a secret-looking name.
pub const REDACTED: &str = "[redacted]";

/// What becomes of a match.
pub(super) enum Replace {
    /// The whole match becomes `[redacted:<kind>]`.
    Kind(&'static str),
    /// As `Kind`, when the match mixes letters and digits (a short prefix that also opens words).
    Random(&'static str),
    /// Group 1 (which opens the match) stays; the rest becomes `[redacted]` (unless it is a
    /// marker already).
    After,
    /// Group 1 stays; the rest becomes `[redacted:<kind>]`.
    AfterKind(&'static str),
    /// Computed from the match.
    With(fn(&Captures<'_>) -> String),
}

/// One secret shape, before it is compiled.
pub(super) struct Shape {
    regex: String,
    replace: Replace,
}

pub(super) fn shape(regex: impl Into<String>, replace: Replace) -> Shape {
    Shape { regex: regex.into(), replace }
}

/// One secret shape, its regex compiled the first time the prefilter says it may match (most
/// never do in a session: compiling all of them at the first audit row held 3.5 MiB).
struct Pattern {
    source: String,
    regex: std::sync::OnceLock<Option<Regex>>,
    replace: Replace,
}

impl Pattern {
    /// The compiled regex; `None` if it does not compile (logged once).
    fn regex(&self) -> Option<&Regex> {
        self.regex
            .get_or_init(|| {
                Regex::new(&self.source)
                    .inspect_err(|e| {
                        // Only reachable if a literal is edited into an invalid regex; the unit
                        // tests compile every pattern, so this never ships.
                        tracing::error!("audit sanitiser: invalid pattern {}: {e}", self.source)
                    })
                    .ok()
            })
            .as_ref()
    }

    fn replacement(&self, caps: &Captures<'_>) -> String {
        let whole = group(caps, 0);
        match self.replace {
            Replace::Kind(kind) => format!("[redacted:{kind}]"),
            Replace::Random(kind) => {
                let mixed =
                    whole.contains(|c: char| c.is_ascii_digit()) && whole.contains(|c: char| c.is_ascii_alphabetic());
                if mixed {
                    format!("[redacted:{kind}]")
                } else {
                    whole.to_string()
                }
            }
            Replace::After | Replace::AfterKind(_) => {
                // Group 1 opens every such shape's match, so the rest is what follows it.
                let kept = group(caps, 1);
                let rest = whole.get(kept.len()..).unwrap_or_default();
                match self.replace {
                    _ if already_redacted(rest) => whole.to_string(),
                    Replace::AfterKind(kind) => format!("{kept}[redacted:{kind}]"),
                    _ => format!("{kept}{REDACTED}"),
                }
            }
            Replace::With(f) => f(caps),
        }
    }
}

/// Secret-looking names, as they appear in `name=value`, `--name value` and headers.
const NAME: &str = r"(?:password|passwd|passphrase|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|credential)";

pub(super) fn group<'a>(caps: &'a Captures<'_>, i: usize) -> &'a str {
    caps.get(i).map_or("", |m| m.as_str())
}

pub(super) fn already_redacted(value: &str) -> bool {
    value.trim_matches(|c| c == '"' || c == '\'').starts_with("[redacted")
}

/// A numeric value after a name about token *counts* (`max_tokens: 4096`) is not a secret.
fn is_token_count(name: &str, value: &str) -> bool {
    let name = name.to_ascii_lowercase();
    (name.contains("tokens") || name.contains("token_count") || name.contains("tokencount"))
        && value.chars().all(|c| c.is_ascii_digit())
}

/// Whether `value` looks like a random token: letters and digits mixed, not all one case of
/// hex (a hash names content, not a secret), and at least 3.5 bits of entropy per character.
pub(super) fn looks_random(value: &str) -> bool {
    let has = |f: fn(&char) -> bool| value.chars().any(|c| f(&c));
    if !(has(char::is_ascii_digit) && has(char::is_ascii_alphabetic)) || already_redacted(value) {
        return false;
    }
    let hex = value.chars().all(|c| c.is_ascii_hexdigit());
    if hex && (value.len() == 40 || value.len() == 64) && !has(char::is_ascii_uppercase) {
        return false;
    }
    let mut counts = [0u32; 256];
    for b in value.bytes() {
        counts[usize::from(b)] += 1;
    }
    let len = value.len() as f64;
    let entropy: f64 = counts.iter().filter(|&&n| n > 0).map(|&n| f64::from(n) / len).map(|p| -p * p.log2()).sum();
    entropy >= 3.5
}

/// The generic shapes: what no vendor or command names, told by a name or a header.
fn generic() -> Vec<Shape> {
    use Replace::{After, With};
    // Starts at the secret-looking word (the rest of the name before it is kept as it is), so
    // the regex engine can skip ahead to it; the value may be quoted, or quoted with escaped
    // quotes (`\"token\": \"…\"` in JSON inside a string).
    let name_assign = format!(
        r#"(?i)({NAME}[A-Za-z0-9_.-]*)(\\?["']?\s*[:=]\s*)(\\"[^"\n]*?\\"|"[^"\n]*"|'[^'\n]*'|[^\s&;,"'<>(){{}}\[\]]+)"#
    );
    let name_flag =
        format!(r#"(?i)(--?[A-Za-z0-9_-]*{NAME}[A-Za-z0-9_-]*)(\s+)("[^"\n]*"|'[^'\n]*'|[^\s"'-][^\s"']*)"#);
    vec![
        // Azure storage and service bus connection strings.
        shape(r"(?i)\b((?:AccountKey|SharedAccessKey)\s*=\s*)([A-Za-z0-9+/]{20,}={0,2})", After),
        // Credentials in a URL: scheme://user:password@host (the user may be empty: redis://:pw@).
        shape(r#"\b([A-Za-z][A-Za-z0-9+.-]*://)[^/\s:@"'<>]*:[^/\s@"'<>]+@"#, With(|c| format!("{}{REDACTED}@", group(c, 1)))),
        // Authorization headers, whatever the scheme.
        shape(
            r#"(?i)\b((?:proxy-)?authorization["']?\s*[:=]\s*["']?)((?:bearer|basic|digest|token|bot|apikey|negotiate|ntlm)\s+)?([^\s"',;]+)"#,
            With(|c| {
                let value = group(c, 3);
                let value = if already_redacted(value) { value } else { REDACTED };
                format!("{}{}{value}", group(c, 1), group(c, 2))
            }),
        ),
        shape(r"(?i)\b(bearer\s+)([A-Za-z0-9._~+/=-]{8,})", After),
        // `Basic` is an English word: only a base64-looking credential after it is one.
        shape(r"(?i)\b(basic\s+)([A-Za-z0-9+/]{8,}={0,2})", With(|c| {
            let value = group(c, 2);
            let tail = value.get(1..).unwrap_or("");
            let looks_encoded = value.contains(|ch: char| ch.is_ascii_digit() || "+/=".contains(ch))
                || (tail.contains(|ch: char| ch.is_ascii_uppercase())
                    && tail.contains(|ch: char| ch.is_ascii_lowercase()));
            if looks_encoded { format!("{}{REDACTED}", group(c, 1)) } else { group(c, 0).to_string() }
        })),
        shape(r#"(?i)\b((?:set-)?cookie["']?\s*[:=]\s*)("[^"\n]*"|'[^'\n]*'|[^\n"']+)"#, With(|c| {
            format!("{}{REDACTED}", group(c, 1))
        })),
    ]
    .into_iter()
    .chain(keys::aws_secret())
    .chain([
        // `DB_PASS=…`, `MYSQL_PWD=…`, `pass: …`: names ending in a password word.
        shape(r#"(?i)\b((?:[A-Za-z0-9]+_)*(?:pass|pwd|pw|passwd))(\s*[:=]\s*)("[^"\n]*"|'[^'\n]*'|[^\s&;,"'<>(){}\[\]]+)"#, With(|c| {
            let (name, value) = (group(c, 1), group(c, 3));
            if name.eq_ignore_ascii_case("pwd") || already_redacted(value) {
                group(c, 0).to_string()
            } else {
                format!("{name}{}{REDACTED}", group(c, 2))
            }
        })),
        shape(name_flag, With(|c| {
            let value = group(c, 3);
            if already_redacted(value) {
                group(c, 0).to_string()
            } else {
                format!("{}{}{REDACTED}", group(c, 1), group(c, 2))
            }
        })),
        // A long random-looking value after any key-like name (`DEPLOY_KEY=…`, `x-api-sig: …`,
        // `signing_salt "…"`): what no vendor shape names, told by its entropy.
        shape(
            r#"(?i)\b([A-Za-z0-9_.-]*(?:key|secret|token|auth|cred|sig|salt|seed|pass)[A-Za-z0-9_.-]*)(\\?["']?\s*[:=]?\s*\\?["']?)([A-Za-z0-9+/_.=-]{20,})"#,
            With(|c| {
                let value = group(c, 3);
                if looks_random(value) && !group(c, 2).is_empty() {
                    format!("{}{}[redacted:high-entropy]", group(c, 1), group(c, 2))
                } else {
                    group(c, 0).to_string()
                }
            }),
        ),
        shape(name_assign, With(|c| {
            let (name, value) = (group(c, 1), group(c, 3));
            if already_redacted(value) || is_token_count(name, value) {
                group(c, 0).to_string()
            } else {
                format!("{name}{}{REDACTED}", group(c, 2))
            }
        })),
    ])
    .collect()
}

/// Every shape, in the order they run: the PEM block, the vendors' tokens, other key material,
/// command lines, then the generic shapes.
fn shapes() -> Vec<Shape> {
    keys::leading()
        .into_iter()
        .chain(vendors::shapes())
        .chain(keys::material())
        .chain(commands::shapes())
        .chain(generic())
        .collect()
}

static PATTERNS: LazyLock<Vec<Pattern>> = LazyLock::new(|| {
    shapes()
        .into_iter()
        .map(|shape| Pattern { source: shape.regex, regex: std::sync::OnceLock::new(), replace: shape.replace })
        .collect()
});

/// Every pattern at once: one pass tells which patterns can match at all, so most strings
/// (no secret in them) cost one scan instead of one per pattern.
static PREFILTER: LazyLock<Option<RegexSet>> = LazyLock::new(|| {
    RegexSet::new(PATTERNS.iter().map(|p| p.source.as_str()))
        .inspect_err(|e| tracing::error!("audit sanitiser: no prefilter, every pattern runs: {e}"))
        .ok()
});

/// Replaces every secret-shaped value in `text`; borrows when there is none.
pub fn redact(text: &str) -> Cow<'_, str> {
    let hits = PREFILTER.as_ref().map(|set| set.matches(text));
    let mut out = Cow::Borrowed(text);
    for (i, p) in PATTERNS.iter().enumerate() {
        // A replacement only swaps a secret for a `[redacted…]` marker, which no pattern
        // matches, so a pattern that found nothing in the original finds nothing later either.
        if hits.as_ref().is_some_and(|hits| !hits.matched(i)) {
            continue;
        }
        let Some(regex) = p.regex() else { continue };
        let replaced = match regex.replace_all(&out, |caps: &Captures<'_>| p.replacement(caps)) {
            Cow::Owned(replaced) => Some(replaced),
            Cow::Borrowed(_) => None,
        };
        if let Some(replaced) = replaced {
            out = Cow::Owned(replaced);
        }
    }
    out
}

/// How many shapes there are, and how many compiled (the tests check it is all of them).
#[cfg(test)]
pub fn compiled() -> (usize, usize) {
    (shapes().len(), PATTERNS.iter().filter(|p| p.regex().is_some()).count())
}
