//! Making a turn's hunks from its checkpoint rows, once, and the note the model gets of the
//! hunks a person rejected.
//!
//! Rule: a turn's hunks are made from what was kept of it (the content before its first change
//! of each file and what each of its calls left), never from the file as it is now, so the
//! user's edits made since are never the agent's.

use std::collections::BTreeMap;

use super::{calls_of, lines, store_err, ReviewError, Reviewer, REVIEW_CALL};
use crate::store::{ChangeRow, HunkRow};

/// The turn's own change rows still in force (a reviewer's writes and undone rows left out).
fn turn_rows(r: Reviewer<'_>, turn: Option<&str>) -> Result<Vec<ChangeRow>, ReviewError> {
    Ok(r.store
        .changes(r.session_id)
        .map_err(store_err)?
        .into_iter()
        .filter(|c| c.undone_at.is_none() && !c.call_id.starts_with(REVIEW_CALL))
        .filter(|c| turn.is_none_or(|t| c.turn_id == t))
        .collect())
}

/// The session's last turn with changes still in force.
pub(super) fn last_turn(r: Reviewer<'_>) -> Result<Option<String>, ReviewError> {
    Ok(turn_rows(r, None)?.last().map(|c| c.turn_id.clone()))
}

fn name_of(c: &ChangeRow) -> Vec<u8> {
    c.exact_name().unwrap_or_else(|| c.path.as_bytes().to_vec())
}

/// A file's content before a turn and as the turn left it (`None`: absent).
pub(super) type Sides = (Option<Vec<u8>>, Option<Vec<u8>>);

/// The content of `turn`'s file `name` before the turn and as the turn left it (`None`:
/// absent). An error when the turn no longer has changes of it in force, or a blob is gone.
pub(super) fn sides(r: Reviewer<'_>, turn: &str, name: &[u8]) -> Result<Sides, ReviewError> {
    let rows: Vec<ChangeRow> = turn_rows(r, Some(turn))?.into_iter().filter(|c| name_of(c) == name).collect();
    let (Some(first), Some(last)) = (rows.first(), rows.last()) else {
        return Err(ReviewError::NoTurn(format!(
            "turn {turn} has no change of `{}` in force (it was undone)",
            String::from_utf8_lossy(name)
        )));
    };
    Ok((blob(r, &first.before_hash, &first.path)?, blob(r, &last.after_hash, &last.path)?))
}

fn blob(r: Reviewer<'_>, hash: &Option<String>, path: &str) -> Result<Option<Vec<u8>>, ReviewError> {
    hash.as_ref().map(|h| r.blobs.get(h)).transpose().map_err(|e| {
        ReviewError::Read(format!("the turn's content of `{path}` was not kept ({e}); undo the file instead"))
    })
}

/// The turn's hunks: stored ones, or made now (again while none is decided and the turn has
/// changed more since they were made).
pub(super) fn hunks_of(r: Reviewer<'_>, turn: &str) -> Result<Vec<HunkRow>, ReviewError> {
    let rows = turn_rows(r, Some(turn))?;
    let Some(newest) = rows.iter().map(|c| c.id).max() else {
        return Err(ReviewError::NoTurn(format!("turn {turn} has no file change to review")));
    };
    let stored = r.store.hunks(r.session_id, turn).map_err(store_err)?;
    if !stored.is_empty() && (stored[0].rows == newest || stored.iter().any(|h| h.state != "pending")) {
        return Ok(keep_in_force(stored, &rows));
    }
    let calls = calls_of(r.store, r.session_id)?;
    let mut files: BTreeMap<Vec<u8>, Vec<&ChangeRow>> = BTreeMap::new();
    for c in &rows {
        files.entry(name_of(c)).or_default().push(c);
    }
    let mut made = Vec::new();
    for (name, changes) in files {
        made.extend(file_hunks(r, &name, &changes, &calls, newest)?);
    }
    let stored = match r.store.replace_hunks(r.session_id, turn, made).map_err(store_err)? {
        Some(stored) => stored,
        None => r.store.hunks(r.session_id, turn).map_err(store_err)?,
    };
    Ok(keep_in_force(stored, &rows))
}

/// Hunks of files whose changes were undone since are not shown.
fn keep_in_force(hunks: Vec<HunkRow>, rows: &[ChangeRow]) -> Vec<HunkRow> {
    hunks.into_iter().filter(|h| rows.iter().any(|c| name_of(c) == h.name)).collect()
}

fn is_binary(b: &[u8]) -> bool {
    b.contains(&0) || std::str::from_utf8(b).is_err()
}

