//! Git's own files in a command's layer: which of them make git run code (held for a person),
//! and what the rest amount to, summarised ("main: 1 commit: abc1234 message").
//!
//! Rule: nothing here runs git. The summary reads refs and loose commit objects as data; what it
//! cannot read (a packed object) is named by its hash only.

use std::io::Read as _;
use std::path::Path;

/// Whether `.git/<inner>` is a file that makes git run code or look elsewhere for its
/// repository: a change to it is held (a high finding), never landed unasked.
pub(super) fn runs_code(inner: &str) -> bool {
    let under = |folder: &str| inner == folder || inner.starts_with(&format!("{folder}/"));
    inner == "config"
        || inner == "commondir"
        || inner == "gitdir"
        || inner == "objects/info/alternates"
        || under("hooks")
        || under("info")
        || under("worktrees")
        || (inner.starts_with("modules/") && (inner.ends_with("/config") || inner.contains("/hooks")))
}

/// One line per branch or `HEAD` the layer moved, read from `upper` (the layer's `.git`) and
/// `git_dir` (the workspace's); `changed` are the paths below `.git` that changed.
pub(super) fn summary(upper: &Path, git_dir: &Path, changed: &[String]) -> Vec<String> {
    let mut lines = Vec::new();
    for inner in changed {
        let Some(branch) = inner.strip_prefix("refs/heads/") else { continue };
        let new = read_ref(&upper.join(inner));
        let old = read_ref(&git_dir.join(inner));
        let Some(new) = new else {
            lines.push(format!("branch {branch} deleted"));
            continue;
        };
        lines.push(format!("{branch}: {}", commits(upper, git_dir, &new, old.as_deref())));
    }
    if lines.is_empty() && !changed.is_empty() {
        let what = if changed.iter().any(|c| c == "index") { "the index and " } else { "" };
        lines.push(format!("{what}{} of git's own files updated (no branch moved)", changed.len()));
    }
    lines
}

fn read_ref(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let hash = text.trim();
    (hash.len() >= 40 && hash.bytes().all(|b| b.is_ascii_hexdigit())).then(|| hash.to_string())
}

/// "2 commits: abc1234 newest message" from `new` back to `old` (at most 50 read).
fn commits(upper: &Path, git_dir: &Path, new: &str, old: Option<&str>) -> String {
    let mut count = 0;
    let mut at = new.to_string();
    let mut newest = None;
    while Some(at.as_str()) != old && count < 50 {
        let Some((parent, message)) = read_commit(upper, git_dir, &at) else { break };
        count += 1;
        newest.get_or_insert(message);
        match parent {
            Some(p) => at = p,
            None => break,
        }
    }
    let short = &new[..7.min(new.len())];
    match (count, newest) {
        (0, _) | (_, None) => format!("now at {short}"),
        (n, Some(message)) => {
            format!("{n} commit{}: {short} {message}", if n == 1 { "" } else { "s" })
        }
    }
}

/// A loose commit object's first parent and its message's first line.
fn read_commit(upper: &Path, git_dir: &Path, hash: &str) -> Option<(Option<String>, String)> {
    let rel = format!("objects/{}/{}", hash.get(..2)?, hash.get(2..)?);
    let file = std::fs::File::open(upper.join(&rel)).or_else(|_| std::fs::File::open(git_dir.join(&rel))).ok()?;
    let mut text = Vec::new();
    flate2::read::ZlibDecoder::new(file).take(1 << 20).read_to_end(&mut text).ok()?;
    let text = String::from_utf8_lossy(&text);
    let (header, body) = text.split_once('\0')?;
    if !header.starts_with("commit ") {
        return None;
    }
    let (headers, message) = body.split_once("\n\n").unwrap_or((body, ""));
    let parent = headers.lines().find_map(|l| l.strip_prefix("parent ")).map(str::to_string);
    let first: String = message.lines().next().unwrap_or("").chars().take(72).collect();
    Some((parent, first))
}

#[cfg(test)]
mod tests {
    use super::runs_code;

    #[test]
    fn the_files_that_make_git_run_code_are_named_and_its_data_is_not() {
        for held in
            ["config", "commondir", "hooks/pre-commit", "info/attributes", "worktrees/w/gitdir", "modules/m/config"]
        {
            assert!(runs_code(held), "{held}");
        }
        for free in
            ["index", "HEAD", "refs/heads/main", "objects/ab/cdef", "logs/HEAD", "COMMIT_EDITMSG", "packed-refs"]
        {
            assert!(!runs_code(free), "{free}");
        }
    }
}
