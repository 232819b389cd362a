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
        || inner == "config.worktree"
        || inner == "commondir"
        || inner == "gitdir"
        || inner == "objects/info/alternates"
        || under("hooks")
        || under("info")
        || under("worktrees")
        // A submodule's repository: its config, hooks and index are git's to run from.
        || under("modules")
}

/// Whether `rel` is inside a repository nested in the workspace (a `.git` folder or file below
/// the root, or what is in it): the user's git would run what its config names.
pub(super) fn nested_repository(rel: &Path) -> bool {
    let mut components = rel.components();
    components.next();
    components.any(|c| c.as_os_str() == ".git")
}

/// The gitlinks (entries of mode 160000: a submodule's commit) the index in `bytes` records,
/// read as data (versions 2 to 4, SHA-1 or SHA-256 names); `None` when it cannot be read, which
/// the caller takes as a gitlink added (held).
pub(super) fn gitlinks(bytes: &[u8]) -> Option<std::collections::BTreeSet<Vec<u8>>> {
    [20, 32].into_iter().find_map(|hash| gitlinks_with(bytes, hash))
}

fn gitlinks_with(bytes: &[u8], hash: usize) -> Option<std::collections::BTreeSet<Vec<u8>>> {
    let u32_at = |at: usize| bytes.get(at..at + 4).map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]));
    if bytes.get(..4)? != b"DIRC" {
        return None;
    }
    let version = u32_at(4)?;
    let count = u32_at(8)?;
    if !(2..=4).contains(&version) {
        return None;
    }
    let mut links = std::collections::BTreeSet::new();
    let mut at = 12;
    let mut previous: Vec<u8> = Vec::new();
    for _ in 0..count {
        let start = at;
        let mode = u32_at(start + 24)?;
        let flags = u16::from_be_bytes(bytes.get(start + 40 + hash..start + 42 + hash)?.try_into().ok()?);
        at = start + 42 + hash;
        if version >= 3 && flags & 0x4000 != 0 {
            at += 2;
        }
        let path = if version == 4 {
            // How many bytes of the previous path to drop (git's offset varint), then the rest.
            let mut byte = *bytes.get(at)?;
            at += 1;
            let mut strip = u64::from(byte & 0x7f);
            while byte & 0x80 != 0 {
                byte = *bytes.get(at)?;
                at += 1;
                strip = ((strip + 1) << 7) | u64::from(byte & 0x7f);
            }
            let keep = previous.len().checked_sub(usize::try_from(strip).ok()?)?;
            let end = at + bytes.get(at..)?.iter().position(|b| *b == 0)?;
            let mut path = previous[..keep].to_vec();
            path.extend_from_slice(&bytes[at..end]);
            at = end + 1;
            path
        } else {
            let end = at + bytes.get(at..)?.iter().position(|b| *b == 0)?;
            let path = bytes[at..end].to_vec();
            // One to eight NULs pad the entry to a multiple of eight bytes.
            at = start + (end - start + 8) / 8 * 8;
            path
        };
        if mode & 0o170000 == 0o160000 {
            links.insert(path.clone());
        }
        previous = path;
    }
    // What follows the entries is extensions and the checksum: at least the checksum.
    (bytes.len() >= at + hash).then_some(links)
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
    let text = crate::fs::read_named(path, 4096).ok()?;
    let text = String::from_utf8(text).ok()?;
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
    let open = |at: &Path| crate::fs::open_named(&at.join(&rel)).map(|(file, _)| file);
    let file = open(upper).or_else(|_| open(git_dir)).ok()?;
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
    #![allow(clippy::unwrap_used)]
    use super::{gitlinks, nested_repository, runs_code};
    use std::path::Path;

    #[test]
    fn a_nested_repository_is_any_git_below_the_root() {
        assert!(nested_repository(Path::new("node_modules/x/.git")));
        assert!(nested_repository(Path::new("sub/.git/config")));
        assert!(!nested_repository(Path::new(".git/config")));
        assert!(!nested_repository(Path::new("src/git.rs")));
    }

    /// An index git wrote, with and without a gitlink, in each index version.
    #[test]
    fn the_gitlinks_of_an_index_are_read_in_every_version() {
        let t = tempfile::tempdir().unwrap();
        let git = |args: &[&str]| {
            let ok = std::process::Command::new("git").args(args).current_dir(t.path()).output().unwrap();
            assert!(ok.status.success(), "{args:?}: {}", String::from_utf8_lossy(&ok.stderr));
        };
        git(&["init", "-q"]);
        for name in ["a.txt", "b/c.txt", "b/d.txt"] {
            std::fs::create_dir_all(t.path().join(name).parent().unwrap()).unwrap();
            std::fs::write(t.path().join(name), name).unwrap();
        }
        git(&["add", "-A"]);
        for version in ["2", "3", "4"] {
            git(&["update-index", "--index-version", version]);
            let index = std::fs::read(t.path().join(".git/index")).unwrap();
            assert_eq!(gitlinks(&index), Some(Default::default()), "v{version}");
        }
        let commit = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
        git(&["update-index", "--add", "--cacheinfo", &format!("160000,{commit},vendor/x")]);
        for version in ["2", "3", "4"] {
            git(&["update-index", "--index-version", version]);
            let index = std::fs::read(t.path().join(".git/index")).unwrap();
            let links: Vec<Vec<u8>> = gitlinks(&index).unwrap().into_iter().collect();
            assert_eq!(links, vec![b"vendor/x".to_vec()], "v{version}");
        }
        assert_eq!(gitlinks(b"DIRC\0\0\0\x02\0\0\0\x05garbage"), None);
    }

    #[test]
    fn the_files_that_make_git_run_code_are_named_and_its_data_is_not() {
        for held in [
            "config",
            "config.worktree",
            "commondir",
            "hooks/pre-commit",
            "info/attributes",
            "worktrees/w/gitdir",
            "modules/m/config",
            "modules/m/index",
        ] {
            assert!(runs_code(held), "{held}");
        }
        for free in
            ["index", "HEAD", "refs/heads/main", "objects/ab/cdef", "logs/HEAD", "COMMIT_EDITMSG", "packed-refs"]
        {
            assert!(!runs_code(free), "{free}");
        }
    }
}
