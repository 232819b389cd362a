//! Which process has a session open: an exclusive `flock` on `<data-dir>/sessions/<id>.lock`.
//!
//! Rule: one process runs a session at a time. Another process that answers one of its
//! approvals only records the answer when the lease is held elsewhere (the holder picks it up);
//! when nobody holds it, the answerer takes the lease and resumes the turn itself. The kernel
//! drops the lock when its holder dies, so a crash never leaves a session locked.

use std::fs::File;
use std::path::Path;

use rustix::fs::{flock, FlockOperation};

/// A held lease; released when dropped.
#[derive(Debug)]
pub struct SessionLease {
    _file: Option<File>,
}

impl SessionLease {
    /// Takes the lease of `session_id` under `data_dir`; `Ok(None)` when another process
    /// holds it.
    pub fn try_acquire(data_dir: &Path, session_id: &str) -> std::io::Result<Option<SessionLease>> {
        let dir = data_dir.join("sessions");
        std::fs::create_dir_all(&dir)?;
        // Session ids are Bridle's UUIDs; anything else is refused rather than joined as a path.
        if session_id.is_empty() || !session_id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("bad session id `{session_id}`"),
            ));
        }
        let file =
            File::options().create(true).truncate(false).write(true).open(dir.join(format!("{session_id}.lock")))?;
        match flock(&file, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => Ok(Some(SessionLease { _file: Some(file) })),
            Err(rustix::io::Errno::WOULDBLOCK) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// A lease that guards nothing: for sessions without a data dir on disk (tests with an
    /// in-memory store).
    pub fn unguarded() -> SessionLease {
        SessionLease { _file: None }
    }
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
        drop(first);
        assert!(SessionLease::try_acquire(dir.path(), "abc-1").unwrap().is_some());
        assert!(SessionLease::try_acquire(dir.path(), "../x").is_err());
    }
}