/// One file's hunks from its rows in the turn.
fn file_hunks(
    r: Reviewer<'_>,
    name: &[u8],
    changes: &[&ChangeRow],
    calls: &std::collections::HashMap<String, (String, Option<String>)>,
    newest: i64,
) -> Result<Vec<HunkRow>, ReviewError> {
    let (Some(first), Some(last)) = (changes.first(), changes.last()) else { return Ok(Vec::new()) };
    let special = |m: Option<u32>| m.is_some_and(|m| matches!(m & libc::S_IFMT, libc::S_IFDIR | libc::S_IFLNK));
    if special(first.before_mode) || special(last.after_mode) {
        // Folders and links are not hunks: undo puts them back.
        return Ok(Vec::new());
    }
    let base = blob(r, &first.before_hash, &first.path)?;
    let agent = blob(r, &last.after_hash, &last.path)?;
    let row = |c: &ChangeRow, kind: &str| {
        let (tool, command) = calls.get(&c.call_id).cloned().unwrap_or_else(|| ("(unknown)".into(), None));
        HunkRow {
            id: 0,
            session_id: r.session_id.to_string(),
            turn_id: c.turn_id.clone(),
            path: c.path.clone(),
            name: name.to_vec(),
            kind: kind.into(),
            base_start: 0,
            base_lines: 0,
            agent_start: 0,
            agent_lines: 0,
            old_text: String::new(),
            new_text: String::new(),
            call_id: c.call_id.clone(),
            tool,
            command,
            state: "pending".into(),
            told: false,
            decided_at: None,
            rows: newest,
        }
    };
    let text = |b: &[u8]| if is_binary(b) { String::new() } else { String::from_utf8_lossy(b).into_owned() };
    let count = |b: &[u8]| if is_binary(b) { 0 } else { lines::split(b).len() as u64 };
    Ok(match (&base, &agent) {
        (None, None) => Vec::new(),
        (None, Some(a)) => {
            let maker = changes.iter().find(|c| c.before_hash.is_none()).unwrap_or(first);
            vec![HunkRow { agent_lines: count(a), new_text: text(a), ..row(maker, "created") }]
        }
        (Some(b), None) => vec![HunkRow { base_lines: count(b), old_text: text(b), ..row(last, "deleted") }],
        (Some(b), Some(a)) if b == a => {
            let perms = |m: Option<u32>| m.map(|m| m & 0o7777);
            if perms(first.before_mode) != perms(last.after_mode) && last.after_mode.is_some() {
                vec![row(last, "mode")]
            } else {
                Vec::new()
            }
        }
        (Some(b), Some(a)) if is_binary(b) || is_binary(a) => vec![row(last, "binary")],
        (Some(b), Some(a)) => {
            // Each call's version, for which call made which hunk; without them all, the last.
            let versions: Option<Vec<Vec<u8>>> = changes
                .iter()
                .map(|c| match &c.after_hash {
                    Some(h) => r.blobs.get(h).ok(),
                    None => Some(Vec::new()),
                })
                .collect();
            let (versions, makers): (Vec<Vec<u8>>, Vec<&ChangeRow>) = match versions {
                Some(v) => (v, changes.to_vec()),
                None => (vec![a.clone()], vec![*last]),
            };
            let refs: Vec<&[u8]> = versions.iter().map(Vec::as_slice).collect();
            lines::make(b, &refs)
                .into_iter()
                .map(|m| HunkRow {
                    base_start: m.base_start as u64,
                    base_lines: m.base_lines as u64,
                    agent_start: m.agent_start as u64,
                    agent_lines: m.agent_lines as u64,
                    old_text: String::from_utf8_lossy(&m.old_text).into_owned(),
                    new_text: String::from_utf8_lossy(&m.new_text).into_owned(),
                    ..row(makers[m.call.clamp(1, makers.len()) - 1], "text")
                })
                .collect()
        }
    })
}

/// Past this, a rejected hunk's text is cut in the note.
const NOTE_TEXT: usize = 2000;

/// What the model is told of hunks a person rejected: each file, the lines as its turn left
/// them, and the text it had written there.
pub fn rejection_note(rejected: &[HunkRow]) -> String {
    let mut out = String::from(
        "[Bridle] The user reviewed your changes and rejected these hunks; their lines now hold what they held before your change. This note is from Bridle, not a request.",
    );
    for h in rejected {
        let (start, lines) = (h.agent_start + 1, h.agent_lines);
        let place = match (h.kind.as_str(), lines) {
            ("created", _) => "the file you created was removed".to_string(),
            ("deleted", _) => "the file you deleted was restored".to_string(),
            ("binary", _) => "your change of this binary file was undone".to_string(),
            ("mode", _) => "your change of its permissions was undone".to_string(),
            (_, 0) => format!("the lines you removed before line {start} (as your turn left the file) are back"),
            (_, 1) => format!("line {start} (as your turn left the file)"),
            (_, n) => format!("lines {start}-{} (as your turn left the file)", start + n - 1),
        };
        out.push_str(&format!("\n- {}: {place}, made by {}", h.path, h.tool));
        if let Some(command) = &h.command {
            out.push_str(&format!(" (`{command}`)"));
        }
        if !h.new_text.is_empty() {
            let mut text: String = h.new_text.chars().take(NOTE_TEXT).collect();
            if text.len() < h.new_text.len() {
                text.push_str("\n[...cut]");
            }
            out.push_str(&format!("; you had written:\n```\n{}\n```", text.trim_end_matches('\n')));
        }
    }
    out.push_str("\nRead these files again before you change them, and do not redo a rejected change unless the user asks for it.");
    out
}
