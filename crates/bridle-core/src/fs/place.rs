//! What a captured command's changes need of the workspace beyond a file's bytes (DESIGN §4.3):
//! reading what stands at a path without following it, and putting a file from a command's
//! layer, a symlink, a folder or nothing in its place.
//!
//! Rules: the same as every write here — folders on the way are opened without following
//! links, a path is never opened by its absolute name; a file comes in whole or not at all (moved
//! by `rename` when the layer shares the workspace's file system, otherwise copied in chunks
//! to a temp file that is synced and renamed over the target); a symlink is made as a link
//! with its target as written and never followed; removing a folder removes what is in it
//! without following any link inside. None of these syncs on its own: a batch of them ends with
//! one [`WorkspaceFs::sync`].

use std::io;
use std::path::{Path, PathBuf};

use cap_std::fs::{Dir, MetadataExt, OpenOptions, OpenOptionsExt, Permissions, PermissionsExt};

use super::{FsError, WorkspaceFs};

/// What stands at a workspace path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// A regular file: its permission bits and size.
    File {
        /// Permission bits.
        mode: u32,
        /// Size in bytes.
        size: u64,
    },
    /// A symbolic link and its target, as written.
    Link(std::path::PathBuf),
    /// A folder and its permission bits.
    Folder {
        /// Permission bits.
        mode: u32,
    },
    /// A FIFO, socket or device.
    Special,
}

impl WorkspaceFs {
    /// What stands at `rel`, read without following it (`None`: nothing).
    pub fn entry(&self, rel: &Path) -> Result<Option<Entry>, FsError> {
        let Some((parent, name)) = self.existing_parent(rel)? else { return Ok(None) };
        let meta = match parent.symlink_metadata(name) {
            Ok(meta) => meta,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(FsError::from_io(rel, e)),
        };
        let kind = meta.file_type();
        Ok(Some(if kind.is_symlink() {
            Entry::Link(parent.read_link(name).map_err(|e| FsError::from_io(rel, e))?)
        } else if kind.is_dir() {
            Entry::Folder { mode: meta.mode() & 0o7777 }
        } else if kind.is_file() {
            Entry::File { mode: meta.mode() & 0o7777, size: meta.len() }
        } else {
            Entry::Special
        }))
    }

