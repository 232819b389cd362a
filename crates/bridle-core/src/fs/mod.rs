//! Every byte the file tools read or write goes through here, relative to an open handle on the
//! workspace root (cap-std: `openat2` with `RESOLVE_BENEATH` where the kernel has it).
//!
//! Rules: no path is ever opened by its absolute name, so a symlink swapped in after the
//! sandbox's check still cannot lead outside; only regular files are read or replaced — a FIFO, a
//! socket or a device is refused by name without ever blocking on it ([`open`]); a write never
//! goes through a symlinked folder (each folder on its way is opened without following links, so
//! a folder swapped for a link to `.git/` is refused, not written through); writes are atomic (a
//! temp file in the same directory, written, fsynced, renamed over the target, then the directory
//! fsynced), so a crash leaves the old file or the new one, never a torn one; modes are set on the
//! open file, never by path; a file with several hard links is not replaced (one of its names may
//! be outside).

mod open;
mod place;

use std::io;
use std::path::{Path, PathBuf};

use cap_std::fs::{Dir, File, MetadataExt, OpenOptions, OpenOptionsExt, Permissions, PermissionsExt};

pub use open::{open_folder, open_in, open_named, read_named, regular_file, special_kind};
pub use place::Entry;

/// Why a workspace file operation failed; messages are written for the model.
#[derive(Debug, thiserror::Error)]
pub enum FsError {
    /// The path is a directory where a file was expected.
    #[error("`{0}` is a directory")]
    IsDirectory(String),
    /// The file has more than one hard link.
    #[error(
        "`{path}` has {links} hard links; one of them may be outside the workspace, so Bridle will not replace it"
    )]
    HardLinked {
        /// Workspace-relative path.
        path: String,
        /// Link count.
        links: u64,
    },
    /// The file has more than one hard link, so it is not read.
    #[error("`{path}` has {links} hard links; one of them may lead outside the workspace, so Bridle will not read it")]
    HardLinkedRead {
        /// Workspace-relative path.
        path: String,
        /// Link count.
        links: u64,
    },
    /// The path is a FIFO, a socket or a device: only regular files are read or written.
    #[error("`{path}` is {kind}; file tools read and write only regular files, so Bridle did not open it")]
    NotRegular {
        /// Workspace-relative path.
        path: String,
        /// What it is ("a FIFO (named pipe)", "a socket", "a device").
        kind: &'static str,
    },
    /// A folder on the way to a write is a symlink (swapped in after the sandbox checked it).
    #[error("`{path}`: the folder `{folder}` on its way is a symlink; Bridle does not write through symlinked folders, so nothing was written")]
    SymlinkedFolder {
        /// Workspace-relative path of the file.
        path: String,
        /// The folder that is a symlink.
        folder: String,
    },
    /// The final component turned into a symlink after the sandbox checked it.
    #[error("`{0}` changed into a symlink while being written; nothing was written")]
    BecameSymlink(String),
    /// The file is larger than the reader's limit, so it was not read.
    #[error("`{path}` is larger than {limit} bytes; Bridle did not read it")]
    TooLarge {
        /// Workspace-relative path.
        path: String,
        /// The limit, in bytes.
        limit: u64,
    },
    /// Resolution beneath the root refused the path (it led outside).
    #[error("`{0}` leads outside the workspace (caught at open time); nothing was read or written")]
    Escaped(String),
    /// Any other I/O error.
    #[error("`{path}`: {source}")]
    Io {
        /// Workspace-relative path.
        path: String,
        /// The OS error.
        source: io::Error,
    },
}

impl FsError {
    fn from_io(path: &Path, source: io::Error) -> Self {
        let shown = path.display().to_string();
        // cap-std reports an escape attempt as PermissionDenied with this message (EXDEV from
        // openat2's RESOLVE_BENEATH is mapped to it too).
        if source.kind() == io::ErrorKind::PermissionDenied && source.to_string().contains("outside of the filesystem")
            || source.raw_os_error() == Some(18)
        {
            return FsError::Escaped(shown);
        }
        FsError::Io { path: shown, source }
    }

    /// Whether the file or a parent does not exist.
    pub fn is_not_found(&self) -> bool {
        matches!(self, FsError::Io { source, .. } if source.kind() == io::ErrorKind::NotFound)
    }
}

/// Identity of a file's content at one moment: changes when the file is replaced or written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    /// Modification time in nanoseconds since the epoch.
    pub mtime_ns: i128,
    /// Size in bytes.
    pub size: u64,
    /// Inode number.
    pub inode: u64,
}

