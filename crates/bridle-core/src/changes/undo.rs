//! Undoing a turn's file changes, whole or for chosen paths.
//!
//! Rules: a file is put back only when it still holds exactly what the turn left in it; a file
//! a later turn changed again, or that the user or a command changed since, is refused by name
//! and left alone — an undo never overwrites work it did not make. An undo is a write Bridle
//! makes for the user, so each path is judged as a file tool's write on the path as it resolves
//! now ([`PathSandbox::judge_write`](crate::sandbox::PathSandbox::judge_write)): `.git/`
//! internals, protected paths and a path through a symlinked folder (one swapped for a link to
//! `.git/` since the turn) are refused by name, never written. Files the turn created are
//! removed; files it deleted come back, with their permissions.
//!
//! An undo is Bridle's own write, never the user's behind the session's back: the read stamps
//! the session has of the files put back or removed follow them (its next edit is judged
//! against what the undo left), and the model is told in its next request what was restored,
//! removed or refused ([`UndoReport::note`]).

use std::collections::BTreeMap;
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};

use serde::Serialize;

use bridle_protocol::HistoryItem;

use super::{blob_name, BlobStore, State};
use crate::fs::Stamp;
use crate::store::{ChangeRow, Store};
use crate::workspace::Workspace;

/// A file an undo left alone, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Refused {
    /// Workspace-relative POSIX path.
    pub path: String,
    /// Why, for the user.
    pub reason: String,
}

/// What an undo did (`bridle sessions undo` prints it as JSON).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UndoReport {
    /// The turn undone.
    pub turn_id: String,
    /// Files put back as they were before the turn (recreated when it had deleted them).
    pub restored: Vec<String>,
    /// Files the turn had created, removed.
    pub removed: Vec<String>,
    /// Files left alone.
    pub refused: Vec<Refused>,
    /// How each file put back or removed that the session had a stamp of looks now (`None`:
    /// absent), as the session's read stamps now remember it.
    #[serde(skip)]
    pub stamps: Vec<(String, Option<Stamp>)>,
}

impl UndoReport {
    /// What the model is told in its next request: which files were restored, removed or
    /// refused. `None` when the undo touched nothing and refused nothing.
    pub fn note(&self) -> Option<String> {
        if self.restored.is_empty() && self.removed.is_empty() && self.refused.is_empty() {
            return None;
        }
        let mut out =
            "[Bridle] The user undid the file changes of an earlier turn; this note is from Bridle, not a request."
                .to_string();
        if !self.restored.is_empty() {
            out.push_str(&format!("\nRestored to what they held before that turn: {}.", self.restored.join(", ")));
        }
        if !self.removed.is_empty() {
            out.push_str(&format!("\nRemoved (that turn had created them): {}.", self.removed.join(", ")));
        }
        for refused in &self.refused {
            out.push_str(&format!("\nNot undone, left as it is: {} ({}).", refused.path, refused.reason));
        }
        out.push_str("\nWhat you remember of these files is out of date: read them again before you change them.");
        Some(out)
    }

    /// The note as the history item the model sees.
    pub fn note_item(&self) -> Option<HistoryItem> {
        self.note().map(|text| HistoryItem::User { text })
    }
}

