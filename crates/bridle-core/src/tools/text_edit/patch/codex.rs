//! The `*** Begin Patch` format OpenAI's models are trained to write for a tool called
//! `apply_patch`, read into the same [`FilePatch`]es as a unified diff.
//!
//! ```text
//! *** Begin Patch
//! *** Add File: docs/new.md          (every line after it starts with '+')
//! *** Delete File: old.txt
//! *** Update File: src/app.py
//! *** Move to: src/main.py           (optional)
//! @@ def greet():                    (optional anchor: a line to find first; `@@` alone separates)
//!  context
//! -removed
//! +added
//! *** End of File                    (optional: the hunk ends the file)
//! *** End Patch
//! ```
//!
//! Rule: read as leniently as the format's own tools read it — markers with padding around
//! them, a missing `*** End Patch`, an empty line standing for an empty context line — and
//! never past a line that belongs to no part of the format: that is an error naming the line.

use super::parse::unquote;
use super::{FilePatch, Format, Hunk, HunkLine, PatchError};

const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";
const ADD: &str = "*** Add File:";
const DELETE: &str = "*** Delete File:";
const UPDATE: &str = "*** Update File:";
const MOVE: &str = "*** Move to:";
const END_OF_FILE: &str = "*** End of File";

/// Whether `lines` are written in this format (its begin marker, or one of its file markers).
pub(super) fn looks_like(lines: &[&str]) -> bool {
    lines
        .iter()
        .map(|line| line.trim())
        .any(|line| line == BEGIN || [ADD, DELETE, UPDATE].iter().any(|marker| line.starts_with(marker)))
}

/// Parses `lines` (the first of which is line `first + 1` of the patch) into its files.
pub(super) fn parse(lines: &[&str], first: usize) -> Result<Vec<FilePatch>, PatchError> {
    let malformed = |index: usize, message: String| PatchError::Malformed {
        format: Format::Codex,
        line: first + index + 1,
        message,
    };
    let start = lines.iter().position(|line| line.trim() == BEGIN).map_or(0, |at| at + 1);
    let mut files: Vec<FilePatch> = Vec::new();
    let mut i = start;
    while i < lines.len() {
        let line = lines[i].trim();
        if line == END {
            break;
        }
        if line.is_empty() {
            i += 1;
            continue;
        }
        let Some((marker, path)) = file_marker(line) else {
            let message = format!(
                "`{}` is outside any file; each file starts with `{ADD} <path>`, `{DELETE} <path>` or \
                 `{UPDATE} <path>`",
                lines[i]
            );
            return Err(malformed(i, message));
        };
        if path.is_empty() {
            return Err(malformed(i, format!("`{marker}` names no file")));
        }
        i += 1;
        match marker {
            ADD => {
                let mut added = Vec::new();
                // Empty lines count only when an added line follows: at the end they are the gap
                // before the next marker.
                let mut blanks = 0;
                while i < lines.len() && !is_marker(lines[i]) {
                    match lines[i].strip_prefix('+') {
                        Some(text) => {
                            added.extend((0..blanks).map(|_| HunkLine::Add(String::new())));
                            blanks = 0;
                            added.push(HunkLine::Add(text.to_string()));
                        }
                        None if lines[i].trim().is_empty() => blanks += 1,
                        None => {
                            let message =
                                format!("`{}` is in an added file, where every line starts with '+'", lines[i]);
                            return Err(malformed(i, message));
                        }
                    }
                    i += 1;
                }
                files.push(FilePatch {
                    old_path: None,
                    new_path: Some(path),
                    hunks: vec![Hunk::of(added)],
                    copy: false,
                });
            }
            DELETE => {
                files.push(FilePatch { old_path: Some(path.clone()), new_path: None, hunks: Vec::new(), copy: false })
            }
            _ => {
                let mut new_path = path.clone();
                if let Some(to) = lines.get(i).and_then(|line| line.trim().strip_prefix(MOVE)) {
                    new_path = unquote(to.trim());
                    i += 1;
                }
                let (hunks, next) = update_hunks(lines, i, &malformed)?;
                if hunks.is_empty() && new_path == path {
                    return Err(malformed(i.saturating_sub(1), format!("`{UPDATE} {path}` has no change under it")));
                }
                files.push(FilePatch { old_path: Some(path), new_path: Some(new_path), hunks, copy: false });
                i = next;
            }
        }
    }
    if files.is_empty() {
        return Err(PatchError::NoFiles);
    }
    Ok(files)
}

/// The hunks of an update, from `lines[start]` to the next marker; and where that is.
fn update_hunks(
    lines: &[&str],
    start: usize,
    malformed: &impl Fn(usize, String) -> PatchError,
) -> Result<(Vec<Hunk>, usize), PatchError> {
    let mut hunks: Vec<Hunk> = Vec::new();
    // Anchors met since the last diff line: they open the next hunk.
    let mut anchors: Vec<String> = Vec::new();
    let mut open = false;
    // Empty lines stand for empty context lines, but only when the hunk goes on after them.
    let mut blanks = 0;
    let mut i = start;
    while i < lines.len() && !is_marker(lines[i]) {
        let line = lines[i];
        if line.trim() == END_OF_FILE {
            match hunks.last_mut().filter(|_| open) {
                Some(hunk) => hunk.at_end = true,
                None => return Err(malformed(i, format!("`{END_OF_FILE}` ends no hunk"))),
            }
            open = false;
            blanks = 0;
            i += 1;
            continue;
        }
        if let Some(anchor) = line.strip_prefix("@@") {
            let anchor = anchor.trim();
            if !anchor.is_empty() {
                anchors.push(anchor.to_string());
            }
            open = false;
            blanks = 0;
            i += 1;
            continue;
        }
        let hunk_line = match line.chars().next() {
            None => {
                blanks += usize::from(open);
                i += 1;
                continue;
            }
            Some(' ') => HunkLine::Context(line[1..].to_string()),
            Some('-') => HunkLine::Remove(line[1..].to_string()),
            Some('+') => HunkLine::Add(line[1..].to_string()),
            Some(_) => {
                let message = format!(
                    "`{line}` is in a change, where every line starts with ' ' (context), '-' (removed), \
                     '+' (added) or `@@`"
                );
                return Err(malformed(i, message));
            }
        };
        if !open {
            hunks.push(Hunk { anchors: std::mem::take(&mut anchors), ..Hunk::of(Vec::new()) });
            open = true;
        }
        if let Some(hunk) = hunks.last_mut() {
            hunk.lines.extend((0..blanks).map(|_| HunkLine::Context(String::new())));
            hunk.lines.push(hunk_line);
        }
        blanks = 0;
        i += 1;
    }
    Ok((hunks, i))
}

/// A file marker and its path.
fn file_marker(line: &str) -> Option<(&'static str, String)> {
    [ADD, DELETE, UPDATE]
        .into_iter()
        .find_map(|marker| line.strip_prefix(marker).map(|path| (marker, unquote(path.trim()))))
}

/// A line that ends the current file's part: another file, or the end of the patch.
fn is_marker(line: &str) -> bool {
    let line = line.trim();
    line == END || line == BEGIN || file_marker(line).is_some()
}