impl Stamp {
    /// The stamp of an open file's metadata.
    pub fn of(meta: &std::fs::Metadata) -> Self {
        use std::os::unix::fs::MetadataExt as _;
        Stamp {
            mtime_ns: i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
            size: meta.len(),
            inode: meta.ino(),
        }
    }
}

/// What an atomic write did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// Whether the file did not exist before.
    pub created: bool,
    /// Bytes written.
    pub bytes: usize,
}

/// File I/O confined beneath one directory.
#[derive(Debug)]
pub struct WorkspaceFs {
    root: Dir,
    root_path: PathBuf,
}

impl WorkspaceFs {
    /// Opens a handle on `root`; everything after goes through it.
    pub fn open(root: &Path) -> io::Result<Self> {
        let dir = Dir::open_ambient_dir(root, cap_std::ambient_authority())?;
        Ok(Self { root: dir, root_path: root.to_path_buf() })
    }

    /// The directory this handle was opened on.
    pub fn root_path(&self) -> &Path {
        &self.root_path
    }

    /// Opens `rel` for reading (symlinks followed only while they stay beneath the root); only a
    /// regular file with one link is opened for good, and nothing here ever waits on a FIFO.
    pub fn open_read(&self, rel: &Path) -> Result<std::fs::File, FsError> {
        let rel = non_empty(rel);
        // A look first, so a device is refused without being opened at all (opening one can
        // have effects of its own); the check that counts is on the open handle below.
        let looked = self.root.metadata(rel).map_err(|e| FsError::from_io(rel, e))?;
        if let Some(kind) = special_kind(looked.mode()) {
            return Err(FsError::NotRegular { path: rel.display().to_string(), kind });
        }
        let mut options = OpenOptions::new();
        options.read(true).custom_flags(open::no_wait_flags());
        let file = self.root.open_with(rel, &options).map_err(|e| self.open_error(rel, e))?;
        let (file, meta) = regular_file(file.into_std(), rel)?;
        let links = std::os::unix::fs::MetadataExt::nlink(&meta);
        // Another name of the same file may be outside the workspace (a door to a secret).
        if links > 1 {
            return Err(FsError::HardLinkedRead { path: rel.display().to_string(), links });
        }
        Ok(file)
    }

    /// An open's error, naming what the path is when `ENXIO` (a socket) hides it.
    fn open_error(&self, rel: &Path, e: io::Error) -> FsError {
        if open::is_no_device(&e) {
            let kind = self.root.metadata(rel).ok().and_then(|m| special_kind(m.mode()));
            return FsError::NotRegular { path: rel.display().to_string(), kind: kind.unwrap_or("not a regular file") };
        }
        FsError::from_io(rel, e)
    }