/// Undoes `turn_id` of `session_id` (its last turn with changes when `None`), for `paths`
/// only when given, in `workspace` (whose sandbox judges every write). An error when there is
/// nothing to undo or the store cannot be read.
pub fn undo(
    store: &Store,
    blobs: &BlobStore,
    workspace: &Workspace,
    session_id: &str,
    turn_id: Option<&str>,
    paths: &[String],
    now_ms: i64,
) -> Result<UndoReport, String> {
    let rows: Vec<ChangeRow> =
        store.changes(session_id).map_err(|e| e.to_string())?.into_iter().filter(|r| r.undone_at.is_none()).collect();
    let turn = match turn_id {
        Some(t) => t.to_string(),
        None => rows.last().map(|r| r.turn_id.clone()).ok_or("this session has no file change to undo")?,
    };
    let wanted = |path: &str| paths.is_empty() || paths.iter().any(|p| p.trim_start_matches("./") == path);
    // Each path of the turn, by its exact name: its first change (what it held before) and its
    // last (what the turn left). A name kept only as lossy text cannot be put back.
    let mut by_path: BTreeMap<Vec<u8>, (String, Vec<&ChangeRow>)> = BTreeMap::new();
    let mut report = UndoReport { turn_id: turn.clone(), ..UndoReport::default() };
    for row in rows.iter().filter(|r| r.turn_id == turn && wanted(&r.path)) {
        match row.exact_name() {
            Some(name) => by_path
                .entry(name)
                .or_insert_with(|| (shown_exact(&row.path, row.name.as_deref()), Vec::new()))
                .1
                .push(row),
            None if !report.refused.iter().any(|r| r.path == row.path) => report.refused.push(Refused {
                path: row.path.clone(),
                reason: "its name is not UTF-8 and was stored before names were kept exactly; it was not restored"
                    .into(),
            }),
            None => {}
        }
    }
    if by_path.is_empty() && report.refused.is_empty() {
        return Err(if paths.is_empty() {
            format!("turn {turn} changed no file that can still be undone")
        } else {
            format!("turn {turn} changed none of {} (or they were undone already)", paths.join(", "))
        });
    }
    let seen: std::collections::HashSet<String> =
        store.seen(session_id).map_err(|e| e.to_string())?.into_iter().map(|(path, _)| path).collect();
    let fs = &workspace.fs;
    let mut undone = Vec::new();
    // What each path goes back to, decided first; removals then run deepest first, the rest in
    // path order (a folder comes back before what was in it).
    let mut actions: Vec<(String, PathBuf, &ChangeRow, Vec<i64>)> = Vec::new();
    for (name, (path, changes)) in by_path {
        let (Some(first), Some(last)) = (changes.first(), changes.last()) else { continue };
        let refuse = |reason: String| Refused { path: path.clone(), reason };
        if let Some(later) = rows.iter().find(|r| r.exact_name().as_ref() == Some(&name) && r.id > last.id) {
            report
                .refused
                .push(refuse(format!("changed again by a later turn ({}); undo that one first", later.turn_id)));
            continue;
        }
        let rel = PathBuf::from(std::ffi::OsStr::from_bytes(&name));
        let link = |m: Option<u32>| m.is_some_and(|m| m & libc::S_IFMT == libc::S_IFLNK);
        let is_link = link(first.before_mode) || link(last.after_mode);
        if let Err(e) = super::judge_entry(workspace, &rel, is_link, session_id) {
            report.refused.push(refuse(format!("{e}; it was left as it is")));
            continue;
        }
        let now = match now_state(fs, &rel) {
            Ok(now) => now,
            Err(e) => {
                report.refused.push(refuse(format!("cannot be read: {e}")));
                continue;
            }
        };
        let ids = changes.iter().map(|r| r.id).collect();
        if same(&now, (&first.before_hash, first.before_mode)) {
            // Already as it was (put back by hand, or the write never happened).
            undone.extend(ids);
            continue;
        }
        if !same(&now, (&last.after_hash, last.after_mode)) {
            report.refused.push(refuse(
                "changed since this turn (by the user, a command or another program); it was left as it is".into(),
            ));
            continue;
        }
        actions.push((path, rel, first, ids));
    }
    let absent = |row: &ChangeRow| row.before_hash.is_none() && row.before_mode.is_none();
    let (mut removals, restores): (Vec<_>, Vec<_>) = actions.into_iter().partition(|(_, _, first, _)| absent(first));
    removals.reverse();
    for (path, rel, first, ids) in removals.into_iter().chain(restores) {
        let path = path.as_str();
        match put_back(fs, blobs, &rel, first) {
            Ok(restored) => {
                // A file the session never read nor wrote itself (a command's change) stays unread.
                if seen.contains(path) {
                    let stamp = fs.stamp(&rel).ok().flatten();
                    if let Err(e) = store.set_seen(session_id, path, stamp) {
                        tracing::warn!("session {session_id}: cannot remember how `{path}` looks after the undo: {e}");
                    }
                    report.stamps.push((path.to_string(), stamp));
                }
                if restored {
                    report.restored.push(path.to_string());
                } else {
                    report.removed.push(path.to_string());
                }
                undone.extend(ids);
            }
            Err(e) => report.refused.push(Refused { path: path.to_string(), reason: e }),
        }
    }
    report.restored.sort();
    report.removed.sort();
    store
        .mark_undone(&undone, now_ms)
        .map_err(|e| format!("the files were put back but the store was not told: {e}"))?;
    Ok(report)
}

