//! Which process has a session open: an exclusive `flock` on `<data-dir>/sessions/<id>.lock`.
//!
//! Rule: one process runs a session at a time. Another process that answers one of its
//! approvals only records the answer when the lease is held elsewhere (the holder picks it up);
//! when nobody holds it, the answerer takes the lease and resumes the turn itself. The kernel
//! drops the lock when its holder dies, so a crash never leaves a session locked.
//!
//! Whether a session is held is asked without taking its lease: the holder also keeps a shared
//! `flock` on `<id>.live`, and [`SessionLease::is_held`] tries that file exclusively for an
//! instant, so a list never makes a process that opens the session at that moment fail.

use std::fs::File;
use std::path::Path;

use rustix::fs::{flock, FlockOperation};

/// A held lease; released when dropped.
#[derive(Debug)]
pub struct SessionLease {
    _file: Option<File>,
    _live: Option<File>,
}

impl SessionLease {
    /// Takes the lease of `session_id` under `data_dir`; `Ok(None)` when another process
    /// holds it.
    pub fn try_acquire(data_dir: &Path, session_id: &str) -> std::io::Result<Option<SessionLease>> {
        let file = open(data_dir, session_id, "lock")?;
        match flock(&file, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => {}
            Err(rustix::io::Errno::WOULDBLOCK) => return Ok(None),
            Err(e) => return Err(e.into()),
        }
        // Shared and waited for: a prober holds it exclusively only for an instant.
        let live = open(data_dir, session_id, "live")?;
        flock(&live, FlockOperation::LockShared)?;
        Ok(Some(SessionLease { _file: Some(file), _live: Some(live) }))
    }

    /// Whether a process holds the lease of `session_id` now (its own included).
    pub fn is_held(data_dir: &Path, session_id: &str) -> std::io::Result<bool> {
        if !data_dir.join("sessions").join(format!("{session_id}.live")).exists() {
            return Ok(false);
        }
        let live = open(data_dir, session_id, "live")?;
        match flock(&live, FlockOperation::NonBlockingLockExclusive) {
            // Dropping the file releases it at once.
            Ok(()) => Ok(false),
            Err(rustix::io::Errno::WOULDBLOCK) => Ok(true),
            Err(e) => Err(e.into()),
        }
    }

    /// A lease that guards nothing: for sessions without a data dir on disk (tests with an
    /// in-memory store).
    pub fn unguarded() -> SessionLease {
        SessionLease { _file: None, _live: None }
    }
}

/// `<data-dir>/sessions/<id>.<ext>`, created if missing.
fn open(data_dir: &Path, session_id: &str, ext: &str) -> std::io::Result<File> {
    let dir = data_dir.join("sessions");
    std::fs::create_dir_all(&dir)?;
    // Session ids are Bridle's UUIDs; anything else is refused rather than joined as a path.
    if session_id.is_empty() || !session_id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, format!("bad session id `{session_id}`")));
    }
    File::options().create(true).truncate(false).write(true).open(dir.join(format!("{session_id}.{ext}")))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn one_holder_at_a_time_and_released_on_drop() {
        let dir = tempfile::tempdir().unwrap();
        let first = SessionLease::try_acquire(dir.path(), "abc-1").unwrap();
        assert!(first.is_some());
        assert!(SessionLease::try_acquire(dir.path(), "abc-1").unwrap().is_none());
        assert!(SessionLease::try_acquire(dir.path(), "abc-2").unwrap().is_some());
        assert!(SessionLease::is_held(dir.path(), "abc-1").unwrap());
        assert!(!SessionLease::is_held(dir.path(), "abc-3").unwrap());
        drop(first);
        assert!(!SessionLease::is_held(dir.path(), "abc-1").unwrap());
        assert!(SessionLease::try_acquire(dir.path(), "abc-1").unwrap().is_some());
        assert!(SessionLease::try_acquire(dir.path(), "../x").is_err());
    }
}
