//! `edit_file`'s search and replace: one edit, or a batch applied in order, all or nothing.
//!
//! The rule this keeps: an edit lands exactly where `old_text` matched at the first level that
//! finds it, and only there; more than one candidate is an error unless `replace_all` or
//! `line_hint` settles it; and the file's BOM, line endings and final newline survive. An
//! `old_text` not found as sent is read again as [`recover`] allows (blank ends, copied line
//! numbers) before the edit is refused.

mod error;
mod recover;

use std::ops::Range;

pub use error::EditError;
pub use recover::Reading;

use super::closest::closest_region;
use super::matcher::{find_overlapping, find_runs, keys_of, LfText, LineKeys, MatchLevel};
use super::reindent::{FileStyle, Reindent};
use super::text::{model_lines, split_bom, to_eol, with_bom, Document, Eol};

/// Lines on each side of a match read for the file's indentation style.
const STYLE_WINDOW: usize = 500;

/// One replacement asked for by the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    /// The text to find.
    pub old_text: String,
    /// What replaces it.
    pub new_text: String,
    /// Replace every (non-overlapping, left to right) match instead of requiring one.
    pub replace_all: bool,
}

/// The edited content and how it was reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditOutcome {
    /// The whole new content, BOM and line endings as the original had them.
    pub content: String,
    /// Replacements made, over all edits.
    pub replacements: usize,
    /// The level each edit matched at, in order.
    pub levels: Vec<MatchLevel>,
    /// How each edit's `old_text` was read to be found, in order.
    pub readings: Vec<Reading>,
}

/// Applies `edits` in order to `content`, each to the result of the previous one.
///
/// `line_hint` (1-based) picks, among several matches of an edit, the one nearest that line;
/// it applies to every edit (DESIGN 4 offers it only with a single edit). On any failure
/// nothing is returned but the error, which names the failing edit when there were several.
pub fn apply_edits(content: &str, edits: &[Edit], line_hint: Option<usize>) -> Result<EditOutcome, EditError> {
    if edits.is_empty() {
        return Err(EditError::NoEdits);
    }
    let batch = edits.len() > 1;
    let (bom, body) = split_bom(content);
    let mut current = body.to_string();
    let mut replacements = 0;
    let mut levels = Vec::with_capacity(edits.len());
    let mut readings = Vec::with_capacity(edits.len());
    for (index, edit) in edits.iter().enumerate() {
        let applied = apply_one(&current, edit, line_hint).map_err(|e| if batch { e.in_batch(index) } else { e })?;
        current = applied.content;
        replacements += applied.count;
        levels.push(applied.level);
        readings.push(applied.reading);
    }
    keep_final_newline(&mut current, body);
    Ok(EditOutcome { content: with_bom(bom, current), replacements, levels, readings })
}

struct Applied {
    content: String,
    count: usize,
    level: MatchLevel,
    reading: Reading,
}

/// A place `old_text` matched.
#[derive(Debug, Clone)]
struct Found {
    /// Bytes of the body replaced.
    bytes: Range<usize>,
    /// 1-based lines the match starts and ends on.
    first_line: usize,
    last_line: usize,
    /// The file lines matched, for the line-based levels.
    lines: Option<Range<usize>>,
}

fn apply_one(body: &str, edit: &Edit, hint: Option<usize>) -> Result<Applied, EditError> {
    let old = split_bom(&edit.old_text).1;
    if old.trim().is_empty() {
        return Err(EditError::EmptyOldText { edit: None });
    }
    if edit.old_text == edit.new_text {
        return Err(EditError::NoChange { edit: None });
    }
    let new = split_bom(&edit.new_text).1;
    let doc = Document::parse(body);
    let texts = doc.texts();
    let mut keys = LineKeys::new(&texts);
    let candidates = recover::candidates(old, new);
    for candidate in &candidates {
        // A reading that would change nothing is no edit the model meant.
        if candidate.old == candidate.new {
            continue;
        }
        let sought = Sought { body, doc: &doc, texts: &texts, old: &candidate.old, new: &candidate.new };
        let Some((places, level)) = sought.find(&mut keys) else {
            continue;
        };
        if candidate.new_partly_numbered {
            return Err(EditError::PartlyNumberedNewText { edit: None });
        }
        let chosen = choose(places, edit.replace_all, hint.or(candidate.hint), level).map_err(|e| match e {
            // The copied numbers were a hint the model did not give as line_hint: not named as one.
            EditError::Ambiguous { edit, count, lines, level, .. } if hint.is_none() => {
                EditError::Ambiguous { edit, count, lines, level, hint: None }
            }
            other => other,
        })?;
        return Ok(Applied {
            content: sought.replace(&chosen),
            count: chosen.len(),
            level,
            reading: candidate.reading,
        });
    }
    // The loosest reading is the model's text without anything that was never in the file.
    let loosest = candidates.last().map_or(old, |candidate| candidate.old.as_str());
    let (lines, _) = model_lines(loosest);
    Err(EditError::NotFound { edit: None, closest: closest_region(&mut keys, &lines, hint) })
}

/// One reading of an edit, against one file body.
struct Sought<'a> {
    body: &'a str,
    doc: &'a Document<'a>,
    texts: &'a [&'a str],
    old: &'a str,
    new: &'a str,
}

