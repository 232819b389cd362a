//! Read-only search over the workspace: `list_files`, `glob_search` and `grep_search`, built
//! on ripgrep's own crates (`ignore`, `globset`, `grep-regex`, `grep-searcher`).
//!
//! The rule this module keeps: output is always bounded, ignore rules are honoured, and
//! nothing outside the root is followed. Every walk here
//!
//! - honours `.gitignore` (also outside a git repository, and nested ones), `.ignore`,
//!   `.git/info/exclude` and the user's global git excludes, as ripgrep does;
//! - shows hidden files (`.github/`, `.env.example` matter to an agent) but never enters
//!   version-control metadata (`.git`, `.hg`, `.svn`, `.jj`);
//! - never follows a symbolic link: a link is listed as an entry, never descended or read,
//!   so a link inside the root that points outside it yields nothing from outside;
//! - returns paths relative to the workspace root, with `/` separators, in path order
//!   (component by component, so a directory's contents stay together);
//! - never yields nor enters a protected path ([`Tree::hidden`]: credentials, Bridle's data),
//!   so a secret inside the workspace is neither listed nor searched, as read_file refuses it;
//! - reads only regular files: a FIFO, a socket or a device may be listed, but is never opened
//!   by the walk (a file swapped for one after the walk saw it is opened without blocking and
//!   left unread), and one named as the path to search is refused by name.
//!
//! The functions take paths the caller's path sandbox has already resolved and confined;
//! they only re-check that the searched directory lies under the root. A file is opened with
//! `O_NOFOLLOW`, so one swapped for a symlink after the walk is not followed; a folder swapped
//! for a symlink between the walk and the open is a residual race: the sandbox's handle-based
//! I/O is what closes it for the tools that write. Results bound what they keep (`limit`,
//! `max_results`, `max_line_chars`); spilling a long rendering to the session's tool-output
//! folder is the caller's job (design section 4, "Large outputs").

mod glob;
mod grep;
mod list;

use std::cmp::Ordering;
use std::path::{Component, Path, PathBuf};

use ignore::overrides::Override;
use ignore::WalkBuilder;

pub use glob::{glob_search, GlobHits};
pub use grep::{grep_search, GrepFile, GrepHits, GrepLine, GrepOptions};
pub use list::{list_files, Listing};

/// What a search found, as the model reads it.
pub trait Render {
    /// The text for the model.
    fn render(&self) -> String;
}

/// Directory names a walk never enters: version-control internals, hidden or not.
const VCS_DIRS: [&str; 4] = [".git", ".hg", ".svn", ".jj"];

/// Why a search could not run. Every variant is something the model can fix by changing its
/// arguments, so the caller turns them into tool results, not crashes.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SearchError {
    /// The regular expression did not compile.
    #[error("invalid regex `{pattern}`: {message}")]
    InvalidRegex {
        /// The pattern as given.
        pattern: String,
        /// The regex engine's explanation.
        message: String,
    },
    /// The glob did not parse.
    #[error("invalid glob `{pattern}`: {message}")]
    InvalidGlob {
        /// The glob as given.
        pattern: String,
        /// The glob parser's explanation.
        message: String,
    },
    /// The path to search does not exist or cannot be read.
    #[error("cannot read `{path}`: {source}")]
    Unreadable {
        /// The path, relative to the workspace root.
        path: String,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The path is a FIFO, a socket or a device, which is never read.
    #[error("`{path}` is {kind}; only regular files are searched, so Bridle did not open it")]
    NotRegular {
        /// The path, relative to the workspace root.
        path: String,
        /// What it is ("a FIFO (named pipe)", "a socket", "a device").
        kind: &'static str,
    },
    /// A directory was needed but the path is something else.
    #[error("`{path}` is not a directory")]
    NotADirectory {
        /// The path, relative to the workspace root.
        path: String,
    },
    /// The path is not under the workspace root (the sandbox should have refused it).
    #[error("`{path}` is outside the workspace")]
    OutsideRoot {
        /// The path as given.
        path: PathBuf,
    },
}

/// The tree a search walks: the workspace root, and the paths a walk never yields nor enters
/// (the path sandbox's protected paths).
#[derive(Debug, Clone, Copy)]
pub struct Tree<'a> {
    /// The workspace root (canonical).
    pub root: &'a Path,
    /// Protected paths: skipped, with everything beneath them.
    pub hidden: &'a [PathBuf],
}

