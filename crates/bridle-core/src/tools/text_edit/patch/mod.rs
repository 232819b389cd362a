//! `apply_patch`'s patches: parsing one or more files' hunks — from a unified diff, or from the
//! `*** Begin Patch` format OpenAI's models write for a tool of this name ([`codex`]) — and
//! applying one file's hunks to its current content.
//!
//! The rule this keeps: both formats become the same [`FilePatch`]es, applied the same way; a
//! patch is read in the format it looks like, and an error names that format. A hunk's line
//! numbers are only hints. Its context and removed lines
//! must match the file, with the same levels as `edit_file`, nearest the stated line first;
//! a hunk that matches nowhere is an error naming the file and the hunk, and nothing is
//! returned for that file. Applying writes nothing: the caller gets every file's new content
//! first, so it can write all of them or none.

mod apply;
mod codex;
mod parse;

pub use apply::apply_file_patch;
pub use parse::parse_patch;

use super::closest::ClosestRegion;
use super::matcher::MatchLevel;

/// One file's part of a patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilePatch {
    /// The `---` path, `a/` stripped; `None` for `/dev/null` (the file is created).
    pub old_path: Option<String>,
    /// The `+++` path, `b/` stripped; `None` for `/dev/null` (the file is deleted).
    pub new_path: Option<String>,
    /// The hunks, in file order.
    pub hunks: Vec<Hunk>,
    /// A copy (git's `copy from`/`copy to`): the old file stays.
    pub copy: bool,
}

impl FilePatch {
    /// The path the patch is about: the new one, or the old one for a deletion.
    pub fn path(&self) -> &str {
        self.new_path.as_deref().or(self.old_path.as_deref()).unwrap_or("/dev/null")
    }
}

/// The `-start,len` or `+start,len` of a hunk header (1-based; `len` 0 means an empty side).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HunkRange {
    /// First line (for an empty side, the line after which the hunk goes).
    pub start: usize,
    /// Number of lines.
    pub len: usize,
}

/// One `@@` hunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk {
    /// The old side's range, when the header gave one (models sometimes write a bare `@@`).
    pub old: Option<HunkRange>,
    /// The new side's range, when the header gave one.
    pub new: Option<HunkRange>,
    /// The hunk's lines, in order.
    pub lines: Vec<HunkLine>,
    /// A `\ No newline at end of file` followed the old side's last line.
    pub old_missing_newline: bool,
    /// A `\ No newline at end of file` followed the new side's last line.
    pub new_missing_newline: bool,
    /// Lines to find first, in order, each after the one before (the `*** Begin Patch` format's
    /// `@@ <line>` anchors); the hunk is sought after the last.
    pub anchors: Vec<String>,
    /// The hunk ends the file (`*** End of File`): sought there first.
    pub at_end: bool,
}

impl Hunk {
    /// A hunk of `lines` with no header numbers, anchors or end-of-file mark.
    pub fn of(lines: Vec<HunkLine>) -> Self {
        Self {
            old: None,
            new: None,
            lines,
            old_missing_newline: false,
            new_missing_newline: false,
            anchors: Vec::new(),
            at_end: false,
        }
    }

    /// The header as written back for messages: `@@ -3,4 +3,5 @@`, `@@ <anchor>`, or `@@`.
    pub fn header(&self) -> String {
        match (self.old, self.new, self.anchors.last()) {
            (Some(old), Some(new), _) => format!("@@ -{},{} +{},{} @@", old.start, old.len, new.start, new.len),
            (_, _, Some(anchor)) => format!("@@ {}", anchor.trim()),
            _ => "@@".to_string(),
        }
    }
}

/// A line of a hunk, without its leading ` `, `-` or `+`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HunkLine {
    /// Unchanged; must match the file.
    Context(String),
    /// Removed; must match the file.
    Remove(String),
    /// Added.
    Add(String),
}

/// What applying one file's patch asks the caller to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PatchResult {
    /// Write `content` at the patch's `new_path` (creating it when `old_path` is `None`; for a
    /// rename, `old_path` is then removed by the caller).
    Write {
        /// The whole new content, with the original's BOM, line endings and final newline.
        content: String,
        /// The level each hunk matched at, in order.
        levels: Vec<MatchLevel>,
    },
    /// Delete the file at `old_path`.
    Delete,
}

