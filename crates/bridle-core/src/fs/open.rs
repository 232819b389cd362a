//! The two ways a file tool's I/O may open something: a file to read, which must turn out to be
//! a regular file, and a folder on the way to a write, which must not be a symlink.
//!
//! Rules: a file is opened with `O_NONBLOCK` and `O_NOCTTY` — opening a FIFO for reading waits
//! for a writer, and a terminal could become the process's controlling one — and judged by
//! `fstat` on the open handle: a look at the path before proves nothing (a FIFO swapped in after
//! the look would still be opened); `O_NONBLOCK` is cleared again before a regular file is read.
//! A folder on the way to a write is opened one name at a time with `O_NOFOLLOW`, so a folder
//! swapped for a symlink (to `.git/`, or anywhere) is refused by name rather than written through.

use std::ffi::OsStr;
use std::io;
use std::path::{Component, Path, PathBuf};

use cap_std::fs::Dir;
use rustix::fs::{FileType, Mode, OFlags};
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

/// A file Bridle knows by its full name rather than beneath the workspace's handle (its own
/// config folder's files, a saved tool output, a file a walker met, the git folder a worktree's
/// `.git` names), opened for reading as a workspace file is: never through a final symlink, never
/// waiting on a FIFO, and kept only when it is a regular file.
pub fn open_named(path: &Path) -> Result<(std::fs::File, std::fs::Metadata), FsError> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(no_wait_flags() | no_follow_flag())
        .open(path)
        .map_err(|e| FsError::from_io(path, e))?;
    regular_file(file, path)
}

/// [`open_named`]'s file read whole, or refused when it holds more than `limit` bytes (it is
/// never read past the limit, so a file that grows while read cannot grow Bridle).
pub fn read_named(path: &Path, limit: u64) -> Result<Vec<u8>, FsError> {
    let (file, meta) = open_named(path)?;
    read_bounded(file, meta.len(), path, limit)
}

/// An open regular file of `size` bytes read whole, or refused past `limit` (`shown` names it).
pub(super) fn read_bounded(file: std::fs::File, size: u64, shown: &Path, limit: u64) -> Result<Vec<u8>, FsError> {
    let too_large = || FsError::TooLarge { path: shown.display().to_string(), limit };
    if size > limit {
        return Err(too_large());
    }
    let mut bytes = Vec::with_capacity(size as usize);
    io::Read::read_to_end(&mut io::Read::take(file, limit + 1), &mut bytes).map_err(|e| FsError::from_io(shown, e))?;
    if bytes.len() as u64 > limit {
        return Err(too_large());
    }
    Ok(bytes)
}

/// Whether opening failed because the path is a socket (or a FIFO opened for writing with no
/// reader): `ENXIO`, which names neither.
pub(crate) fn is_no_device(e: &io::Error) -> bool {
    e.raw_os_error() == Some(Errno::NXIO.raw_os_error())
}

/// The folder holding `rel` beneath `root`, opened one name at a time without following a
/// symlink, and made where missing when `create`. `rel` names a file: its last name is not
/// opened.
pub(crate) fn parent_dir(root: &Dir, rel: &Path, create: bool) -> Result<Dir, FsError> {
    let mut dir = root.try_clone().map_err(|e| FsError::from_io(rel, e))?;
    let Some(parent) = rel.parent() else { return Ok(dir) };
    let mut walked = PathBuf::new();
    for component in parent.components() {
        let name = match component {
            Component::CurDir => continue,
            Component::Normal(name) => name,
            // The paths handed here are resolved and workspace-relative: `..` or `/` in one
            // means something upstream went wrong; do not guess where it leads.
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => {
                return Err(FsError::Escaped(rel.display().to_string()))
            }
        };
        walked.push(name);
        let opened = match open_folder(&dir, name) {
            Err(e) if create && e.kind() == io::ErrorKind::NotFound => {
                match rustix::fs::mkdirat(&dir, name, Mode::from_raw_mode(0o777)) {
                    Ok(()) | Err(Errno::EXIST) => open_folder(&dir, name),
                    Err(e) => Err(e.into()),
                }
            }
            other => other,
        };
        dir = match opened {
            Ok(next) => next,
            Err(_) if dir.symlink_metadata(name).is_ok_and(|m| m.file_type().is_symlink()) => {
                return Err(FsError::SymlinkedFolder { path: rel.display().to_string(), folder: shown(&walked) });
            }
            Err(e) => return Err(FsError::from_io(rel, e)),
        };
    }
    Ok(dir)
}

/// The file `name` in `dir` opened for reading as [`open_named`] opens one: no link followed,
/// never waiting, regular files only.
pub fn open_in(dir: &Dir, name: &OsStr) -> Result<std::fs::File, FsError> {
    let flags = OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY;
    let fd =
        rustix::fs::openat(dir, name, flags, Mode::empty()).map_err(|e| FsError::from_io(Path::new(name), e.into()))?;
    regular_file(std::fs::File::from(fd), Path::new(name)).map(|(file, _)| file)
}

/// The folder `name` in `dir`, opened only when it is a folder and not a link to one (a walker's
/// way down a tree it must not leave, a write's way to its file).
pub fn open_folder(dir: &Dir, name: &OsStr) -> io::Result<Dir> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = rustix::fs::openat(dir, name, flags, Mode::empty())?;
    Ok(Dir::from_std_file(std::fs::File::from(fd)))
}

fn shown(path: &Path) -> String {
    path.to_string_lossy().replace('\\', "/")
}
