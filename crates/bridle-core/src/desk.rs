//! A session's own git worktree through its life (DESIGN §16): made for a new session, put away
//! and brought back, handed to the main checkout. Every front end (`bridle`, the window, ACP)
//! does these here, so each is checked, recorded and audited the same way.
//!
//! Rules: a worktree lives at `<data-dir>/worktrees/<session id>` and is recorded with its
//! session before the session first runs; archiving and restoring hold the session's lease, so
//! a session that runs anywhere is refused and none starts meanwhile; only a worktree Bridle
//! recorded is ever archived (removed); each step that changes something is one audit row of
//! kind `worktree`.

use std::path::{Path, PathBuf};

use crate::audit::{AuditKind, AuditRecord, AuditSink};
use crate::store::{SessionLease, Store, StoreError, WorktreeRecord};
use crate::worktrees::handoff::{self, Applied, HandoffError};
use crate::worktrees::{self, Worktree, WorktreeError};

/// Why a worktree step refused.
#[derive(Debug, thiserror::Error)]
pub enum DeskError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Git or the files refused.
    #[error(transparent)]
    Worktree(#[from] WorktreeError),
    /// A hand-off refused.
    #[error(transparent)]
    Handoff(#[from] HandoffError),
    /// The session has no worktree of Bridle's.
    #[error("session {0} does not work in a worktree of its own")]
    NoWorktree(String),
    /// The session runs in a Bridle process.
    #[error("session {0} is running; stop it first")]
    Running(String),
    /// The session's worktree is already archived.
    #[error("session {0} is already archived")]
    Archived(String),
    /// The session's worktree is not archived, and its folder is there.
    #[error("session {0} is not archived")]
    NotArchived(String),
    /// The session's worktree folder is gone.
    #[error("the worktree of session {id} is gone ({path}); restore or archive it first")]
    Gone {
        /// The session.
        id: String,
        /// Its folder.
        path: String,
    },
    /// The session's lease could not be taken.
    #[error("cannot lock session {id}: {source}")]
    Lease {
        /// The session.
        id: String,
        /// The OS error.
        source: std::io::Error,
    },
}

/// Where Bridle keeps session `id`'s worktree.
pub fn worktree_path(data_dir: &Path, id: &str) -> PathBuf {
    data_dir.join("worktrees").join(id)
}

/// Makes a new session that works in a worktree of the main checkout `origin`, on branch
/// `bridle/<name>` (the session id's first 8 characters when no name is given) cut from `base`
/// (the checkout's HEAD when `None`). Returns the session's id, for the front end to start it
/// with [`crate::engine::SessionSpec::Resume`].
pub fn new_session(
    store: &Store,
    audit: &AuditSink,
    data_dir: &Path,
    origin: &Path,
    name: Option<&str>,
    base: Option<&str>,
    now_ms: i64,
) -> Result<(String, Worktree), DeskError> {
    let id = crate::store::new_id();
    let name = name.map(str::to_string).unwrap_or_else(|| id.chars().take(8).collect());
    let worktree = worktrees::create(origin, &worktree_path(data_dir, &id), &name, base)?;
    let recorded = store
        .create_session(&id, &worktree.path.display().to_string(), now_ms)
        .and_then(|()| store.record_worktree(&id, &worktree, now_ms));
    if let Err(e) = recorded {
        // Never a worktree no record names: it would be nobody's to archive.
        let _ = worktrees::archive(&worktree, &id);
        return Err(e.into());
    }
    audit.record(row(&id, "created", &worktree, now_ms, serde_json::json!({ "included": worktree.included.len() })));
    Ok((id, worktree))
}

/// Puts session `id`'s worktree away (DESIGN §16): its staged, unstaged and untracked states
/// under `refs/bridle/archive/<id>`, then its folder removed. Refused while the session runs.
pub fn archive(store: &Store, audit: &AuditSink, data_dir: &Path, id: &str, now_ms: i64) -> Result<(), DeskError> {
    let _lease = lease(data_dir, id)?;
    let record = record(store, id)?;
    if record.archived.is_some() {
        return Err(DeskError::Archived(id.to_string()));
    }
    let w = &record.worktree;
    let gone = w.path.symlink_metadata().is_err();
    let archived = if gone { worktrees::archive_gone(w, id)? } else { worktrees::archive(w, id)? };
    store.worktree_archived(id, &archived, now_ms)?;
    let detail = serde_json::json!({ "ref": archived.reference, "head": archived.head, "folderWasGone": gone });
    audit.record(row(id, "archived", w, now_ms, detail));
    Ok(())
}

/// Brings session `id`'s worktree back: from its archive, or, when its folder was removed by
/// hand, its branch checked out again. Refused while the session runs.
pub fn restore(store: &Store, audit: &AuditSink, data_dir: &Path, id: &str, now_ms: i64) -> Result<(), DeskError> {
    let _lease = lease(data_dir, id)?;
    let record = record(store, id)?;
    let w = &record.worktree;
    let archived = match record.archived {
        Some(archived) => archived,
        None if w.path.symlink_metadata().is_err() => worktrees::archive_gone(w, id)?,
        None => return Err(DeskError::NotArchived(id.to_string())),
    };
    let back = worktrees::restore(w, &archived)?;
    store.worktree_back(id, &back)?;
    audit.record(row(id, "restored", &back, now_ms, serde_json::json!({ "head": archived.head })));
    Ok(())
}

/// Brings session `id`'s changes since its base into the main checkout, uncommitted; a dry run
/// only says what they are (and is not audited).
pub fn apply(store: &Store, audit: &AuditSink, id: &str, dry_run: bool, now_ms: i64) -> Result<Applied, DeskError> {
    let w = present(store, id)?;
    let applied = handoff::apply(&w, dry_run)?;
    if !dry_run {
        let files: Vec<String> = applied.files.iter().map(|f| f.display().to_string()).collect();
        audit.record(row(id, "applied", &w, now_ms, serde_json::json!({ "files": files })));
    }
    Ok(applied)
}

/// Merges session `id`'s branch into its main checkout, which must be clean; returns the merge
/// commit.
pub fn merge(store: &Store, audit: &AuditSink, id: &str, now_ms: i64) -> Result<String, DeskError> {
    let w = present(store, id)?;
    let commit = handoff::merge(&w.origin, &w.branch)?;
    audit.record(row(id, "merged", &w, now_ms, serde_json::json!({ "commit": commit })));
    Ok(commit)
}

fn record(store: &Store, id: &str) -> Result<WorktreeRecord, DeskError> {
    store.session(id)?;
    store.worktree(id)?.ok_or_else(|| DeskError::NoWorktree(id.to_string()))
}

/// The session's worktree, which must be there (not archived, not gone).
fn present(store: &Store, id: &str) -> Result<Worktree, DeskError> {
    let record = record(store, id)?;
    if record.archived.is_some() {
        return Err(DeskError::Archived(id.to_string()));
    }
    if record.worktree.path.symlink_metadata().is_err() {
        let path = record.worktree.path.display().to_string();
        return Err(DeskError::Gone { id: id.to_string(), path });
    }
    Ok(record.worktree)
}

fn lease(data_dir: &Path, id: &str) -> Result<SessionLease, DeskError> {
    match SessionLease::try_acquire(data_dir, id) {
        Ok(Some(lease)) => Ok(lease),
        Ok(None) => Err(DeskError::Running(id.to_string())),
        Err(source) => Err(DeskError::Lease { id: id.to_string(), source }),
    }
}

/// One audit row of kind `worktree`: what was done, to which worktree.
fn row(id: &str, action: &str, w: &Worktree, now_ms: i64, detail: serde_json::Value) -> AuditRecord {
    let mut payload = serde_json::json!({
        "action": action,
        "path": w.path.display().to_string(),
        "origin": w.origin.display().to_string(),
        "branch": w.branch,
        "base": w.base,
    });
    if let (Some(all), serde_json::Value::Object(more)) = (payload.as_object_mut(), detail) {
        all.extend(more);
    }
    AuditRecord::new(AuditKind::Worktree, now_ms).session(id).status(action).payload(payload)
}