impl Sought<'_> {
    /// Every place `old` is found at the first level that finds any.
    fn find(&self, keys: &mut LineKeys<'_>) -> Option<(Vec<Found>, MatchLevel)> {
        let (old_lines, old_trailing) = model_lines(self.old);
        MatchLevel::ALL.into_iter().find_map(|level| {
            let found = match level {
                MatchLevel::Exact => find_exact(self.doc, self.old),
                MatchLevel::LineEndings => find_lf(self.doc, self.old),
                _ => find_lines(self.doc, keys, level, &old_lines, old_trailing),
            };
            (!found.is_empty()).then_some((found, level))
        })
    }

    /// The body with `new` in place of each chosen match.
    fn replace(&self, chosen: &[Found]) -> String {
        let (old_lines, _) = model_lines(self.old);
        // A file with no line break has no ending to copy; then the model's own CRLF, if any, wins.
        let eol = self.doc.eol.or_else(|| self.new.contains("\r\n").then_some(Eol::CrLf));
        let mut out = String::with_capacity(self.body.len() + self.new.len());
        let mut style = FileStyle::default();
        let mut cursor = 0;
        for place in chosen {
            out.push_str(&self.body[cursor..place.bytes.start]);
            match &place.lines {
                None => out.push_str(&to_eol(self.new, eol)),
                Some(lines) => {
                    out.push_str(&reindented(self.new, &old_lines, self.texts, lines.clone(), eol, &mut style))
                }
            }
            cursor = place.bytes.end;
        }
        out.push_str(&self.body[cursor..]);
        out
    }
}

fn find_exact(doc: &Document<'_>, old: &str) -> Vec<Found> {
    find_overlapping(doc.body, old).into_iter().map(|start| found_bytes(doc, start..start + old.len())).collect()
}

fn find_lf(doc: &Document<'_>, old: &str) -> Vec<Found> {
    if !doc.body.contains('\r') && !old.contains('\r') {
        return Vec::new(); // Same as exact, which found nothing.
    }
    let body = LfText::new(doc.body);
    let old = LfText::new(old).text;
    find_overlapping(&body.text, &old)
        .into_iter()
        .map(|start| found_bytes(doc, body.to_raw(start)..body.to_raw(start + old.len())))
        .collect()
}

fn found_bytes(doc: &Document<'_>, bytes: Range<usize>) -> Found {
    let first_line = doc.line_of(bytes.start);
    let last_line = doc.line_of(bytes.end.saturating_sub(1).max(bytes.start));
    Found { bytes, first_line, last_line, lines: None }
}

fn find_lines(
    doc: &Document<'_>,
    keys: &mut LineKeys<'_>,
    level: MatchLevel,
    old: &[String],
    trailing: bool,
) -> Vec<Found> {
    let wanted = keys_of(old, level);
    find_runs(keys.get(level), &wanted)
        .into_iter()
        .filter_map(|first| {
            let last = first + old.len() - 1;
            let (start, end) = (doc.lines.get(first)?, doc.lines.get(last)?);
            let bytes = start.start..if trailing { end.next } else { end.end };
            Some(Found { bytes, first_line: first + 1, last_line: last + 1, lines: Some(first..last + 1) })
        })
        .collect()
}

/// Which matches to replace: all (non-overlapping), the only one, or the one nearest the hint.
fn choose(
    found: Vec<Found>,
    replace_all: bool,
    hint: Option<usize>,
    level: MatchLevel,
) -> Result<Vec<Found>, EditError> {
    if replace_all {
        let mut kept: Vec<Found> = Vec::new();
        for place in found {
            if kept.last().is_none_or(|last| place.bytes.start >= last.bytes.end) {
                kept.push(place);
            }
        }
        return Ok(kept);
    }
    if found.len() == 1 {
        return Ok(found);
    }
    let ambiguous = |hint| EditError::Ambiguous {
        edit: None,
        count: found.len(),
        lines: found.iter().map(|place| place.first_line).collect(),
        level,
        hint,
    };
    let Some(line) = hint else {
        return Err(ambiguous(None));
    };
    let distance = |place: &Found| place.first_line.saturating_sub(line) + line.saturating_sub(place.last_line);
    let nearest = found.iter().map(distance).min().unwrap_or(0);
    let mut closest = found.iter().filter(|place| distance(place) == nearest);
    match (closest.next(), closest.next()) {
        (Some(place), None) => Ok(vec![place.clone()]),
        _ => Err(ambiguous(Some(line))),
    }
}

/// `new` as lines in the file's indentation and line endings, for a line-based match.
fn reindented(
    new: &str,
    old: &[String],
    file: &[&str],
    matched: Range<usize>,
    eol: Option<Eol>,
    style: &mut FileStyle,
) -> String {
    let eol = eol.unwrap_or(Eol::Lf).as_str();
    let (new_lines, trailing) = model_lines(new);
    let old: Vec<&str> = old.iter().map(String::as_str).collect();
    let new_refs: Vec<&str> = new_lines.iter().map(String::as_str).collect();
    // The file's indentation style is read near the match: representative, and bounded when
    // replace_all re-indents thousands of matches.
    let nearby = &file[matched.start.saturating_sub(STYLE_WINDOW)..(matched.end + STYLE_WINDOW).min(file.len())];
    let plan = Reindent::in_style(&old, &new_refs, &file[matched], nearby, style);
    let mut out = new_refs.iter().map(|line| plan.line(line)).collect::<Vec<_>>().join(eol);
    if trailing {
        out.push_str(eol);
    }
    out
}

/// Gives `edited` the final newline `original` had, or takes away one it did not have.
fn keep_final_newline(edited: &mut String, original: &str) {
    if edited.is_empty() {
        return;
    }
    let had = original.ends_with('\n');
    if had && !edited.ends_with('\n') {
        edited.push_str(if original.ends_with("\r\n") { "\r\n" } else { "\n" });
    } else if !had && edited.ends_with('\n') {
        edited.pop();
        if edited.ends_with('\r') {
            edited.pop();
        }
    }
}

#[cfg(test)]
mod recover_tests;
#[cfg(test)]
mod tests;