/// A row's path as the report shows it: its text, or for a name that is not UTF-8 each byte that
/// is not as `\xNN` (two such names never look alike).
fn shown_exact(path: &str, name: Option<&[u8]>) -> String {
    let Some(bytes) = name.filter(|b| std::str::from_utf8(b).is_err()) else { return path.to_string() };
    bytes.utf8_chunks().fold(String::new(), |mut out, chunk| {
        out.push_str(chunk.valid());
        chunk.invalid().iter().for_each(|b| out.push_str(&format!("\\x{b:02x}")));
        out
    })
}

/// What stands at `rel` as a checkpoint row names it: the blob name of its content (a link's
/// target) and its mode (with the type for a link or a folder); `(None, None)`: absent.
fn now_state(fs: &crate::fs::WorkspaceFs, rel: &Path) -> Result<(Option<String>, Option<u32>), String> {
    let entry = fs.entry(rel).map_err(|e| e.to_string())?;
    let now = State::of(entry).ok_or("a FIFO, socket or device stands there")?;
    let hash = match &now {
        State::File { .. } => {
            let file = fs.open_read(rel).map_err(|e| e.to_string())?;
            Some(super::hash_stream(file).map_err(|e| e.to_string())?)
        }
        State::Link(target) => Some(blob_name(target.as_os_str().as_encoded_bytes())),
        State::Absent | State::Folder { .. } => None,
    };
    Ok((hash, now.row_mode()))
}

/// Whether `now` is what a row's side names: the same content and type, and the same mode
/// when the row knows it.
fn same(now: &(Option<String>, Option<u32>), (hash, mode): (&Option<String>, Option<u32>)) -> bool {
    let kind = |m: Option<u32>| m.map(|m| m & libc::S_IFMT).filter(|t| *t != 0).unwrap_or(libc::S_IFREG);
    let exists = |h: &Option<String>, m: Option<u32>| h.is_some() || m.is_some();
    if &now.0 != hash || exists(&now.0, now.1) != exists(hash, mode) {
        return false;
    }
    match (now.1, mode) {
        (Some(n), Some(m)) => kind(Some(n)) == kind(Some(m)) && n & 0o7777 == m & 0o7777,
        _ => true,
    }
}

/// Puts `rel` back as `first` found it; whether something was restored (false: removed).
fn put_back(fs: &crate::fs::WorkspaceFs, blobs: &BlobStore, rel: &Path, first: &ChangeRow) -> Result<bool, String> {
    let mode = first.before_mode.unwrap_or(0);
    let kind = mode & libc::S_IFMT;
    match &first.before_hash {
        // A folder the turn made goes only when empty: what someone put in it since stays.
        None if first.before_mode.is_none() => fs.remove_one(rel).map(|()| false).map_err(|e| e.to_string()),
        None if kind == libc::S_IFDIR => fs.place_folder(rel, mode & 0o7777).map(|()| true).map_err(|e| e.to_string()),
        None => Err("its checkpoint keeps no content".into()),
        Some(hash) => {
            if kind == libc::S_IFLNK {
                let bytes = blobs.get(hash).map_err(|e| format!("its checkpoint cannot be read: {e}"))?;
                let target = std::ffi::OsStr::from_bytes(&bytes);
                if matches!(fs.entry(rel), Ok(Some(crate::fs::Entry::Folder { .. }))) {
                    fs.remove_one(rel).map_err(|e| e.to_string())?;
                }
                return fs.place_link(rel, Path::new(target)).map(|()| true).map_err(|e| e.to_string());
            }
            // A link or a folder the turn put here goes first: a file is written only as a file.
            if !matches!(fs.entry(rel), Ok(None | Some(crate::fs::Entry::File { .. }))) {
                fs.remove_one(rel).map_err(|e| e.to_string())?;
            }
            // Streamed from the blob: a checkpoint of any size is never loaded whole.
            let mut content = blobs.reader(hash).map_err(|e| format!("its checkpoint cannot be read: {e}"))?;
            fs.write_atomic_from(rel, &mut content, first.before_mode.map(|m| m & 0o7777))
                .map(|_| true)
                .map_err(|e| e.to_string())
        }
    }
}

