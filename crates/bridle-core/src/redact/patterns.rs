//! The secret shapes recognised inside any string, each a regex compiled once with the text
//! that replaces a match.
//!
//! Rule: when in doubt, redact — a false positive costs a few characters of an audit row, a
//! false negative puts a credential on disk for good. Vendor-shaped tokens are replaced before
//! the generic `key=value` rules so their marker names what was there.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::{Captures, Regex, RegexSet};

/// What replaces a value found under a secret-looking key or after a secret-looking name.
pub const REDACTED: &str = "[redacted]";

/// One secret shape.
struct Pattern {
    regex: Regex,
    replace: fn(&Captures<'_>) -> String,
}

/// Secret-looking names, as they appear in `name=value`, `--name value` and headers.
const NAME: &str = r"(?:password|passwd|passphrase|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|credential)";

fn pattern(regex: &str, replace: fn(&Captures<'_>) -> String) -> Option<Pattern> {
    match Regex::new(regex) {
        Ok(regex) => Some(Pattern { regex, replace }),
        Err(e) => {
            // Only reachable if a literal below is edited into an invalid regex; the unit
            // tests compile every pattern, so this never ships.
            tracing::error!("audit sanitiser: invalid pattern {regex}: {e}");
            None
        }
    }
}

fn group<'a>(caps: &'a Captures<'_>, i: usize) -> &'a str {
    caps.get(i).map_or("", |m| m.as_str())
}

fn already_redacted(value: &str) -> bool {
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

fn vendor_key(caps: &Captures<'_>) -> String {
    if group(caps, 0).starts_with("sk-ant-") { "[redacted:anthropic-key]" } else { "[redacted:openai-key]" }.into()
}

/// The password of `htpasswd -b` is its last operand (third, or second with `-n`).
fn htpasswd(caps: &Captures<'_>) -> String {
    let whole = group(caps, 0);
    let flags: String = whole.split_whitespace().filter(|w| w.starts_with('-')).collect();
    let operands: Vec<&str> = whole.split_whitespace().skip(1).filter(|w| !w.starts_with('-')).collect();
    let at = if flags.contains('n') { 1 } else { 2 };
    match operands.get(at) {
        Some(password) if flags.contains('b') && operands.len() == at + 1 => {
            let cut = whole.len() - password.len();
            format!("{}{REDACTED}", &whole[..cut])
        }
        _ => whole.to_string(),
    }
}

static PATTERNS: LazyLock<Vec<Pattern>> = LazyLock::new(|| {
    // Starts at the secret-looking word (the rest of the name before it is kept as it is), so
    // the regex engine can skip ahead to it; the value may be quoted, or quoted with escaped
    // quotes (`\"token\": \"…\"` in JSON inside a string).
    let name_assign = format!(
        r#"(?i)({NAME}[A-Za-z0-9_.-]*)(\\?["']?\s*[:=]\s*)(\\"[^"\n]*?\\"|"[^"\n]*"|'[^'\n]*'|[^\s&;,"'<>(){{}}\[\]]+)"#
    );
    let name_flag =
        format!(r#"(?i)(--?[A-Za-z0-9_-]*{NAME}[A-Za-z0-9_-]*)(\s+)("[^"\n]*"|'[^'\n]*'|[^\s"'-][^\s"']*)"#);
    [
        // PEM private keys: the whole block, or everything after BEGIN when the END was cut off.
        pattern(
            r"-{3,}\s*BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-*(?s:.*?)(?:-{3,}\s*END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-*|\z)",
            |_| "[redacted:private-key]".into(),
        ),
        pattern(r"eyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*", |_| "[redacted:jwt]".into()),
        pattern(r"\bsk-[A-Za-z0-9_-]{20,}", vendor_key),
        // Glued to a word (`…xsk-…`): only when it looks random, so `task-management-…` stays.
        pattern(r"sk-[A-Za-z0-9_-]{20,}", |c| {
            let key = group(c, 0);
            let random = key.contains(|ch: char| ch.is_ascii_uppercase()) && key.contains(|ch: char| ch.is_ascii_digit());
            if random { vendor_key(c) } else { key.to_string() }
        }),
        pattern(r"gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}", |_| "[redacted:github-token]".into()),
        pattern(r"xox[abposre]-[A-Za-z0-9-]{8,}|\bxapp-[A-Za-z0-9-]{8,}", |_| "[redacted:slack-token]".into()),
        pattern(r"(?i)\bhttps?://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]+", |_| {
            "https://hooks.slack.com/[redacted:slack-webhook]".into()
        }),
        // Webhook URLs: whoever holds one can post as the integration.
        pattern(r"(?i)\bhttps?://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]+", |_| {
            "[redacted:discord-webhook]".into()
        }),
        pattern(r#"(?i)\bhttps://[a-z0-9-]+\.webhook\.office\.com/webhookb2/[^\s"'<>]+"#, |_| "[redacted:teams-webhook]".into()),
        pattern(r#"(?i)\bhttps://[a-z0-9-]+\.logic\.azure\.com[^\s"'<>]*sig=[^\s"'<>&]+"#, |_| {
            "[redacted:teams-webhook]".into()
        }),
        pattern(r"(?i)\bhttps://hooks\.zapier\.com/hooks/catch/\d+/[A-Za-z0-9]+/?", |_| "[redacted:zapier-webhook]".into()),
        pattern(r"(?i)\bhttps://maker\.ifttt\.com/trigger/[^\s/]+/with/key/[A-Za-z0-9_-]+", |_| {
            "[redacted:ifttt-webhook]".into()
        }),
        pattern(r#"(?i)\bhttps?://[^\s/"'<>]+/hooks/[a-z0-9]{26}\b"#, |_| "[redacted:mattermost-webhook]".into()),
        // Twilio: an account SID's auth token beside it (its API keys are a gitleaks rule).
        pattern(r"\b(AC[0-9a-fA-F]{32})([:\s,]+)([0-9a-fA-F]{32})\b", |c| {
            format!("{}{}[redacted:twilio-auth-token]", group(c, 1), group(c, 2))
        }),
        pattern(r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}|\bwhsec_[A-Za-z0-9]{16,}", |_| {
            "[redacted:stripe-key]".into()
        }),
        pattern(r"AIza[0-9A-Za-z_-]{35,}", |_| "[redacted:google-key]".into()),
        pattern(r"\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}", |_| "[redacted:sendgrid-key]".into()),
        pattern(r"\bgl(?:pat|dt|rt|ptt|ft|soat|imt|agent|cbt)-[A-Za-z0-9_-]{20,}", |_| "[redacted:gitlab-token]".into()),
        pattern(r"\bnpm_[A-Za-z0-9]{36,}", |_| "[redacted:npm-token]".into()),
        pattern(r"\bgsk_[A-Za-z0-9]{40,}", |_| "[redacted:groq-key]".into()),
        pattern(r"\br8_[A-Za-z0-9]{30,}", |_| "[redacted:replicate-token]".into()),
        pattern(r"\bxai-[A-Za-z0-9]{60,}", |_| "[redacted:xai-key]".into()),
        pattern(r"\bnvapi-[A-Za-z0-9_-]{40,}", |_| "[redacted:nvidia-key]".into()),
        pattern(r"\blsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}", |_| "[redacted:langsmith-key]".into()),
        pattern(r"\btvly-(?:dev-|prod-)?[A-Za-z0-9]{20,}", |_| "[redacted:tavily-key]".into()),
        pattern(r"\bya29\.[A-Za-z0-9_-]{20,}", |_| "[redacted:google-oauth-token]".into()),
        pattern(r"\bGOCSPX-[A-Za-z0-9_-]{20,}", |_| "[redacted:google-oauth-secret]".into()),
        // A Discord bot token (user id, timestamp, HMAC) and a Telegram bot token, bare.
        pattern(r"\b[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}\b", |c| {
            let token = group(c, 0);
            let mixed = token.contains(|ch: char| ch.is_ascii_digit()) && token.contains(|ch: char| ch.is_ascii_lowercase());
            if mixed { "[redacted:discord-bot-token]".into() } else { token.to_string() }
        }),
        pattern(r"\b\d{8,10}:AA[A-Za-z0-9_-]{33}\b", |_| "[redacted:telegram-bot-token]".into()),
        // AWS session tokens (their base64 opens on the same bytes), whatever name they are under.
        pattern(r"\b(?:IQoJb3JpZ2luX2Vj|FwoGZXIvYXdzE)[A-Za-z0-9/+=]{40,}", |_| "[redacted:aws-session-token]".into()),
        // A PEM body without its BEGIN line: lines of base64 opening on a DER sequence (`MII`).
        pattern(r"\bMII[A-Za-z0-9+/]{60,}(?:\s*[A-Za-z0-9+/]{16,}){2,}={0,2}", |_| "[redacted:private-key]".into()),
        // A wallet's recovery phrase: 12 to 24 lowercase words after a word that names one.
        pattern(r"(?i)\b((?:mnemonic|seed phrase|seed words|recovery phrase|secret recovery phrase|seed)\b[^A-Za-z\n]{0,12})((?-i:[a-z]{3,8})(?:\s+(?-i:[a-z]{3,8})){11,23})\b", |c| {
            format!("{}[redacted:seed-phrase]", group(c, 1))
        }),
        // `redis-cli -a PASSWORD` (and `--pass`).
        pattern(r"\b(redis-cli\b[^\n|;&]*?\s(?:-a|--pass)\s+)([^\s-]\S*)", |c| format!("{}{REDACTED}", group(c, 1))),

        pattern(r"\bhf_[A-Za-z0-9]{30,}", |_| "[redacted:huggingface-token]".into()),
        // Azure storage and service bus connection strings.
        pattern(r"(?i)\b((?:AccountKey|SharedAccessKey)\s*=\s*)([A-Za-z0-9+/]{20,}={0,2})", |c| {
            format!("{}{REDACTED}", group(c, 1))
        }),
        pattern(r"(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|AROA|APKA|ASCA)[A-Z0-9]{16}", |_| {
            "[redacted:aws-key-id]".into()
        }),
        // Credentials in a URL: scheme://user:password@host (the user may be empty: redis://:pw@).
        pattern(r#"\b([A-Za-z][A-Za-z0-9+.-]*://)[^/\s:@"'<>]*:[^/\s@"'<>]+@"#, |c| {
            format!("{}{REDACTED}@", group(c, 1))
        }),
        // Authorization headers, whatever the scheme.
        pattern(
            r#"(?i)\b((?:proxy-)?authorization["']?\s*[:=]\s*["']?)((?:bearer|basic|digest|token|bot|apikey|negotiate|ntlm)\s+)?([^\s"',;]+)"#,
            |c| {
                let value = group(c, 3);
                let value = if already_redacted(value) { value } else { REDACTED };
                format!("{}{}{value}", group(c, 1), group(c, 2))
            },
        ),
        pattern(r"(?i)\b(bearer\s+)([A-Za-z0-9._~+/=-]{8,})", |c| format!("{}{REDACTED}", group(c, 1))),
        // `Basic` is an English word: only a base64-looking credential after it is one.
        pattern(r"(?i)\b(basic\s+)([A-Za-z0-9+/]{8,}={0,2})", |c| {
            let value = group(c, 2);
            let tail = value.get(1..).unwrap_or("");
            let looks_encoded = value.contains(|ch: char| ch.is_ascii_digit() || "+/=".contains(ch))
                || (tail.contains(|ch: char| ch.is_ascii_uppercase())
                    && tail.contains(|ch: char| ch.is_ascii_lowercase()));
            if looks_encoded { format!("{}{REDACTED}", group(c, 1)) } else { group(c, 0).to_string() }
        }),
        pattern(r#"(?i)\b((?:set-)?cookie["']?\s*[:=]\s*)("[^"\n]*"|'[^'\n]*'|[^\n"']+)"#, |c| {
            format!("{}{REDACTED}", group(c, 1))
        }),
        // `aws configure set aws_secret_access_key X` (and the session token).
        pattern(r"(?i)\b(aws\s+configure\s+set\s+(?:[A-Za-z0-9_.-]+\.)?aws_(?:secret_access_key|session_token)\s+)(\S+)", |c| {
            format!("{}{REDACTED}", group(c, 1))
        }),
        // `docker login -p X`, `podman login --password X`, `helm registry login -p X`.
        pattern(r"\b((?:docker|podman|buildah|skopeo|nerdctl|helm\s+registry|oras)\s+login\b[^\n|;&]*?\s-p\s*)([^\s-]\S*)", |c| {
            format!("{}{REDACTED}", group(c, 1))
        }),
        // `htpasswd -b[c] FILE USER PASSWORD`, `htpasswd -nb USER PASSWORD`.
        pattern(r"\bhtpasswd(?:\s+-[A-Za-z]+)+(?:\s+[^\s-]\S*){2,3}", htpasswd),
        // A bare AWS secret access key: 40 characters of base64 with upper, lower and a digit
        // or `/`/`+` (a git hash is lower-case hex, so it never matches).
        pattern(r"(?:^|[^A-Za-z0-9/+=])([A-Za-z0-9/+]{40})(?:$|[^A-Za-z0-9/+=])", |c| {
            let whole = group(c, 0);
            let key = group(c, 1);
            let mixed = key.contains(|ch: char| ch.is_ascii_uppercase())
                && key.contains(|ch: char| ch.is_ascii_lowercase())
                && key.contains(|ch: char| ch.is_ascii_digit() || ch == '/' || ch == '+');
            if mixed && !key.contains("redacted") { whole.replacen(key, "[redacted:aws-secret]", 1) } else { whole.to_string() }
        }),
        // `DB_PASS=…`, `MYSQL_PWD=…`, `pass: …`: names ending in a password word.
        pattern(r#"(?i)\b((?:[A-Za-z0-9]+_)*(?:pass|pwd|pw|passwd))(\s*[:=]\s*)("[^"\n]*"|'[^'\n]*'|[^\s&;,"'<>(){}\[\]]+)"#, |c| {
            let (name, value) = (group(c, 1), group(c, 3));
            if name.eq_ignore_ascii_case("pwd") || already_redacted(value) {
                group(c, 0).to_string()
            } else {
                format!("{name}{}{REDACTED}", group(c, 2))
            }
        }),
        pattern(r#"\b(sshpass\s+-p\s*)("[^"\n]*"|'[^'\n]*'|\S+)"#, |c| format!("{}{REDACTED}", group(c, 1))),
        pattern(r"\b((?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n|;&]*?\s-p)([^\s-]\S*)", |c| {
            format!("{}{REDACTED}", group(c, 1))
        }),
        // curl -u user:password, --user user:password
        pattern(r#"(\s-u\s*|--user[\s=]+)(["']?[^\s:"']+):([^\s"']+)"#, |c| {
            format!("{}{}:{REDACTED}", group(c, 1), group(c, 2))
        }),
        pattern(&name_flag, |c| {
            let value = group(c, 3);
            if already_redacted(value) {
                group(c, 0).to_string()
            } else {
                format!("{}{}{REDACTED}", group(c, 1), group(c, 2))
            }
        }),
        // A long random-looking value after any key-like name (`DEPLOY_KEY=…`, `x-api-sig: …`,
        // `signing_salt "…"`): what no vendor shape names, told by its entropy.
        pattern(
            r#"(?i)\b([A-Za-z0-9_.-]*(?:key|secret|token|auth|cred|sig|salt|seed|pass)[A-Za-z0-9_.-]*)(\\?["']?\s*[:=]?\s*\\?["']?)([A-Za-z0-9+/_.=-]{20,})"#,
            |c| {
                let value = group(c, 3);
                if looks_random(value) && !group(c, 2).is_empty() {
                    format!("{}{}[redacted:high-entropy]", group(c, 1), group(c, 2))
                } else {
                    group(c, 0).to_string()
                }
            },
        ),
        pattern(&name_assign, |c| {
            let (name, value) = (group(c, 1), group(c, 3));
            if already_redacted(value) || is_token_count(name, value) {
                group(c, 0).to_string()
            } else {
                format!("{name}{}{REDACTED}", group(c, 2))
            }
        }),
    ]
    .into_iter()
    .flatten()
    .collect()
});

/// Every pattern at once: one pass tells which patterns can match at all, so most strings
/// (no secret in them) cost one scan instead of one per pattern.
static PREFILTER: LazyLock<Option<RegexSet>> = LazyLock::new(|| {
    RegexSet::new(PATTERNS.iter().map(|p| p.regex.as_str()))
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
        let replaced = match p.regex.replace_all(&out, p.replace) {
            Cow::Owned(replaced) => Some(replaced),
            Cow::Borrowed(_) => None,
        };
        if let Some(replaced) = replaced {
            out = Cow::Owned(replaced);
        }
    }
    out
}

/// How many patterns compiled (the tests check it is all of them).
#[cfg(test)]
pub fn compiled() -> usize {
    PATTERNS.len()
}
