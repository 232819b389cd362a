//! Applying one file's hunks to its content, in memory.
//!
//! Hunks apply in order, each searched for after the previous one's lines, nearest its stated
//! line (shifted by the offset the previous hunk was found at, as `patch` does). Context lines
//! are copied from the file, not the patch, so a fuzzy match never rewrites a line the patch
//! meant to keep; added lines are re-indented like `edit_file`'s replacements.

use super::super::closest::closest_region;
use super::super::matcher::{find_runs, keys_of, LineKeys, MatchLevel};
use super::super::reindent::Reindent;
use super::super::text::{split_bom, with_bom, Document};
use super::{FilePatch, Hunk, HunkLine, PatchError, PatchResult};

/// Lines on each side of a hunk read for the file's indentation style.
const STYLE_WINDOW: usize = 500;

/// Applies `patch` to `original` (`None`: the file does not exist) and returns what to do with
/// the file. Nothing is written; on error nothing is returned but the error.
pub fn apply_file_patch(original: Option<&str>, patch: &FilePatch) -> Result<PatchResult, PatchError> {
    let path = patch.path().to_string();
    match (&patch.old_path, &patch.new_path, original) {
        (None, _, Some(_)) => Err(PatchError::AlreadyExists { path }),
        (None, _, None) => create(patch, path),
        (Some(_), _, None) => Err(PatchError::Missing { path }),
        (Some(_), None, Some(content)) => {
            if patch.hunks.is_empty() {
                return Ok(PatchResult::Delete);
            }
            let (left, _) = modify(content, patch, &path)?;
            let remaining = split_bom(&left).1.lines().filter(|line| !line.trim().is_empty()).count();
            if remaining > 0 {
                return Err(PatchError::DeleteIncomplete { path, remaining });
            }
            Ok(PatchResult::Delete)
        }
        (Some(old), Some(new), Some(content)) => {
            if patch.hunks.is_empty() {
                // A rename or copy with no change of content.
                if old != new {
                    return Ok(PatchResult::Write { content: content.to_string(), levels: Vec::new() });
                }
                return Err(PatchError::NoHunks { path });
            }
            let (content, levels) = modify(content, patch, &path)?;
            Ok(PatchResult::Write { content, levels })
        }
    }
}

fn create(patch: &FilePatch, path: String) -> Result<PatchResult, PatchError> {
    let mut lines: Vec<&str> = Vec::new();
    for (index, hunk) in patch.hunks.iter().enumerate() {
        for line in &hunk.lines {
            match line {
                HunkLine::Add(text) => lines.push(text),
                HunkLine::Context(_) | HunkLine::Remove(_) => {
                    return Err(PatchError::CreateWithContext { path, hunk: index + 1 });
                }
            }
        }
    }
    let mut content = lines.join("\n");
    let missing_newline = patch.hunks.last().is_some_and(|hunk| hunk.new_missing_newline);
    if !lines.is_empty() && !missing_newline {
        content.push('\n');
    }
    Ok(PatchResult::Write { content, levels: vec![MatchLevel::Exact; patch.hunks.len()] })
}

/// A line of the result: one of the file's, or a new one.
enum Out {
    Kept(usize),
    Added(String),
}