/// Undoes from outside a running session (`bridle sessions undo`): the session's own workspace,
/// under its lease, so the engine of another process is never undone under its feet.
/// `open_workspace` opens a workspace root with the user's sandbox (home, protected paths), as
/// a session would.
pub fn undo_stored(
    store: &Store,
    data_dir: &Path,
    open_workspace: impl FnOnce(&Path) -> std::io::Result<Workspace>,
    session_id: &str,
    turn_id: Option<&str>,
    paths: &[String],
    now_ms: i64,
) -> Result<UndoReport, String> {
    let info = store.session(session_id).map_err(|e| e.to_string())?;
    let _lease = crate::store::SessionLease::try_acquire(data_dir, session_id)
        .map_err(|e| format!("cannot take the session's lease: {e}"))?
        .ok_or("the session is open in another process (the app?); undo it there")?;
    let workspace = open_workspace(Path::new(&info.workspace))
        .map_err(|e| format!("cannot open the session's workspace {}: {e}", info.workspace))?;
    let report = undo(store, &BlobStore::new(data_dir), &workspace, session_id, turn_id, paths, now_ms)?;
    // The session, when resumed, reads its history from the store: the note waits there.
    if let Some(note) = report.note_item() {
        store
            .append(session_id, "", &note, now_ms)
            .map_err(|e| format!("the files were put back but the session was not told: {e}"))?;
    }
    Ok(report)
}

/// Deletes a session, its saved tool outputs and the checkpoint blobs no other session keeps;
/// returns how many blobs went. A session another process has open (a running `bridle run`, the
/// app) is refused.
pub fn delete_session(store: &Store, data_dir: &Path, session_id: &str) -> Result<usize, String> {
    let _lease = crate::store::SessionLease::try_acquire(data_dir, session_id)
        .map_err(|e| format!("cannot take the session's lease: {e}"))?
        .ok_or("the session is open in another Bridle process; close it there first")?;
    // A worktree's files are never dropped with its session: archived first, they stay in git.
    if let Some(record) = store.worktree(session_id).map_err(|e| e.to_string())? {
        if record.archived.is_none() && record.worktree.path.exists() {
            return Err(format!(
                "session {session_id} works in the worktree {} ({}); archive it first, so its work is kept in git",
                record.worktree.path.display(),
                record.worktree.branch
            ));
        }
    }
    store.delete_session(session_id).map_err(|e| e.to_string())?;
    // The id came from the store; still, only a plain name is joined to a path.
    let plain = Path::new(session_id).components().count() == 1
        && matches!(Path::new(session_id).components().next(), Some(std::path::Component::Normal(_)));
    if plain {
        let outputs = data_dir.join("tool-output").join(session_id);
        if let Err(e) = std::fs::remove_dir_all(&outputs) {
            if e.kind() != std::io::ErrorKind::NotFound {
                tracing::warn!("cannot remove {}: {e}", outputs.display());
            }
        }
    }
    let referenced = store.referenced_blobs().map_err(|e| e.to_string())?;
    BlobStore::new(data_dir)
        .collect(&referenced)
        .map_err(|e| format!("the session was deleted but its blobs were not: {e}"))
}
