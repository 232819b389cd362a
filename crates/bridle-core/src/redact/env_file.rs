//! Files of `NAME=value` credentials (`.env`, `.envrc`, `.npmrc`, `.pypirc`, AWS `credentials`,
//! `.netrc`, `.pgpass`, `.git-credentials`, ...): when a tool of Bridle reads one, the values under its
//! secret-looking names become known secrets ([`super::known`]).
//!
//! Rule: a file counts by its name alone, never by its content; a line counts when it reads as
//! an assignment (`NAME=value`, `export NAME="value"`, `name: value`, an INI `name = value`), and
//! its value is remembered when [`super::remember_named`] finds the name or the value secret. A
//! value that only names another variable (`$DB_PASSWORD`, `${TOKEN}`) is not a secret.

use std::path::Path;

/// Exact file names that hold credentials as assignments.
const NAMES: &[&str] =
    &[".env", ".envrc", ".flaskenv", ".dev.vars", ".npmrc", ".yarnrc", ".pypirc", "credentials", "pip.conf"];
/// Suffixes of such names (`prod.env`, `gradle.properties`, `terraform.tfvars`).
const SUFFIXES: &[&str] = &[".env", ".properties", ".tfvars"];

/// How a file lays its secrets out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layout {
    /// `NAME=value` lines (and INI, and `name: value`).
    Assignments,
    /// `.netrc`: `machine M login L password P`, words anywhere.
    Netrc,
    /// `.pgpass`: `host:port:database:user:password`.
    Pgpass,
    /// `.git-credentials`: `https://user:password@host` a line.
    Urls,
}

fn layout(path: &str) -> Option<Layout> {
    let name = Path::new(path).file_name()?.to_str()?;
    match name {
        ".netrc" | "_netrc" => Some(Layout::Netrc),
        ".pgpass" => Some(Layout::Pgpass),
        ".git-credentials" => Some(Layout::Urls),
        _ if NAMES.contains(&name) || name.starts_with(".env.") || SUFFIXES.iter().any(|s| name.ends_with(s)) => {
            Some(Layout::Assignments)
        }
        _ => None,
    }
}

/// Whether a file at `path` is read as a file of credentials.
pub fn is_env_file(path: &str) -> bool {
    layout(path).is_some()
}

/// Remembers the secret values `text` (some or all of the lines of the file at `path`) holds, if
/// the file is one of credentials; each line is read on its own.
pub fn learn(path: &str, text: &str) {
    let Some(layout) = layout(path) else { return };
    match layout {
        Layout::Assignments => super::remember_named(text.lines().filter_map(assignment)),
        Layout::Urls => super::known::remember(text.split_whitespace().filter_map(super::url_password)),
        Layout::Netrc => {
            let words: Vec<&str> = text.split_whitespace().collect();
            let passwords = words.windows(2).filter(|w| matches!(w[0], "password" | "passwd")).map(|w| w[1]);
            super::known::remember(passwords);
        }
        Layout::Pgpass => {
            let passwords = text.lines().filter(|l| !l.trim_start().starts_with('#')).filter_map(pgpass_password);
            super::known::remember(passwords);
        }
    }
}

/// The name and value of an assignment line, the value unquoted (and unescaped, for double
/// quotes) and without a trailing comment.
fn assignment(line: &str) -> Option<(&str, String)> {
    let line = line.trim();
    if line.is_empty() || line.starts_with(['#', ';', '[']) {
        return None;
    }
    let line = line.strip_prefix("export ").map_or(line, str::trim_start);
    // `.npmrc` names hold a `:` (`//registry.npmjs.org/:_authToken=…`): `=` splits first.
    let at = line.find('=').or_else(|| line.find(':'))?;
    let (name, value) = (line[..at].trim(), line[at + 1..].trim());
    if name.is_empty() || name.contains(char::is_whitespace) {
        return None;
    }
    let value = unquote(value);
    let is_reference = value.strip_prefix('$').is_some_and(|rest| {
        let rest = rest.strip_prefix('{').and_then(|r| r.strip_suffix('}')).unwrap_or(rest);
        !rest.is_empty() && rest.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    });
    (!is_reference).then_some((name, value))
}

fn unquote(value: &str) -> String {
    for quote in ['"', '\''] {
        if let Some(inner) = value.strip_prefix(quote) {
            let end = inner.find(quote).unwrap_or(inner.len());
            let inner = &inner[..end];
            return if quote == '"' { inner.replace("\\\\", "\\").replace("\\$", "$") } else { inner.to_string() };
        }
    }
    // An unquoted value ends at a comment.
    value.split(" #").next().unwrap_or(value).trim().to_string()
}

/// The password field of a `.pgpass` line (`\:` escapes a colon).
fn pgpass_password(line: &str) -> Option<String> {
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut chars = line.trim_end().chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => field.extend(chars.next()),
            ':' => fields.push(std::mem::take(&mut field)),
            _ => field.push(c),
        }
    }
    fields.push(field);
    (fields.len() == 5).then(|| fields.pop()).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credential_files_are_known_by_name() {
        for path in [
            ".env",
            "app/.env.production",
            "prod.env",
            ".envrc",
            "/home/u/.npmrc",
            ".pypirc",
            "aws/credentials",
            ".netrc",
            ".pgpass",
            ".git-credentials",
            "gradle.properties",
            "infra/terraform.tfvars",
        ] {
            assert!(is_env_file(path), "{path}");
        }
        for path in ["environment.rs", ".envelope", "src/env.rs", "credentials.md", "README.env.md", "envfile"] {
            assert!(!is_env_file(path), "{path}");
        }
    }

    #[test]
    fn assignments_are_read_in_every_spelling() {
        let cases = [
            ("API_TOKEN=abc123def456", Some(("API_TOKEN", "abc123def456"))),
            ("export DB_PASSWORD=\"two words # not a comment\"", Some(("DB_PASSWORD", "two words # not a comment"))),
            ("SECRET_KEY='s3cr3t-value' # rotate monthly", Some(("SECRET_KEY", "s3cr3t-value"))),
            ("TOKEN=plain-value # a comment", Some(("TOKEN", "plain-value"))),
            ("//registry.npmjs.org/:_authToken=npm_abc", Some(("//registry.npmjs.org/:_authToken", "npm_abc"))),
            ("password: hunter2hunter2", Some(("password", "hunter2hunter2"))),
            ("aws_secret_access_key = wJalrXUtnFEMI", Some(("aws_secret_access_key", "wJalrXUtnFEMI"))),
            ("TOKEN=${OTHER_TOKEN}", None),
            ("TOKEN=$OTHER", None),
            ("# TOKEN=commented-out", None),
            ("[default]", None),
            ("not an assignment", None),
        ];
        for (line, expected) in cases {
            let got = assignment(line);
            assert_eq!(got.as_ref().map(|(n, v)| (*n, v.as_str())), expected, "{line}");
        }
    }

    #[test]
    fn pgpass_lines_give_their_password() {
        assert_eq!(pgpass_password("db:5432:app:alice:pa\\:ss-word-1"), Some("pa:ss-word-1".into()));
        assert_eq!(pgpass_password("db:5432:app:alice"), None);
    }
}