fn modify(content: &str, patch: &FilePatch, path: &str) -> Result<(String, Vec<MatchLevel>), PatchError> {
    let (bom, body) = split_bom(content);
    let doc = Document::parse(body);
    let texts = doc.texts();
    let total = texts.len();
    let mut keys = LineKeys::new(&texts);
    let mut out: Vec<Out> = Vec::with_capacity(total + 16);
    let mut levels = Vec::with_capacity(patch.hunks.len());
    let (mut cursor, mut offset) = (0usize, 0isize);
    let mut final_newline = doc.final_newline;

    for (index, hunk) in patch.hunks.iter().enumerate() {
        let old_side: Vec<&str> = hunk
            .lines
            .iter()
            .filter_map(|line| match line {
                HunkLine::Context(text) | HunkLine::Remove(text) => Some(text.as_str()),
                HunkLine::Add(_) => None,
            })
            .collect();
        let added: Vec<&str> = hunk
            .lines
            .iter()
            .filter_map(|line| if let HunkLine::Add(text) = line { Some(text.as_str()) } else { None })
            .collect();
        // Anchors (`@@ <line>`): each found after the one before; the hunk is sought after them.
        for anchor in &hunk.anchors {
            let Some((line, _)) = locate(&mut keys, &[anchor.as_str()], cursor, cursor) else {
                return Err(PatchError::AnchorNotFound {
                    path: path.to_string(),
                    hunk: index + 1,
                    anchor: anchor.clone(),
                    closest: closest_region(&mut keys, &[anchor.as_str()], Some(cursor + 1)),
                });
            };
            out.extend((cursor..=line).map(Out::Kept));
            cursor = line + 1;
        }
        // 0-based index where the old side should start, as the header says (or, for a hunk
        // that ends the file, where it would start then).
        let stated = hunk.old.map(|range| if range.len == 0 { range.start } else { range.start.saturating_sub(1) });
        let expected = match (stated, hunk.at_end) {
            (_, true) => total.saturating_sub(old_side.len()).max(cursor),
            (Some(line), false) => line.saturating_add_signed(offset).clamp(cursor, total),
            (None, false) => cursor,
        };
        let (at, level) = if old_side.is_empty() {
            // Pure addition: where the header says, at an anchor, or at the end.
            let at = if stated.is_some() || (!hunk.anchors.is_empty() && !hunk.at_end) { expected } else { total };
            (at, MatchLevel::Exact)
        } else {
            locate(&mut keys, &old_side, cursor, expected).ok_or_else(|| PatchError::HunkNotFound {
                path: path.to_string(),
                hunk: index + 1,
                header: hunk.header(),
                closest: closest_region(&mut keys, &old_side, Some(expected + 1)),
            })?
        };
        if let Some(line) = stated {
            offset = at as isize - line as isize;
        }
        out.extend((cursor..at).map(Out::Kept));
        let nearby = &texts[at.saturating_sub(STYLE_WINDOW)..(at + old_side.len() + STYLE_WINDOW).min(total)];
        let plan = Reindent::new(&old_side, &added, &texts[at..at + old_side.len()], nearby);
        cursor = emit(hunk, at, &plan, &mut out);
        if cursor == total {
            if hunk.new_missing_newline {
                final_newline = false;
            } else if hunk.old_missing_newline {
                final_newline = true;
            }
        }
        levels.push(level);
    }
    out.extend((cursor..total).map(Out::Kept));
    Ok((with_bom(bom, render(&doc, &out, final_newline)), levels))
}

/// The first line at or after `from` where `old_side` matches, nearest `expected`, at the
/// first level that finds any. Line endings are already gone from lines, so level 2 is level 1.
fn locate(keys: &mut LineKeys<'_>, old_side: &[&str], from: usize, expected: usize) -> Option<(usize, MatchLevel)> {
    MatchLevel::ALL.into_iter().filter(|level| *level != MatchLevel::LineEndings).find_map(|level| {
        let wanted = keys_of(old_side, level);
        let starts = find_runs(keys.get(level).get(from..)?, &wanted);
        starts
            .into_iter()
            .map(|start| start + from)
            .min_by_key(|&start| (start.abs_diff(expected), start))
            .map(|start| (start, level))
    })
}

/// Pushes the hunk's result for file lines from `at`; returns the first file line after it.
fn emit(hunk: &Hunk, at: usize, plan: &Reindent, out: &mut Vec<Out>) -> usize {
    let mut line_no = at;
    for line in &hunk.lines {
        match line {
            HunkLine::Context(_) => {
                out.push(Out::Kept(line_no));
                line_no += 1;
            }
            HunkLine::Remove(_) => line_no += 1,
            HunkLine::Add(text) => out.push(Out::Added(plan.line(text))),
        }
    }
    line_no
}

/// Kept lines keep their own terminators; added ones get the file's.
fn render(doc: &Document<'_>, out: &[Out], final_newline: bool) -> String {
    let eol = doc.eol_str();
    let mut text = String::with_capacity(doc.body.len() + 64);
    for (index, item) in out.iter().enumerate() {
        let terminated = index + 1 < out.len() || final_newline;
        let (line, terminator) = match item {
            Out::Kept(i) => (doc.lines[*i].text, doc.lines[*i].terminator(doc.body)),
            Out::Added(line) => (line.as_str(), eol),
        };
        text.push_str(line);
        if terminated {
            text.push_str(if terminator.is_empty() { eol } else { terminator });
        }
    }
    text
}
