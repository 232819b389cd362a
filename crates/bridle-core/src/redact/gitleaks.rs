//! The gitleaks rule set as data ([`gitleaks.toml`](./gitleaks.toml)): a maintained list of
//! secret shapes, each with an id, applied after Bridle's own shapes ([`super::patterns`]).
//!
//! Rules: a rule runs only on text holding one of its keywords (one scan finds which); its secret
//! is the rule's secret group, else the first group that matched, else the whole match; a secret
//! below the rule's entropy, or allowed by the rule's or the global allowlist (regexes and
//! stopwords on the secret), is left alone; every other is replaced by
//! `[redacted:gitleaks:<id>]`, so the audit keeps which rule fired. A rule's regex is compiled the
//! first time text holds one of its keywords (compiling all of them costs seconds); one this
//! engine cannot compile is skipped, never a panic.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::bytes::{Regex, RegexBuilder};
use serde::Deserialize;

const SOURCE: &str = include_str!("gitleaks.toml");

#[derive(Deserialize)]
struct File {
    #[serde(default)]
    allowlist: Option<Allow>,
    #[serde(default)]
    rules: Vec<RuleSpec>,
}

#[derive(Deserialize, Default)]
struct Allow {
    #[serde(default)]
    regexes: Vec<String>,
    #[serde(default)]
    stopwords: Vec<String>,
    #[serde(default, rename = "regexTarget")]
    regex_target: Option<String>,
    #[serde(default)]
    paths: Vec<String>,
}

#[derive(Deserialize)]
struct RuleSpec {
    id: String,
    #[serde(default)]
    regex: Option<String>,
    #[serde(default, rename = "secretGroup")]
    secret_group: Option<usize>,
    #[serde(default)]
    entropy: Option<f64>,
    #[serde(default)]
    keywords: Vec<String>,
    #[serde(default)]
    allowlists: Vec<Allow>,
}

/// An allowlist, compiled: a secret (or the whole match, when it targets the match) it names is
/// not one.
struct Allowed {
    regexes: Vec<Regex>,
    stopwords: Vec<String>,
    on_match: bool,
}

impl Allowed {
    fn new(allow: &Allow) -> Option<Self> {
        // Allowlists by path only concern files gitleaks scans; text here has no path.
        if allow.regexes.is_empty() && allow.stopwords.is_empty() && !allow.paths.is_empty() {
            return None;
        }
        Some(Self {
            regexes: allow.regexes.iter().filter_map(|r| compile(r)).collect(),
            stopwords: allow.stopwords.iter().map(|s| s.to_lowercase()).collect(),
            on_match: allow.regex_target.as_deref() == Some("match"),
        })
    }

    fn allows(&self, secret: &str, whole: &str) -> bool {
        let target = if self.on_match { whole } else { secret };
        let lower = secret.to_lowercase();
        self.regexes.iter().any(|r| r.is_match(target.as_bytes()))
            || self.stopwords.iter().any(|w| lower.contains(w.as_str()))
    }
}

struct Rule {
    id: String,
    source: String,
    regex: std::sync::OnceLock<Option<Regex>>,
    secret_group: Option<usize>,
    entropy: Option<f64>,
    keywords: Vec<String>,
    allowed: Vec<Allowed>,
}

struct Rules {
    rules: Vec<Rule>,
    global: Option<Allowed>,
}

impl Rule {
    /// The compiled regex (compiled at the first need), `None` if it cannot be.
    fn regex(&self) -> Option<&Regex> {
        self.regex
            .get_or_init(|| {
                let compiled = compile(&self.source);
                if compiled.is_none() {
                    tracing::warn!("audit sanitiser: gitleaks rule {} does not compile here", self.id);
                }
                compiled
            })
            .as_ref()
    }
}

/// Compiled as gitleaks (Go's RE2) reads it: `\\w`, `\\d`, `\\s` and case folding over ASCII, which
/// also keeps the automata small (Unicode classes made them take seconds to compile).
fn compile(regex: &str) -> Option<Regex> {
    RegexBuilder::new(regex).unicode(false).size_limit(64 << 20).dfa_size_limit(64 << 20).build().ok()
}