    /// The names in the folder `rel`, sorted, its way opened without following a link (`None`:
    /// no folder there).
    pub fn names(&self, rel: &Path) -> Result<Option<Vec<std::ffi::OsString>>, FsError> {
        let io_err = |e| FsError::from_io(rel, e);
        let folder = match rel.file_name() {
            None => self.root.try_clone().map_err(io_err)?,
            Some(name) => {
                let Some((parent, _)) = self.existing_parent(rel)? else { return Ok(None) };
                match super::open::open_folder(&parent, name) {
                    Ok(folder) => folder,
                    Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT | libc::ENOTDIR | libc::ELOOP)) => {
                        return Ok(None)
                    }
                    Err(e) => return Err(io_err(e)),
                }
            }
        };
        let mut names = Vec::new();
        for entry in folder.entries().map_err(io_err)? {
            names.push(entry.map_err(io_err)?.file_name());
        }
        names.sort();
        Ok(Some(names))
    }

    /// When `rel`'s inode last changed (content, mode, links), in nanoseconds since the epoch.
    pub fn changed_at(&self, rel: &Path) -> Result<Option<i128>, FsError> {
        if rel.file_name().is_none() {
            return Ok(None);
        }
        let Some((parent, name)) = self.existing_parent(rel)? else { return Ok(None) };
        match parent.symlink_metadata(name) {
            Ok(meta) => Ok(Some(i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec()))),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(FsError::from_io(rel, e)),
        }
    }

    /// Leaves `rel` a regular file with `from`'s content and `mode`, whatever stood there (a
    /// folder is removed first). `from` is a file of a command's layer: moved in when it can be
    /// renamed across, copied otherwise; either way the target changes in one rename.
    pub fn place_file(&self, rel: &Path, from: &Path, mode: u32) -> Result<(), FsError> {
        let io_err = |e| FsError::from_io(rel, e);
        let (parent, name) = self.clear_for(rel)?;
        let temp = super::temp_name(name);
        let (source, source_name) = in_layer(from).map_err(io_err)?;
        let moved = match source.rename(source_name, &parent, &temp) {
            Ok(()) => Ok(()),
            Err(e) if e.raw_os_error() == Some(libc::EXDEV) => copy_in(&source, source_name, &parent, &temp),
            Err(e) => Err(e),
        };
        let done = moved
            .and_then(|()| {
                let file = parent.open_with(&temp, OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW))?;
                file.set_permissions(Permissions::from_mode(mode))
            })
            .and_then(|()| parent.rename(&temp, &parent, name));
        if done.is_err() {
            let _ = parent.remove_file(&temp);
        }
        done.map_err(io_err)
    }

    /// Moves the folder `from` (a new folder of a command's layer, with everything in it) to
    /// `rel`, where nothing stands: one rename when the layer shares the workspace's file
    /// system, a copy (links as links) otherwise.
    pub fn place_tree(&self, rel: &Path, from: &Path) -> Result<(), FsError> {
        let io_err = |e| FsError::from_io(rel, e);
        let name = rel.file_name().ok_or_else(|| FsError::IsDirectory(rel.display().to_string()))?;
        let parent = self.parent_dir(rel, true)?;
        let (source, source_name) = in_layer(from).map_err(io_err)?;
        match source.rename(source_name, &parent, name) {
            Err(e) if e.raw_os_error() == Some(libc::EXDEV) => {
                copy_tree(&source, source_name, &parent, name).map_err(io_err)
            }
            other => other.map_err(io_err),
        }
    }

    /// Leaves `rel` a symlink to `target` (as written, never followed), whatever stood there.
    pub fn place_link(&self, rel: &Path, target: &Path) -> Result<(), FsError> {
        let io_err = |e| FsError::from_io(rel, e);
        let (parent, name) = self.clear_for(rel)?;
        let temp = super::temp_name(name);
        // Not cap-std's `symlink`, which refuses a target outside the folder: the link is made as
        // written, and nothing here or after follows it.
        rustix::fs::symlinkat(target, &parent, temp.as_str()).map_err(|e| io_err(e.into()))?;
        let done = parent.rename(&temp, &parent, name);
        if done.is_err() {
            let _ = parent.remove_file(&temp);
        }
        done.map_err(io_err)
    }

    /// Leaves `rel` a folder with `mode`: made when missing (what stood there of another type is
    /// removed first), its mode set when it is one already.
    pub fn place_folder(&self, rel: &Path, mode: u32) -> Result<(), FsError> {
        let io_err = |e| FsError::from_io(rel, e);
        let name = rel.file_name().ok_or_else(|| FsError::IsDirectory(rel.display().to_string()))?;
        let parent = self.parent_dir(rel, true)?;
        match parent.symlink_metadata(name) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => {
                parent.remove_file(name).map_err(io_err)?;
                parent.create_dir(name).map_err(io_err)?;
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => parent.create_dir(name).map_err(io_err)?,
            Err(e) => return Err(io_err(e)),
        }
        let folder = super::open::open_folder(&parent, name).map_err(io_err)?;
        rustix::fs::fchmod(&folder, rustix::fs::Mode::from_raw_mode(mode)).map_err(|e| io_err(e.into()))
    }

    /// Sets `rel`'s permission bits (a regular file or folder, never through a link).
    pub fn set_mode(&self, rel: &Path, mode: u32) -> Result<(), FsError> {
        let io_err = |e| FsError::from_io(rel, e);
        let name = rel.file_name().ok_or_else(|| FsError::IsDirectory(rel.display().to_string()))?;
        let parent = self.parent_dir(rel, false)?;
        let file = parent
            .open_with(name, OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK))
            .map_err(io_err)?;
        file.set_permissions(Permissions::from_mode(mode)).map_err(io_err)
    }

    /// Moves whatever stands at `rel` (a file, a link, a folder with all it holds) to a fresh
    /// hidden name beside it, in one rename; the name it got (`None`: nothing stood there). A
    /// write that must be able to go back keeps what it replaces this way.
    pub fn set_aside(&self, rel: &Path) -> Result<Option<PathBuf>, FsError> {
        let Some((parent, name)) = self.existing_parent(rel)? else { return Ok(None) };
        let aside = format!(".{}.bridle-aside-{:016x}", name.to_string_lossy(), rand::random::<u64>());
        match parent.rename(name, &parent, &aside) {
            Ok(()) => Ok(Some(rel.with_file_name(aside))),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(FsError::from_io(rel, e)),
        }
    }

    /// Puts what [`Self::set_aside`] moved to `aside` back at `rel`, removing what stands there.
    pub fn bring_back(&self, aside: &Path, rel: &Path) -> Result<(), FsError> {
        self.remove_any(rel)?;
        let (Some(from), Some(to)) = (aside.file_name(), rel.file_name()) else {
            return Err(FsError::IsDirectory(rel.display().to_string()));
        };
        let parent = self.parent_dir(rel, false)?;
        parent.rename(from, &parent, to).map_err(|e| FsError::from_io(rel, e))
    }

    /// Removes whatever stands at `rel`: a file, a link (not what it names) or a folder with
    /// everything in it. Nothing there is no error.
    pub fn remove_any(&self, rel: &Path) -> Result<(), FsError> {
        self.remove(rel, true)
    }

    /// Removes what stands at `rel` if it is a file, a link or an empty folder (a folder that
    /// holds anything is an error, and is left). Nothing there is no error.
    pub fn remove_one(&self, rel: &Path) -> Result<(), FsError> {
        self.remove(rel, false)
    }

    fn remove(&self, rel: &Path, tree: bool) -> Result<(), FsError> {
        let Some((parent, name)) = self.existing_parent(rel)? else { return Ok(()) };
        let removed = match parent.symlink_metadata(name) {
            Ok(meta) if meta.is_dir() && tree => parent.remove_dir_all(name),
            Ok(meta) if meta.is_dir() => parent.remove_dir(name),
            Ok(_) => parent.remove_file(name),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => Err(e),
        };
        removed.map_err(|e| FsError::from_io(rel, e))
    }

    /// `rel`'s parent folder and name, `None` when the parent does not exist.
    fn existing_parent<'a>(&self, rel: &'a Path) -> Result<Option<(Dir, &'a std::ffi::OsStr)>, FsError> {
        let name = rel.file_name().ok_or_else(|| FsError::IsDirectory(rel.display().to_string()))?;
        match self.parent_dir(rel, false) {
            Ok(parent) => Ok(Some((parent, name))),
            // A file where a folder on the way should be: nothing stands at `rel` either.
            Err(FsError::Io { source, .. }) if source.raw_os_error() == Some(libc::ENOTDIR) => Ok(None),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// `rel`'s parent (made when missing) and name, with a folder standing at `rel` removed (a
    /// file or link there is replaced by the rename that follows).
    fn clear_for<'a>(&self, rel: &'a Path) -> Result<(Dir, &'a std::ffi::OsStr), FsError> {
        let name = rel.file_name().ok_or_else(|| FsError::IsDirectory(rel.display().to_string()))?;
        let parent = self.parent_dir(rel, true)?;
        if parent.symlink_metadata(name).is_ok_and(|m| m.is_dir()) {
            parent.remove_dir_all(name).map_err(|e| FsError::from_io(rel, e))?;
        }
        Ok((parent, name))
    }
}

