//! Committing a plan: the only place a tool's file change reaches the disk.
//!
//! Rules: every file of the plan is locked (in path order, so two commits never deadlock), is
//! judged again as a write on the path as it resolves now ([`PathSandbox::judge_write`]: a
//! folder swapped for a symlink since the plan was made is refused by name), and must still hold
//! what the plan was computed from, and what the session last saw of it; the content before is
//! kept as a blob and recorded as the call's checkpoint before anything is written; the files
//! are written atomically one by one and, if one fails, those already written are put back and
//! the checkpoint rows forgotten — all files or none. The disk work runs on a blocking thread
//! that holds the locks; the call's timeout or an interrupt stops it between two files
//! ([`CallWrites`]): before writing it leaves nothing, while writing it puts back what it wrote,
//! and the call returns only after (its result says which).
//!
//! [`PathSandbox::judge_write`]: crate::sandbox::PathSandbox::judge_write

use std::path::Path;
use std::sync::Arc;

use super::files::{NotFresh, Recorded};
use super::stop::{CallWrites, WriteTicket};
use super::{blob_name, diff_stat, ChangeKind, ChangePlan, FileChange, PlannedFile, SessionFiles};
use crate::fs::{FsError, WorkspaceFs};
use crate::workspace::Workspace;

/// What a commit needs of the call it is made for: the workspace it writes to and the ids its
/// checkpoint rows carry (a tool's context gives it: `From<&ToolContext>`).
#[derive(Debug, Clone)]
pub struct CommitScope {
    /// The workspace: its sandbox judges each write again, its locks serialise them.
    pub workspace: Arc<Workspace>,
    /// The session making the call.
    pub session_id: String,
    /// The turn making the call (empty outside a session).
    pub turn_id: String,
    /// The call the checkpoint rows belong to.
    pub call_id: String,
    /// What the session knows of its files; `None` outside a session, where nothing is
    /// checkpointed.
    pub files: Option<Arc<SessionFiles>>,
    /// The call's writes: stopped at its timeout, waited for before it returns.
    pub writes: Arc<CallWrites>,
}

/// Why a plan was not written. Each message is for the model and says what was left: nothing, or
/// what putting back the files already written achieved.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CommitError {
    /// The sandbox refuses the write as the path resolves now (a folder became a symlink, the
    /// path became sensitive); its reason is given.
    #[error("{0}. Nothing was changed.")]
    Refused(String),
    /// The file no longer holds what the plan was computed from.
    #[error(
        "`{0}` changed on disk while this change was being prepared; read it again and redo the change. Nothing was changed."
    )]
    ChangedSincePlan(String),
    /// The session has not seen the file as it is now (changed since it was last read).
    #[error("{0}")]
    Stale(String),
    /// The content before could not be kept as a blob (path, reason).
    #[error("cannot keep a checkpoint of `{0}` ({1}); nothing was changed")]
    Keep(String, String),
    /// The checkpoint row could not be recorded (path, reason).
    #[error("cannot record a checkpoint of `{0}` ({1}); nothing was changed")]
    Record(String, String),
    /// Reading a file before the write failed.
    #[error("{0}")]
    Read(FsError),
    /// A write failed; `restored` says whether the files already written were put back.
    #[error(
        "{error}; {}.",
        if *restored { "the files already written were put back" } else { "putting back the files already written failed too" }
    )]
    Write {
        /// The failure.
        error: FsError,
        /// Whether every file already written holds its old content again.
        restored: bool,
    },
    /// The call was stopped (its timeout, an interrupt) before anything was written.
    #[error("stopped before anything was written; nothing was changed")]
    Stopped,
    /// The call was stopped while writing: what was written was put back (`restored`: all of it).
    #[error(
        "stopped while writing and rolled back: {}",
        if *restored { format!("the {written} file(s) already written were put back, nothing was changed") }
        else { format!("putting back the {written} file(s) already written failed; read them again to see their state") }
    )]
    RolledBack {
        /// Files written before the stop.
        written: usize,
        /// Whether every one holds its old content again.
        restored: bool,
    },
    /// The thread doing the writes ended before it was done (its reason).
    #[error("the write was interrupted ({0}); read the files again to see their state")]
    Interrupted(String),
}

/// Writes `plan`; returns what changed, in path order.
pub async fn commit(plan: &ChangePlan, scope: impl Into<CommitScope>) -> Result<Vec<FileChange>, CommitError> {
    let ctx: CommitScope = scope.into();
    let changed: Vec<PlannedFile> = plan.changed().cloned().collect();
    let guards = ctx.workspace.locks.write_all(changed.iter().map(|f| ctx.workspace.root().join(&f.rel))).await;
    // Begun in the same poll as the thread is spawned: a call dropped at its timeout either never
    // began the write or waits for it.
    let ticket = ctx.writes.begin();
    tokio::task::spawn_blocking(move || {
        let written = write_locked(&changed, &ctx, &ticket);
        drop(guards);
        ticket.end(Some(settled(&written)));
        written
    })
    .await
    .map_err(|e| CommitError::Interrupted(e.to_string()))?
}