static RULES: LazyLock<Rules> = LazyLock::new(|| {
    let file: File = match toml::from_str(SOURCE) {
        Ok(file) => file,
        Err(e) => {
            tracing::error!("audit sanitiser: the gitleaks rules cannot be read: {e}");
            return Rules { rules: Vec::new(), global: None };
        }
    };
    let rules = file
        .rules
        .into_iter()
        .filter_map(|spec| {
            Some(Rule {
                source: spec.regex?,
                regex: std::sync::OnceLock::new(),
                id: spec.id,
                secret_group: spec.secret_group,
                entropy: spec.entropy,
                keywords: spec.keywords.iter().map(|k| k.to_lowercase()).collect(),
                allowed: spec.allowlists.iter().filter_map(Allowed::new).collect(),
            })
        })
        .collect();
    Rules { rules, global: file.allowlist.as_ref().and_then(Allowed::new) }
});

/// `start..end` widened to character boundaries of `text`.
fn widen(text: &str, mut start: usize, mut end: usize) -> (usize, usize) {
    while start > 0 && !text.is_char_boundary(start) {
        start -= 1;
    }
    while end < text.len() && !text.is_char_boundary(end) {
        end += 1;
    }
    (start, end)
}

/// Shannon entropy of `s`, in bits per character.
fn entropy(s: &str) -> f64 {
    let mut counts = std::collections::HashMap::new();
    for c in s.chars() {
        *counts.entry(c).or_insert(0usize) += 1;
    }
    let n = s.chars().count() as f64;
    counts.values().map(|&c| c as f64 / n).map(|p| -p * p.log2()).sum()
}

/// Replaces every secret a gitleaks rule finds in `text`; borrows when there is none.
pub fn redact(text: &str) -> Cow<'_, str> {
    let rules = &*RULES;
    let mut out = Cow::Borrowed(text);
    let mut lower = text.to_lowercase();
    for rule in &rules.rules {
        if !rule.keywords.is_empty() && !rule.keywords.iter().any(|k| lower.contains(k.as_str())) {
            continue;
        }
        let Some(regex) = rule.regex() else { continue };
        let mut spans: Vec<(usize, usize)> = Vec::new();
        for caps in regex.captures_iter(out.as_bytes()) {
            let Some(whole) = caps.get(0) else { continue };
            let secret = match rule.secret_group {
                Some(i) => caps.get(i),
                None => (1..caps.len()).find_map(|i| caps.get(i)).or(Some(whole)),
            };
            let Some(secret) = secret else { continue };
            // Byte classes can end inside a character: a span that does is widened to whole ones.
            let (start, end) = widen(&out, secret.start(), secret.end());
            let Some(value) = out.get(start..end) else { continue };
            let whole = out.get(whole.start()..whole.end()).unwrap_or(value);
            if value.is_empty() || value.starts_with("[redacted") || spans.last().is_some_and(|&(_, e)| start < e) {
                continue;
            }
            if rule.entropy.is_some_and(|min| entropy(value) < min) {
                continue;
            }
            let allowed = rule.allowed.iter().chain(rules.global.iter()).any(|a| a.allows(value, whole));
            if !allowed {
                spans.push((start, end));
            }
        }
        if spans.is_empty() {
            continue;
        }
        let marker = format!("[redacted:gitleaks:{}]", rule.id);
        let mut replaced = String::with_capacity(out.len());
        let mut at = 0;
        for (start, end) in spans {
            replaced.push_str(&out[at..start]);
            replaced.push_str(&marker);
            at = end;
        }
        replaced.push_str(&out[at..]);
        lower = replaced.to_lowercase();
        out = Cow::Owned(replaced);
    }
    out
}

/// How many rules there are, and how many this regex engine cannot compile (compiles them all).
#[cfg(test)]
pub fn counts() -> (usize, usize) {
    let rules = &RULES.rules;
    (rules.len(), rules.iter().filter(|r| r.regex().is_none()).count())
}
