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
//!
//! Both locks are released by an explicit unlock, not only by closing the files: a process forked
//! at that moment (a command starting on another thread) holds a copy of every open file until it
//! runs its program, and the kernel keeps a `flock` while any copy is open.

use std::fs::File;
use std::path::Path;

use rustix::fs::{flock, FlockOperation};

/// A held lease; released when dropped.
#[derive(Debug)]
pub struct SessionLease {
    file: Option<File>,
    live: Option<File>,
}

impl Drop for SessionLease {
    fn drop(&mut self) {
        // Closing the files would release the locks too, unless a forked copy is open: an
        // unlock error leaves it to that.
        for file in [&self.live, &self.file].into_iter().flatten() {
            let _ = flock(file, FlockOperation::Unlock);
        }
    }
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
        Ok(Some(SessionLease { file: Some(file), live: Some(live) }))
    }

    /// Whether a process holds the lease of `session_id` now (its own included).
    pub fn is_held(data_dir: &Path, session_id: &str) -> std::io::Result<bool> {
        if !data_dir.join("sessions").join(format!("{session_id}.live")).exists() {
            return Ok(false);
        }
        let live = open(data_dir, session_id, "live")?;
        match flock(&live, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => {
                // Released by name, as the holder's are (see the module's doc).
                let _ = flock(&live, FlockOperation::Unlock);
                Ok(false)
            }
            Err(rustix::io::Errno::WOULDBLOCK) => Ok(true),
            Err(e) => Err(e.into()),
        }
    }

    /// A lease that guards nothing: for sessions without a data dir on disk (tests with an
    /// in-memory store).
    pub fn unguarded() -> SessionLease {
        SessionLease { file: None, live: None }
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

    /// A process forked while the lease is held has a copy of the lease's files until it runs its
    /// program (std's spawn returns only then, so it runs on a thread of its own here, and the
    /// child waits a second before its exec); dropping the lease releases it all the same.
    #[test]
    #[allow(unsafe_code)]
    fn a_forked_copy_of_the_files_does_not_keep_the_lease() {
        use std::io::Read;
        use std::os::fd::{AsRawFd, BorrowedFd};
        use std::os::unix::process::CommandExt;
        let dir = tempfile::tempdir().unwrap();
        let lease = SessionLease::try_acquire(dir.path(), "abc-1").unwrap().unwrap();
        let (mut forked, writer) = std::io::pipe().unwrap();
        let tell = writer.as_raw_fd();
        let mut command = std::process::Command::new("true");
        // SAFETY: write and nanosleep are async-signal-safe, and the pipe's end is open in the
        // parent until the spawn returns; the child does nothing else before its exec.
        unsafe {
            command.pre_exec(move || {
                rustix::io::write(BorrowedFd::borrow_raw(tell), b"f")?;
                std::thread::sleep(std::time::Duration::from_secs(1));
                Ok(())
            });
        }
        let spawning = std::thread::spawn(move || command.status().unwrap());
        forked.read_exact(&mut [0]).unwrap();
        drop(lease);
        let held = SessionLease::is_held(dir.path(), "abc-1").unwrap();
        let again = SessionLease::try_acquire(dir.path(), "abc-1").unwrap();
        assert!(spawning.join().unwrap().success());
        assert!(!held, "the dropped lease is still held through the child's copy of its files");
        assert!(again.is_some());
    }
}