impl<'a> From<&'a Path> for Tree<'a> {
    fn from(root: &'a Path) -> Self {
        Tree { root, hidden: &[] }
    }
}

impl<'a> From<&'a PathBuf> for Tree<'a> {
    fn from(root: &'a PathBuf) -> Self {
        Tree { root, hidden: &[] }
    }
}

/// Checks that `path` lies under `root`, exists and is a folder or a regular file; says whether
/// it is a directory.
fn check_under_root(root: &Path, path: &Path) -> Result<bool, SearchError> {
    use std::os::unix::fs::MetadataExt as _;
    if path.strip_prefix(root).is_err() {
        return Err(SearchError::OutsideRoot { path: path.to_path_buf() });
    }
    // `symlink_metadata`: the sandbox hands over resolved paths, so a link here is not ours
    // to follow.
    let meta = std::fs::symlink_metadata(path)
        .map_err(|source| SearchError::Unreadable { path: display_rel(root, path), source })?;
    if let Some(kind) = crate::fs::special_kind(meta.mode()) {
        return Err(SearchError::NotRegular { path: display_rel(root, path), kind });
    }
    Ok(meta.is_dir())
}

/// Like [`check_under_root`], but the path must be a directory.
fn check_dir(root: &Path, dir: &Path) -> Result<(), SearchError> {
    if check_under_root(root, dir)? {
        Ok(())
    } else {
        Err(SearchError::NotADirectory { path: display_rel(root, dir) })
    }
}

/// The walker every tool here uses; `filter` (a glob in ripgrep's `--glob` dialect) narrows
/// which files are yielded without overriding ignore rules.
fn walker(tree: Tree<'_>, dir: &Path, filter: Option<Override>) -> WalkBuilder {
    let root = tree.root;
    let hidden: Vec<PathBuf> = tree.hidden.to_vec();
    let mut builder = WalkBuilder::new(dir);
    builder
        .follow_links(false)
        .hidden(false)
        .parents(true)
        .ignore(true)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(true)
        // A workspace need not be a git repository for its .gitignore to mean something.
        .require_git(false)
        // Global excludes are resolved against the workspace, not the process's cwd.
        .current_dir(root)
        .filter_entry(move |entry| {
            let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
            if entry.depth() > 0 && VCS_DIRS.iter().any(|name| entry.file_name() == *name) {
                return false;
            }
            if hidden.iter().any(|h| entry.path().starts_with(h)) {
                return false;
            }
            match &filter {
                // A negated glob can prune a directory; a positive one only selects files,
                // so directories stay walkable (ripgrep's rule).
                Some(filter) if entry.depth() > 0 => !filter.matched(entry.path(), is_dir).is_ignore(),
                _ => true,
            }
        });
    builder
}

/// `path` relative to `root`, `/`-separated; lossy for names that are not UTF-8.
fn rel_path(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    let mut out = String::new();
    for component in rel.components() {
        if let Component::Normal(name) = component {
            if !out.is_empty() {
                out.push('/');
            }
            out.push_str(&name.to_string_lossy());
        }
    }
    out
}

/// A path for messages: root-relative, `.` for the root itself.
fn display_rel(root: &Path, path: &Path) -> String {
    let rel = rel_path(root, path);
    if rel.is_empty() {
        ".".to_string()
    } else {
        rel
    }
}

/// Orders `/`-separated paths component by component (`a/z` before `a.b` before `ab`):
/// mapping `/` to the smallest byte gives that order with a plain byte comparison.
fn path_order(a: &str, b: &str) -> Ordering {
    let key = |c: u8| if c == b'/' { 0 } else { c };
    a.bytes().map(key).cmp(b.bytes().map(key))
}

/// The note that ends a truncated rendering, e.g. "(showing 3 of 7 files; narrow the
/// pattern or path)".
/// One item per line, `empty` when there are none, and the truncation note when cut.
fn render_lines(items: &[String], truncated: bool, empty: &str, note: impl FnOnce() -> String) -> String {
    if items.is_empty() && !truncated {
        return empty.to_string();
    }
    let mut out = items.join("\n");
    if truncated {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&note());
    }
    out
}

fn truncation_note(shown: usize, total: Option<usize>, what: &str, hint: &str) -> String {
    match total {
        Some(total) => format!("(showing {shown} of {total} {what}; {hint})"),
        None => format!("(showing {shown} of more {what}; {hint})"),
    }
}

#[cfg(test)]
mod tests;