    /// The whole file as bytes, or `None` when it does not exist.
    pub fn read_if_exists(&self, rel: &Path) -> Result<Option<Vec<u8>>, FsError> {
        match self.open_read(rel) {
            Ok(mut file) => {
                let mut bytes = Vec::new();
                io::Read::read_to_end(&mut file, &mut bytes).map_err(|e| FsError::from_io(rel, e))?;
                Ok(Some(bytes))
            }
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// [`Self::read_if_exists`] for Bridle's own looks at a file (a git probe, an editor's diff):
    /// a file over `limit` bytes is refused without being read, and one that grows past it
    /// while read is cut off by the limit, never read on.
    pub fn read_at_most(&self, rel: &Path, limit: u64) -> Result<Option<Vec<u8>>, FsError> {
        let file = match self.open_read(rel) {
            Ok(file) => file,
            Err(e) if e.is_not_found() => return Ok(None),
            Err(e) => return Err(e),
        };
        let size = file.metadata().map_err(|e| FsError::from_io(rel, e))?.len();
        open::read_bounded(file, size, rel, limit).map(Some)
    }

    /// The stamp of `rel`, or `None` when it does not exist.
    pub fn stamp(&self, rel: &Path) -> Result<Option<Stamp>, FsError> {
        match self.root.metadata(non_empty(rel)) {
            Ok(meta) => Ok(Some(Stamp {
                mtime_ns: i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
                size: meta.len(),
                inode: meta.ino(),
            })),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(FsError::from_io(rel, e)),
        }
    }

    /// The permission bits of `rel`, or `None` when it does not exist.
    pub fn mode(&self, rel: &Path) -> Result<Option<u32>, FsError> {
        match self.root.symlink_metadata(non_empty(rel)) {
            Ok(meta) => Ok(Some(meta.mode() & 0o7777)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(FsError::from_io(rel, e)),
        }
    }

    /// Replaces (or creates) `rel` with `bytes`, atomically; parents are created; an existing
    /// file keeps its mode, a new one gets `0o644`.
    pub fn write_atomic(&self, rel: &Path, bytes: &[u8]) -> Result<Written, FsError> {
        self.write_atomic_with_mode(rel, bytes, None)
    }

    /// [`Self::write_atomic`] leaving the file with `mode` when given (an undo puts a file back
    /// as it was, permissions included).
    pub fn write_atomic_with_mode(&self, rel: &Path, bytes: &[u8], mode: Option<u32>) -> Result<Written, FsError> {
        self.write_atomic_from(rel, &mut &bytes[..], mode)
    }

    /// [`Self::write_atomic_with_mode`] with the content streamed from `content` (a checkpoint
    /// of any size); a read error leaves the file as it was.
    pub fn write_atomic_from(
        &self,
        rel: &Path,
        content: &mut dyn io::Read,
        mode: Option<u32>,
    ) -> Result<Written, FsError> {
        let io_err = |e| FsError::from_io(rel, e);
        let name = rel.file_name().ok_or_else(|| FsError::IsDirectory(rel.display().to_string()))?;
        let parent = self.parent_dir(rel, true)?;
        let existing = match parent.symlink_metadata(name) {
            Ok(meta) => Some(meta),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(io_err(e)),
        };
        if let Some(meta) = &existing {
            if meta.is_dir() {
                return Err(FsError::IsDirectory(rel.display().to_string()));
            }
            if meta.file_type().is_symlink() {
                // The sandbox resolved symlinks before we got here: one now means a swap.
                return Err(FsError::BecameSymlink(rel.display().to_string()));
            }
            if let Some(kind) = special_kind(meta.mode()) {
                return Err(FsError::NotRegular { path: rel.display().to_string(), kind });
            }
            if meta.nlink() > 1 {
                return Err(FsError::HardLinked { path: rel.display().to_string(), links: meta.nlink() });
            }
        }
        let mode = mode.unwrap_or_else(|| existing.as_ref().map(|m| m.mode() & 0o7777).unwrap_or(0o644));
        let temp_name = temp_name(name);
        let mut temp = parent
            .open_with(&temp_name, OpenOptions::new().write(true).create_new(true).mode(0o600))
            .map_err(io_err)?;
        let result = write_and_replace(&parent, &mut temp, &temp_name, name, content, mode);
        if result.is_err() {
            let _ = parent.remove_file(&temp_name);
        }
        let bytes = result.map_err(io_err)?;
        Ok(Written { created: existing.is_none(), bytes: bytes as usize })
    }

    /// Deletes the file `rel` (a directory is refused).
    pub fn remove_file(&self, rel: &Path) -> Result<(), FsError> {
        let name = rel.file_name().ok_or_else(|| FsError::IsDirectory(rel.display().to_string()))?;
        let parent = self.parent_dir(rel, false)?;
        let meta = parent.symlink_metadata(name).map_err(|e| FsError::from_io(rel, e))?;
        if meta.is_dir() {
            return Err(FsError::IsDirectory(rel.display().to_string()));
        }
        if let Some(kind) = special_kind(meta.mode()) {
            return Err(FsError::NotRegular { path: rel.display().to_string(), kind });
        }
        parent.remove_file(name).map_err(|e| FsError::from_io(rel, e))?;
        sync_dir(&parent).map_err(|e| FsError::from_io(rel, e))
    }

    /// Makes everything written to the workspace's file system durable (one `syncfs` for a
    /// batch of writes that each skipped their own).
    pub fn sync(&self) -> io::Result<()> {
        rustix::fs::syncfs(&self.root).map_err(io::Error::from)
    }

    fn parent_dir(&self, rel: &Path, create: bool) -> Result<Dir, FsError> {
        open::parent_dir(&self.root, rel, create)
    }
}

fn non_empty(rel: &Path) -> &Path {
    if rel.as_os_str().is_empty() {
        Path::new(".")
    } else {
        rel
    }
}

fn write_and_replace(
    parent: &Dir,
    temp: &mut File,
    temp_name: &str,
    name: &std::ffi::OsStr,
    content: &mut dyn io::Read,
    mode: u32,
) -> io::Result<u64> {
    let written = io::copy(content, temp)?;
    temp.set_permissions(Permissions::from_mode(mode))?;
    temp.sync_all()?;
    parent.rename(temp_name, parent, name)?;
    sync_dir(parent)?;
    Ok(written)
}

/// A fresh name beside `name` for what is written before it is renamed over `name`.
fn temp_name(name: &std::ffi::OsStr) -> String {
    format!(".{}.bridle-{:016x}.tmp", name.to_string_lossy(), rand::random::<u64>())
}

/// Makes a rename or removal in `dir` durable.
fn sync_dir(dir: &Dir) -> io::Result<()> {
    dir.open(".")?.sync_all()
}

#[cfg(test)]
mod tests;
