//! Reads that go looking for credentials: a recursive search of a folder that holds them (`~`,
//! `/`, `~/.config`) for what keys look like (`grep -r 'BEGIN OPENSSH' ~`), a search for key
//! files by name (`find ~ -name 'id_*'`), or a recursive copy or archive of such a folder.
//!
//! Rule: a folder "holds secrets" when one of the credential paths lies at or below it
//! ([`Located::holds_secrets`](crate::guard::places::Located)); what a search looks for is read
//! from its pattern or name test, never from the line's text as a whole.

use std::sync::LazyLock;

use regex::Regex;

use super::super::PathOperand;
use crate::guard::shell::SimpleCommand;

/// What secrets look like inside files.
static KEY_TEXT: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"(?i)(BEGIN|PRIVATE|OPENSSH|ssh-(rsa|ed25519|dss)|secret|passw|token|api[_-]?key|credential|aws_|AKIA|xox[abpr]-|ghp_|github_pat|glpat-|sk-|netrc|id_(rsa|dsa|ecdsa|ed25519))",
    )
    .ok()
});

/// What key files are called.
static KEY_FILE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"(?i)((^|/|\*)id_|\.pem|\.key\b|\.p12|\.pfx|\.kdbx|\.asc|credentials|netrc|git-credentials|pgpass|authorized_keys|known_hosts|hosts\.yml|\.vault-token|^\.env)",
    )
    .ok()
});

fn matches(re: &LazyLock<Option<Regex>>, text: &str) -> bool {
    // A pattern that did not compile (it is fixed, and tested) counts as a match: fail closed.
    re.as_ref().is_none_or(|re| re.is_match(text))
}

fn holds_secrets(paths: &[PathOperand]) -> bool {
    paths.iter().any(|p| !p.located.via_empty_variable && p.located.holds_secrets)
}

/// Content searches that recurse: `grep -r`, `rg`, `ag`, `ack`.
fn searches_recursively(cmd: &SimpleCommand) -> bool {
    match cmd.program.as_deref() {
        Some("grep" | "egrep" | "fgrep" | "zgrep") => {
            cmd.has_flag("r")
                || cmd.has_flag("R")
                || cmd.has_flag("--recursive")
                || cmd.has_flag("--dereference-recursive")
        }
        Some("rg" | "ag" | "ack" | "ugrep" | "ug") => true,
        _ => false,
    }
}

/// The pattern a search looks for: `-e PATTERN`, or its first positional.
fn pattern(cmd: &SimpleCommand) -> Vec<String> {
    let args = cmd.args();
    let given: Vec<String> = args
        .windows(2)
        .filter(|p| matches!(p[0].value.as_str(), "-e" | "--regexp"))
        .map(|p| p[1].value.clone())
        .collect();
    if !given.is_empty() {
        return given;
    }
    cmd.positionals().first().map(|w| vec![w.value.clone()]).unwrap_or_default()
}

/// The names a `find`, `fd` or `locate` looks for.
fn names_sought(cmd: &SimpleCommand) -> Vec<String> {
    let args = cmd.args();
    match cmd.program.as_deref() {
        Some("find" | "gfind") => args
            .windows(2)
            .filter(|p| matches!(p[0].value.as_str(), "-name" | "-iname" | "-path" | "-ipath" | "-regex" | "-iregex"))
            .map(|p| p[1].value.clone())
            .collect(),
        Some("fd" | "fdfind" | "locate" | "plocate" | "mlocate") => {
            cmd.positionals().first().map(|w| vec![w.value.clone()]).unwrap_or_default()
        }
        _ => Vec::new(),
    }
}

/// A search for key text through a folder that holds secrets, or a `find` for key files that
/// then runs something on them (`-exec cat {} +`).
pub(super) fn hunts(cmd: &SimpleCommand, paths: &[PathOperand]) -> bool {
    if !holds_secrets(paths) {
        return false;
    }
    if searches_recursively(cmd) {
        return pattern(cmd).iter().any(|p| matches(&KEY_TEXT, p) || matches(&KEY_FILE, p));
    }
    let runs =
        cmd.args().iter().any(|w| matches!(w.value.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir" | "-x" | "-X"));
    runs && names_sought(cmd).iter().any(|n| matches(&KEY_FILE, n))
}

/// A search for key files by name through a folder that holds secrets (or the whole disk's
/// index, for `locate`): it lists where they are.
pub(super) fn lists(cmd: &SimpleCommand, paths: &[PathOperand]) -> bool {
    let everywhere = matches!(cmd.program.as_deref(), Some("locate" | "plocate" | "mlocate"));
    (everywhere || holds_secrets(paths)) && names_sought(cmd).iter().any(|n| matches(&KEY_FILE, n))
}

/// A recursive read of a folder that holds secrets: a content search for anything, a recursive
/// copy, an archive.
pub(super) fn reads_folder(cmd: &SimpleCommand, paths: &[PathOperand]) -> bool {
    let reads = paths.iter().any(|p| !p.writes && !p.located.via_empty_variable && p.located.holds_secrets);
    if !reads {
        return false;
    }
    match cmd.program.as_deref() {
        _ if searches_recursively(cmd) => true,
        Some("cp" | "scp") => {
            cmd.has_flag("r") || cmd.has_flag("R") || cmd.has_flag("a") || cmd.has_flag("--recursive")
        }
        Some("rsync" | "zip" | "7z" | "7za" | "rclone") => true,
        Some("tar" | "bsdtar" | "gtar") => {
            cmd.has_flag("c")
                || cmd.has_flag("--create")
                || cmd.args().first().is_some_and(|w| !w.value.starts_with('-') && w.value.contains('c'))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_patterns_compile() {
        assert!(KEY_TEXT.as_ref().is_some_and(|r| r.is_match("BEGIN OPENSSH PRIVATE KEY")));
        assert!(KEY_FILE.as_ref().is_some_and(|r| r.is_match("id_ed25519") && !r.is_match("main.rs")));
    }
}
