//! What one session knows about the files it touches: when it last read or wrote each one (a
//! stamp), and the checkpoint of every change it made.
//!
//! Rule: a file the session read is changed only if it is still as the session saw it (same
//! mtime, size and inode); otherwise the change is refused and the model is told to read it
//! again — so a user's edit made meanwhile is never overwritten unseen. A file never read here
//! can be changed: the plan read it just before.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::BlobStore;
use crate::clock::Clock;
use crate::fs::{FsError, Stamp, WorkspaceFs};
use crate::store::{ChangeRow, Store};

/// Why a file the session read may not be changed now.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum NotFresh {
    /// How the file stands now could not be read.
    #[error("{0}")]
    Unreadable(FsError),
    /// It changed on disk since the session last saw it; `what` it went through: "was
    /// deleted", "was replaced" (another inode) or "was modified". The text is for the model.
    #[error(
        "`{path}` {what} on disk since you last read it (by the user or another program); read it again, then make your change to what it holds now. Nothing was changed."
    )]
    Changed {
        /// Workspace-relative POSIX path.
        path: String,
        /// What happened to it.
        what: &'static str,
    },
}

/// One session's file memory; shared by all its tool calls.
pub struct SessionFiles {
    session_id: String,
    store: Arc<Store>,
    blobs: BlobStore,
    clock: Arc<dyn Clock>,
    stamps: Mutex<HashMap<PathBuf, Stamp>>,
}

impl std::fmt::Debug for SessionFiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionFiles").field("session_id", &self.session_id).finish_non_exhaustive()
    }
}

impl SessionFiles {
    /// The memory of `session_id` (what an earlier process of it saw included), keeping blobs
    /// in `<data_dir>/blobs`.
    pub fn new(session_id: &str, store: Arc<Store>, data_dir: &Path, clock: Arc<dyn Clock>) -> Self {
        let seen = store.seen(session_id).unwrap_or_else(|e| {
            tracing::warn!("session {session_id}: what it saw of its files cannot be read back: {e}");
            Vec::new()
        });
        Self {
            session_id: session_id.to_string(),
            store,
            blobs: BlobStore::new(data_dir),
            clock,
            stamps: Mutex::new(seen.into_iter().map(|(path, stamp)| (PathBuf::from(path), stamp)).collect()),
        }
    }

    fn stamps(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, Stamp>> {
        self.stamps.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The session read `rel` as it was at `stamp` (taken before reading).
    pub fn saw(&self, rel: &Path, stamp: Option<Stamp>) {
        {
            let mut stamps = self.stamps();
            match stamp {
                Some(stamp) => stamps.insert(rel.to_path_buf(), stamp),
                None => stamps.remove(rel),
            };
        }
        // Kept in the store too, so the next process of this session knows it.
        let path = super::shown(rel);
        if let Err(e) = self.store.set_seen(&self.session_id, &path, stamp) {
            tracing::warn!("session {}: cannot remember how `{path}` looked: {e}", self.session_id);
        }
    }

    /// How the session last saw `rel`, if it read or wrote it.
    pub fn seen(&self, rel: &Path) -> Option<Stamp> {
        self.stamps().get(rel).copied()
    }

    /// Whether `rel` may be changed: never read here, or unchanged since.
    pub fn check_fresh(&self, fs: &WorkspaceFs, rel: &Path) -> Result<(), NotFresh> {
        let Some(seen) = self.stamps().get(rel).copied() else { return Ok(()) };
        let now = fs.stamp(rel).map_err(NotFresh::Unreadable)?;
        if now == Some(seen) {
            return Ok(());
        }
        let what = match now {
            None => "was deleted",
            Some(now) if now.inode != seen.inode => "was replaced",
            Some(_) => "was modified",
        };
        Err(NotFresh::Changed { path: super::shown(rel), what })
    }

    /// Keeps `content` (a file's bytes before or after a change); returns its blob name.
    pub fn keep(&self, content: Option<&[u8]>) -> std::io::Result<Option<String>> {
        content.map(|bytes| self.blobs.put(bytes)).transpose()
    }

    /// Keeps what `reader` holds, streamed, not yet synced ([`Self::sync_kept`] makes a batch
    /// durable); returns its blob name.
    pub fn keep_stream(&self, reader: impl std::io::Read) -> std::io::Result<String> {
        self.blobs.put_stream(reader)
    }

    /// Makes every blob kept so far durable (one `syncfs` for a batch).
    pub fn sync_kept(&self) -> std::io::Result<()> {
        self.blobs.sync()
    }

    /// The content kept as `hash`, streamed (checked against its name at the end).
    pub fn blob(&self, hash: &str) -> std::io::Result<impl std::io::Read> {
        self.blobs.reader(hash)
    }

    /// Records the changes of one call at once (all or none); returns the row ids.
    pub fn record_all(&self, turn_id: &str, call_id: &str, changes: Vec<Recorded<'_>>) -> Result<Vec<i64>, String> {
        let rows: Vec<ChangeRow> = changes.into_iter().map(|c| self.row(turn_id, call_id, c)).collect();
        self.store.insert_changes(&rows).map_err(|e| e.to_string())
    }

    fn row(&self, turn_id: &str, call_id: &str, change: Recorded<'_>) -> ChangeRow {
        ChangeRow {
            id: 0,
            session_id: self.session_id.clone(),
            turn_id: turn_id.to_string(),
            call_id: call_id.to_string(),
            path: super::shown(change.rel),
            name: Some(std::os::unix::ffi::OsStrExt::as_bytes(change.rel.as_os_str()).to_vec()),
            before_hash: change.before_hash,
            before_mode: change.before_mode,
            after_hash: change.after_hash,
            after_mode: change.after_mode,
            undone_at: None,
            created_at: self.clock.now_ms(),
        }
    }

    /// Whether `path` has no change recorded yet in `turn_id` (undo needs that one's content).
    pub fn first_change_in_turn(&self, turn_id: &str, path: &str) -> bool {
        self.store.has_change(&self.session_id, turn_id, path).map(|has| !has).unwrap_or(true)
    }

    /// Forgets rows recorded for a write that then failed.
    pub fn forget(&self, ids: &[i64]) {
        if let Err(e) = self.store.delete_changes(ids) {
            tracing::warn!("cannot forget checkpoint rows {ids:?}: {e}");
        }
    }
}

/// The parts of a change row a commit knows.
pub struct Recorded<'a> {
    /// Workspace-relative path.
    pub rel: &'a std::path::Path,
    /// Blob before.
    pub before_hash: Option<String>,
    /// Mode before.
    pub before_mode: Option<u32>,
    /// Blob after.
    pub after_hash: Option<String>,
    /// Mode after (as it will be).
    pub after_mode: Option<u32>,
}
