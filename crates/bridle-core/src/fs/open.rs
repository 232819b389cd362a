//! How a file tool's I/O opens a file to read: it must turn out to be a regular file.
//!
//! Rules: a file is opened with `O_NONBLOCK` and `O_NOCTTY` — opening a FIFO for reading waits
//! for a writer, and a terminal could become the process's controlling one — and judged by
//! `fstat` on the open handle, never by a look at the path before (a FIFO swapped in after a look
//! would still be opened); `O_NONBLOCK` is cleared again before a regular file is read.

use std::io;
use std::path::Path;

use rustix::fs::{FileType, OFlags};
use rustix::io::Errno;

use super::FsError;

/// Flags every open for reading adds (see the module's rule).
pub(crate) fn no_wait_flags() -> i32 {
    // The bits are small positive constants (0o4000 | 0o400); the cast cannot truncate.
    (OFlags::NONBLOCK | OFlags::NOCTTY).bits() as i32
}

/// `O_NOFOLLOW`, for opens by a path that must not end in a symlink (the walkers' files).
pub(crate) fn no_follow_flag() -> i32 {
    OFlags::NOFOLLOW.bits() as i32
}

/// What a file that is not regular is, as a refusal names it (`None` for a regular file, a
/// folder or a symlink, which the callers judge themselves).
pub fn special_kind(mode: u32) -> Option<&'static str> {
    match FileType::from_raw_mode(mode) {
        FileType::RegularFile | FileType::Directory | FileType::Symlink => None,
        FileType::Fifo => Some("a FIFO (named pipe)"),
        FileType::Socket => Some("a socket"),
        FileType::CharacterDevice | FileType::BlockDevice => Some("a device"),
        FileType::Unknown => Some("not a regular file"),
    }
}

/// `file` (opened for reading with [`no_wait_flags`]) and its metadata when it is a regular file,
/// with `O_NONBLOCK` cleared; else why not. `shown` names it in the error.
pub fn regular_file(file: std::fs::File, shown: &Path) -> Result<(std::fs::File, std::fs::Metadata), FsError> {
    use std::os::unix::fs::MetadataExt as _;
    let meta = file.metadata().map_err(|e| FsError::from_io(shown, e))?;
    if meta.is_dir() {
        return Err(FsError::IsDirectory(shown.display().to_string()));
    }
    if let Some(kind) = special_kind(meta.mode()) {
        return Err(FsError::NotRegular { path: shown.display().to_string(), kind });
    }
    // Non-blocking reads of a regular file behave as blocking ones, but a reader handed this
    // file should not have to know that.
    let flags = rustix::fs::fcntl_getfl(&file).map_err(|e| FsError::from_io(shown, e.into()))?;
    rustix::fs::fcntl_setfl(&file, flags - OFlags::NONBLOCK).map_err(|e| FsError::from_io(shown, e.into()))?;
    Ok((file, meta))
}

/// Whether opening failed because the path is a socket (or a FIFO opened for writing with no
/// reader): `ENXIO`, which names neither.
pub(crate) fn is_no_device(e: &io::Error) -> bool {
    e.raw_os_error() == Some(Errno::NXIO.raw_os_error())
}