/// A patch that cannot be parsed or applied, in words the model can act on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PatchError {
    /// Neither format's file headers anywhere.
    #[error(
        "the patch names no file: it is neither a unified diff nor a `*** Begin Patch` patch. \
         Send one of these (each may hold several files):\n{UNIFIED_EXAMPLE}\nor\n{CODEX_EXAMPLE}"
    )]
    NoFiles,
    /// A line that breaks the format the patch is written in.
    #[error("{format}, line {line}: {message}")]
    Malformed {
        /// The format the patch looks like.
        format: Format,
        /// 1-based line of the patch text.
        line: usize,
        /// What is wrong there.
        message: String,
    },
    /// A file header with no hunks, for a file that is neither created nor deleted.
    #[error("file {path}: the patch has no @@ hunks for it")]
    NoHunks {
        /// The file.
        path: String,
    },
    /// A creation for a file that exists.
    #[error(
        "file {path}: the patch creates it, but it already exists; send a change of its current \
         content instead (`*** Update File: {path}`, or `--- a/{path}` and `+++ b/{path}`)"
    )]
    AlreadyExists {
        /// The file.
        path: String,
    },
    /// A move (or copy) onto a file that exists.
    #[error(
        "file {from}: the patch moves it to {to}, which already exists; move it to a new path, \
         or change {to} itself"
    )]
    TargetExists {
        /// The file moved.
        from: String,
        /// Where to.
        to: String,
    },
    /// A change or deletion for a file that does not exist.
    #[error(
        "file {path}: it does not exist; to create it, use `*** Add File: {path}` (or `--- /dev/null` \
         and `+++ b/{path}`)"
    )]
    Missing {
        /// The file.
        path: String,
    },
    /// A creation whose hunk has context or removed lines.
    #[error(
        "file {path}, hunk {hunk}: the file is created from /dev/null, so every line must be \
         added (start with '+')"
    )]
    CreateWithContext {
        /// The file.
        path: String,
        /// 1-based hunk number.
        hunk: usize,
    },
    /// A hunk whose context and removed lines match nowhere (after the previous hunk).
    #[error("{}", hunk_not_found(.path, *.hunk, .header, .closest))]
    HunkNotFound {
        /// The file.
        path: String,
        /// 1-based hunk number.
        hunk: usize,
        /// The hunk's header, e.g. `@@ -3,4 +3,5 @@`.
        header: String,
        /// The part of the file most like the hunk's old side, when anything is.
        closest: Option<ClosestRegion>,
    },
    /// An `@@ <line>` anchor that is not in the file (after the previous hunk).
    #[error("{}", anchor_not_found(.path, *.hunk, .anchor, .closest))]
    AnchorNotFound {
        /// The file.
        path: String,
        /// 1-based hunk number.
        hunk: usize,
        /// The anchor line.
        anchor: String,
        /// The line of the file most like it, when any is.
        closest: Option<ClosestRegion>,
    },
    /// A deletion whose hunks leave content behind.
    #[error(
        "file {path}: the patch deletes it, but {remaining} non-blank lines would remain that the \
         patch does not remove; a deletion must remove every line"
    )]
    DeleteIncomplete {
        /// The file.
        path: String,
        /// Non-blank lines left over.
        remaining: usize,
    },
}

/// The two formats a patch may be written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `--- a/x` / `+++ b/x` / `@@ -1,2 +1,2 @@`.
    Unified,
    /// `*** Begin Patch` / `*** Update File: x` / `@@` / `*** End Patch`.
    Codex,
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Format::Unified => "unified diff",
            Format::Codex => "`*** Begin Patch` patch",
        })
    }
}

/// A short unified diff, for errors and the tool's description.
pub const UNIFIED_EXAMPLE: &str =
    "--- a/src/app.py\n+++ b/src/app.py\n@@ -1,2 +1,2 @@\n def greet():\n-    print(\"hi\")\n+    print(\"hello\")";

/// The same change in the `*** Begin Patch` format.
pub const CODEX_EXAMPLE: &str =
    "*** Begin Patch\n*** Update File: src/app.py\n@@ def greet():\n-    print(\"hi\")\n+    print(\"hello\")\n*** End Patch";

fn anchor_not_found(path: &str, hunk: usize, anchor: &str, closest: &Option<ClosestRegion>) -> String {
    let mut out = format!(
        "file {path}, hunk {hunk}: its anchor `@@ {}` names a line that is not in the file (after the \
         previous hunk), not even ignoring whitespace or Unicode punctuation.",
        anchor.trim()
    );
    if let Some(region) = closest {
        out.push('\n');
        out.push_str(&region.describe("the anchor"));
    }
    out.push_str("\nUse a line of the file as the anchor (or a bare `@@`) and send the whole patch again.");
    out
}

fn hunk_not_found(path: &str, hunk: usize, header: &str, closest: &Option<ClosestRegion>) -> String {
    let mut out = format!(
        "file {path}, hunk {hunk} ({header}): its context and removed lines (those starting with ' ' \
         and '-') were not found in the file, not even ignoring line endings, whitespace, \
         indentation or Unicode punctuation."
    );
    if hunk > 1 {
        out.push_str(&format!(" Hunks apply in order, so it was sought after the lines of hunk {}.", hunk - 1));
    }
    if let Some(region) = closest {
        out.push('\n');
        out.push_str(&region.describe("the hunk's old side"));
    }
    out.push_str("\nMake the ' ' and '-' lines match the file exactly and send the whole patch again.");
    out
}

#[cfg(test)]
mod tests;