/// What a write that settled after its call was stopped did, for the call's result.
pub(super) fn settled<T>(written: &Result<Vec<T>, CommitError>) -> String {
    match written {
        Ok(changes) => format!("written in full before it stopped ({} file(s))", changes.len()),
        Err(e) => e.to_string(),
    }
}

/// [`commit`]'s work once every file is locked.
fn write_locked(
    changed: &[PlannedFile],
    ctx: &CommitScope,
    ticket: &WriteTicket,
) -> Result<Vec<FileChange>, CommitError> {
    let fs = &ctx.workspace.fs;
    for f in changed {
        if ticket.stopped() {
            return Err(CommitError::Stopped);
        }
        ctx.workspace.sandbox.judge_write(&f.rel, &ctx.session_id).map_err(|e| CommitError::Refused(e.to_string()))?;
        let now = fs.read_if_exists(&f.rel).map_err(CommitError::Read)?;
        if now != f.before {
            return Err(CommitError::ChangedSincePlan(f.shown()));
        }
        if let Some(files) = &ctx.files {
            files.check_fresh(fs, &f.rel).map_err(|e| match e {
                NotFresh::Unreadable(e) => CommitError::Read(e),
                changed @ NotFresh::Changed { .. } => CommitError::Stale(changed.to_string()),
            })?;
        }
    }

    // The checkpoint first: the content before is safe on disk before the file changes (kept,
    // synced once, then its rows recorded in one transaction).
    let mut rows = Vec::new();
    if let Some(files) = &ctx.files {
        let mut recorded = Vec::new();
        for f in changed {
            if ticket.stopped() {
                return Err(CommitError::Stopped);
            }
            // Undo puts a file back as it was before the turn: only the turn's first change of
            // it needs its content kept; every row names its content by hash.
            let first = files.first_change_in_turn(&ctx.turn_id, &f.shown());
            let before = match f.before.as_deref() {
                Some(bytes) if first => files.keep_stream(bytes).map(Some),
                before => Ok(before.map(blob_name)),
            };
            let before_hash = before.map_err(|e| CommitError::Keep(f.shown(), e.to_string()))?;
            // What the call left is kept too: a review makes a turn's hunks from it (§10.1).
            let after_hash = f.after.as_deref().map(|bytes| files.keep_stream(bytes)).transpose();
            let after_hash = after_hash.map_err(|e| CommitError::Keep(f.shown(), e.to_string()))?;
            let before_mode = fs.mode(&f.rel).map_err(CommitError::Read)?;
            let after_mode = f.after.as_ref().map(|_| before_mode.unwrap_or(0o644));
            recorded.push(Recorded { rel: &f.rel, before_hash, before_mode, after_hash, after_mode });
        }
        // Kept unsynced, made durable at once (one `syncfs`), before any row names them.
        files.sync_kept().map_err(|e| CommitError::Keep("(checkpoints)".into(), e.to_string()))?;
        rows = files
            .record_all(&ctx.turn_id, &ctx.call_id, recorded)
            .map_err(|e| CommitError::Record("(checkpoints)".into(), e))?;
    }

    let mut done: Vec<&PlannedFile> = Vec::new();
    // Puts back what was written (last first) and forgets the checkpoint; whether all went back.
    let put_back = |done: &[&PlannedFile]| {
        let restored = done.iter().rev().all(|d| put(fs, &d.rel, d.before.as_deref()).is_ok());
        if let Some(files) = &ctx.files {
            files.forget(&rows);
        }
        restored
    };
    for f in changed {
        if ticket.stopped() {
            return Err(CommitError::RolledBack { written: done.len(), restored: put_back(&done) });
        }
        if let Err(e) = put(fs, &f.rel, f.after.as_deref()) {
            return Err(CommitError::Write { error: e, restored: put_back(&done) });
        }
        done.push(f);
    }

    if let Some(files) = &ctx.files {
        // The session has now seen what it wrote: its next change of the file is not stale.
        for f in changed {
            files.saw(&f.rel, fs.stamp(&f.rel).ok().flatten());
        }
    }
    Ok(changed.iter().map(file_change).collect())
}

/// Leaves `rel` holding `content`, or absent.
fn put(fs: &WorkspaceFs, rel: &Path, content: Option<&[u8]>) -> Result<(), FsError> {
    match content {
        Some(bytes) => fs.write_atomic(rel, bytes).map(|_| ()),
        None => match fs.remove_file(rel) {
            Err(e) if e.is_not_found() => Ok(()),
            other => other,
        },
    }
}

fn file_change(f: &PlannedFile) -> FileChange {
    let diff = f.diff();
    let (added, removed) = diff_stat(&diff);
    let kind = match (&f.before, &f.after) {
        (None, _) => ChangeKind::Created,
        (_, None) => ChangeKind::Deleted,
        _ => ChangeKind::Modified,
    };
    FileChange { path: f.shown(), kind, diff, added, removed, bytes: f.after.as_ref().map_or(0, Vec::len) }
}