/// The folder of `from` (a path in a command's layer, outside the workspace) and its name.
fn in_layer(from: &Path) -> io::Result<(Dir, &std::ffi::OsStr)> {
    let (Some(folder), Some(name)) = (from.parent(), from.file_name()) else {
        return Err(io::Error::other(format!("`{}` names no file in a layer", from.display())));
    };
    Ok((Dir::open_ambient_dir(folder, cap_std::ambient_authority())?, name))
}

/// Copies the folder `name` of `from` to a new `to_name` in `to`: files in chunks, links as
/// links, nothing followed.
fn copy_tree(from: &Dir, name: &std::ffi::OsStr, to: &Dir, to_name: &std::ffi::OsStr) -> io::Result<()> {
    to.create_dir(to_name)?;
    let source = super::open::open_folder(from, name)?;
    let target = super::open::open_folder(to, to_name)?;
    for entry in source.entries()? {
        let entry = entry?;
        let child = entry.file_name();
        let kind = entry.file_type()?;
        if kind.is_dir() {
            copy_tree(&source, &child, &target, &child)?;
        } else if kind.is_symlink() {
            rustix::fs::symlinkat(source.read_link(&child)?, &target, child.as_os_str())?;
        } else if kind.is_file() {
            copy_in(&source, &child, &target, &child.to_string_lossy())?;
            let mode = source.symlink_metadata(&child)?.mode() & 0o777;
            target.set_permissions(&child, Permissions::from_mode(mode))?;
        }
    }
    Ok(())
}

/// Copies `name` of `from` to a new `temp` in `to`, a chunk at a time.
fn copy_in(from: &Dir, name: &std::ffi::OsStr, to: &Dir, temp: &str) -> io::Result<()> {
    let mut source = from.open_with(name, OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW))?;
    let mut target = to.open_with(temp, OpenOptions::new().write(true).create_new(true).mode(0o600))?;
    io::copy(&mut source, &mut target)?;
    Ok(())
}
