//! The head file (`audit.head`: the last row's id and hash, outside the database) and the lock
//! file (`audit.lock`) that serialises appends across processes.
//!
//! Rule: the head is only ever written while the exclusive lock is held, after the rows it
//! names are committed, and atomically (temp file, fsync, rename, fsync the directory) — so it
//! never names a row that was not committed and never goes backwards while the machine runs.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use rustix::fs::{flock, FlockOperation};
use serde::{Deserialize, Serialize};

/// Name of the head file in the data dir.
pub const HEAD_FILE: &str = "audit.head";
/// Name of the lock file in the data dir.
pub const LOCK_FILE: &str = "audit.lock";

/// The last committed row, as recorded outside the database.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Head {
    /// The last row's id (0: no rows yet).
    pub id: i64,
    /// The last row's hash ([`super::GENESIS`] when there are no rows).
    pub hash: String,
}

/// What the head file holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeadState {
    /// There is no head file.
    Missing,
    /// The file exists but does not parse, with why.
    Unreadable(String),
    /// The recorded head.
    At(Head),
}

/// Reads the head file in `dir`.
pub fn read(dir: &Path) -> HeadState {
    let path = dir.join(HEAD_FILE);
    match std::fs::read_to_string(&path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => HeadState::Missing,
        Err(e) => HeadState::Unreadable(e.to_string()),
        Ok(text) => match serde_json::from_str::<Head>(&text) {
            Ok(head) if head.id >= 0 && head.hash.len() == 64 => HeadState::At(head),
            Ok(head) => HeadState::Unreadable(format!("not a valid head: {head:?}")),
            Err(e) => HeadState::Unreadable(e.to_string()),
        },
    }
}

/// Replaces the head file in `dir` atomically (temp file, fsync, rename). Call only with the
/// lock held.
pub fn write(dir: &Path, head: &Head) -> io::Result<()> {
    let path = dir.join(HEAD_FILE);
    let temp = dir.join(format!("{HEAD_FILE}.tmp"));
    let mut file = File::create(&temp)?;
    let text = serde_json::to_string(head).map_err(io::Error::other)?;
    file.write_all(text.as_bytes())?;
    file.write_all(b"\n")?;
    file.sync_all()?;
    drop(file);
    // The directory is not synced: after a power cut the rename may be lost and the head lag
    // behind the log, which `verify` reports as rows after the head, not as damage. What must
    // never happen — a head ahead of the log, or an empty head — cannot: the rows are synced
    // before this is called and the file's content before its rename.
    std::fs::rename(&temp, &path)
}

/// The lock file, open for the life of an [`super::AuditLog`].
#[derive(Debug)]
pub struct LockFile {
    file: File,
    path: PathBuf,
}

impl LockFile {
    /// Opens (creating) the lock file in `dir`.
    pub fn open(dir: &Path) -> io::Result<LockFile> {
        let path = dir.join(LOCK_FILE);
        let file = OpenOptions::new().create(true).truncate(false).read(true).write(true).open(&path)?;
        Ok(LockFile { file, path })
    }

    /// Where the lock file is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Waits for the exclusive lock; it is released when the guard drops. Each open of the
    /// file is its own lock owner, so two handles in one process exclude each other too.
    pub fn lock(&self) -> io::Result<LockGuard<'_>> {
        loop {
            match flock(&self.file, FlockOperation::LockExclusive) {
                Ok(()) => return Ok(LockGuard { file: &self.file }),
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return Err(e.into()),
            }
        }
    }
}

/// Holds the exclusive lock.
#[derive(Debug)]
pub struct LockGuard<'a> {
    file: &'a File,
}

impl Drop for LockGuard<'_> {
    fn drop(&mut self) {
        // Closing the file would release it too; an unlock error leaves it to that.
        let _ = flock(self.file, FlockOperation::Unlock);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn head_round_trips_and_bad_files_are_reported() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(read(dir.path()), HeadState::Missing);
        let head = Head { id: 7, hash: "a".repeat(64) };
        write(dir.path(), &head).unwrap();
        assert_eq!(read(dir.path()), HeadState::At(head));
        std::fs::write(dir.path().join(HEAD_FILE), "{\"id\": 3").unwrap();
        assert!(matches!(read(dir.path()), HeadState::Unreadable(_)));
        std::fs::write(dir.path().join(HEAD_FILE), "{\"id\": 3, \"hash\": \"short\"}").unwrap();
        assert!(matches!(read(dir.path()), HeadState::Unreadable(_)));
    }

    #[test]
    fn two_handles_exclude_each_other() {
        let dir = tempfile::tempdir().unwrap();
        let a = LockFile::open(dir.path()).unwrap();
        let b = LockFile::open(dir.path()).unwrap();
        let guard = a.lock().unwrap();
        assert!(flock(&b.file, FlockOperation::NonBlockingLockExclusive).is_err());
        drop(guard);
        assert!(flock(&b.file, FlockOperation::NonBlockingLockExclusive).is_ok());
    }
}
