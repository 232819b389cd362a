//! What a command wrote into its upper layer ([`crate::shell_sandbox::Layer`], DESIGN §4.3),
//! read back as typed effects on the workspace: files created, modified or deleted, modes
//! changed, symlinks, folders made or replaced (`rm -rf d && mkdir d` leaves an opaque folder).
//!
//! Rule: nothing in the upper layer is followed or trusted, and neither is the workspace below it:
//! the workspace's side is walked through folder handles opened one name at a time without
//! following a link (`fs/`), so a link in the workspace where the layer has a folder hides
//! nothing behind it (a file planted there is compared with nothing, never with what the link
//! leads to). A symlink is read as a link, never through; a device, a FIFO, a socket, a set-id bit or a file with more than one link is
//! refused by name; what overlayfs would have to redirect (a renamed folder, a metadata-only
//! copy) is refused too. Contents are never loaded here: a changed file is told from an
//! unchanged copy-up by its size, then by comparing both in chunks, so a 2 GiB file costs a
//! stream, not its size in memory.

use std::fs::Metadata;
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use cap_std::fs::{Dir, MetadataExt as _};

/// How one path of the workspace changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EffectKind {
    /// A regular file that did not exist.
    Created,
    /// A regular file whose content changed.
    Modified,
    /// Only the permission bits changed.
    ModeChanged,
    /// It was removed (with everything below it, for a folder).
    Deleted,
    /// A symbolic link, created or changed; its target as written.
    Link(PathBuf),
    /// A folder that did not exist.
    Folder,
    /// Something of another type stood here (a folder became a file, a file a folder or a link).
    Replaced,
}

/// One effect on a workspace-relative path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Effect {
    /// Workspace-relative path.
    pub rel: PathBuf,
    /// What happened to it.
    pub kind: EffectKind,
    /// Its permission bits now (none when deleted).
    pub mode: Option<u32>,
    /// Its size now (0 for what is not a regular file).
    pub bytes: u64,
}

/// Something in the layer that cannot land, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// Workspace-relative path.
    pub rel: PathBuf,
    /// Why, for the model and the person approving.
    pub why: &'static str,
}

/// An upper layer read: its effects in path order, and what cannot land.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LayerRead {
    /// What the command did, path by path.
    pub effects: Vec<Effect>,
    /// What it made that is refused.
    pub refused: Vec<Refusal>,
}

const OPAQUE: &str = "user.overlay.opaque";
const REDIRECT: &str = "user.overlay.redirect";
const METACOPY: &str = "user.overlay.metacopy";

/// Reads `upper` (a command's layer over `lower`, the workspace) into effects.
pub fn read_layer(upper: &Path, lower: &Path) -> std::io::Result<LayerRead> {
    let mut read = LayerRead::default();
    let lower = Dir::open_ambient_dir(lower, cap_std::ambient_authority())?;
    walk(upper, Some(&lower), Path::new(""), &mut read)?;
    read.effects.sort_by(|a, b| a.rel.cmp(&b.rel));
    read.refused.sort_by(|a, b| a.rel.cmp(&b.rel));
    Ok(read)
}

/// What stands in the workspace under a name of the layer, as [`one`] judges it.
struct Below {
    link: bool,
    dir: bool,
    file: bool,
    mode: u32,
    len: u64,
}

impl Below {
    fn of(meta: &cap_std::fs::Metadata) -> Self {
        let kind = meta.file_type();
        Below {
            link: kind.is_symlink(),
            dir: kind.is_dir(),
            file: kind.is_file(),
            mode: meta.mode() & 0o7777,
            len: meta.len(),
        }
    }
}

/// The workspace's side of one layer folder: its open handle, or `None` when the workspace has
/// no folder there (absent, a file, or a link, which is never walked through).
type LowerDir<'a> = Option<&'a Dir>;

fn walk(upper: &Path, lower: LowerDir, rel: &Path, read: &mut LayerRead) -> std::io::Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(upper.join(rel))?.collect::<Result<_, _>>()?;
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for entry in entries {
        let name = entry.file_name();
        let meta = entry.path().symlink_metadata()?;
        let below = lower.and_then(|dir| dir.symlink_metadata(&name).ok()).map(|m| Below::of(&m));
        one(upper, lower, &rel.join(&name), &meta, below.as_ref(), read)?;
    }
    Ok(())
}

fn one(
    upper: &Path,
    lower: LowerDir,
    rel: &Path,
    meta: &Metadata,
    below: Option<&Below>,
    read: &mut LayerRead,
) -> std::io::Result<()> {
    let path = upper.join(rel);
    let name = rel.file_name().unwrap_or_default();
    let kind = meta.file_type();
    let mut refuse = |why| read.refused.push(Refusal { rel: rel.to_path_buf(), why });
    let effect = |kind, meta: &Metadata| Effect {
        rel: rel.to_path_buf(),
        kind,
        mode: Some(meta.permissions().mode() & 0o7777),
        bytes: if meta.is_file() { meta.len() } else { 0 },
    };
    if kind.is_char_device() && meta.rdev() == 0 {
        // A whiteout: the path was removed.
        if below.is_some() {
            read.effects.push(Effect { rel: rel.to_path_buf(), kind: EffectKind::Deleted, mode: None, bytes: 0 });
        }
        return Ok(());
    }
    if kind.is_char_device() || kind.is_block_device() {
        refuse("a device file cannot be made in the workspace");
        return Ok(());
    }
    if kind.is_fifo() || kind.is_socket() {
        refuse("a FIFO or socket cannot be made in the workspace");
        return Ok(());
    }
    if has_xattr(&path, REDIRECT) || has_xattr(&path, METACOPY) {
        refuse("the layer redirects this path (a renamed folder): it cannot be shown as a change");
        return Ok(());
    }
    if kind.is_symlink() {
        let target = std::fs::read_link(&path)?;
        let same = below.is_some_and(|b| b.link)
            && lower.and_then(|dir| dir.read_link_contents(name).ok()).as_deref() == Some(target.as_path());
        if !same {
            read.effects.push(effect(EffectKind::Link(target), meta));
        }
        return Ok(());
    }
    if meta.permissions().mode() & 0o6000 != 0 {
        refuse("a set-user-id or set-group-id file cannot be made in the workspace");
        return Ok(());
    }
    if kind.is_dir() {
        match below {
            None => read.effects.push(effect(EffectKind::Folder, meta)),
            Some(b) if !b.dir => read.effects.push(effect(EffectKind::Replaced, meta)),
            Some(b) if b.mode != mode(meta) => read.effects.push(effect(EffectKind::ModeChanged, meta)),
            Some(_) => {}
        }
        // Only a real folder below is walked with it; a link there leads nowhere here.
        let below_dir = match below {
            Some(b) if b.dir => lower.and_then(|dir| crate::fs::open_folder(dir, name).ok()),
            _ => None,
        };
        // `rm -rf d && mkdir d`: nothing below the folder in the workspace is kept.
        if let Some(dir) = below_dir.as_ref().filter(|_| xattr_is(&path, OPAQUE, b"y")) {
            deleted_below(&path, dir, rel, read)?;
        }
        return walk(upper, below_dir.as_ref(), rel, read);
    }
    if meta.nlink() > 1 {
        refuse("a file with more than one link cannot be landed (a hard link could reach outside)");
        return Ok(());
    }
    let Some(below) = below else {
        read.effects.push(effect(EffectKind::Created, meta));
        return Ok(());
    };
    if !below.file {
        read.effects.push(effect(EffectKind::Replaced, meta));
    } else if below.len != meta.len() || !same_content(&path, lower, name)? {
        read.effects.push(effect(EffectKind::Modified, meta));
    } else if below.mode != mode(meta) {
        read.effects.push(effect(EffectKind::ModeChanged, meta));
    }
    Ok(())
}

/// The lower folder's entries that the opaque upper folder (at `upper_dir`) does not hold:
/// deleted.
fn deleted_below(upper_dir: &Path, lower: &Dir, rel: &Path, read: &mut LayerRead) -> std::io::Result<()> {
    for entry in lower.entries()? {
        let name = entry?.file_name();
        if upper_dir.join(&name).symlink_metadata().is_err() {
            read.effects.push(Effect { rel: rel.join(name), kind: EffectKind::Deleted, mode: None, bytes: 0 });
        }
    }
    Ok(())
}

fn mode(meta: &Metadata) -> u32 {
    meta.permissions().mode() & 0o7777
}

/// Whether the layer's file at `upper` and the workspace's `name` in `lower` (a regular file of
/// the same size, opened without following a link or waiting) hold the same bytes, read a chunk
/// at a time.
fn same_content(upper: &Path, lower: LowerDir, name: &std::ffi::OsStr) -> std::io::Result<bool> {
    let Some(lower) = lower else { return Ok(false) };
    let Ok(mut b) = crate::fs::open_in(lower, name) else { return Ok(false) };
    let mut a = std::fs::File::open(upper)?;
    let (mut x, mut y) = (vec![0u8; 64 * 1024], vec![0u8; 64 * 1024]);
    loop {
        let n = read_full(&mut a, &mut x)?;
        let m = read_full(&mut b, &mut y)?;
        if n != m || x[..n] != y[..m] {
            return Ok(false);
        }
        if n == 0 {
            return Ok(true);
        }
    }
}

fn read_full(file: &mut std::fs::File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match file.read(&mut buf[filled..])? {
            0 => break,
            n => filled += n,
        }
    }
    Ok(filled)
}

fn has_xattr(path: &Path, name: &str) -> bool {
    rustix::fs::lgetxattr_query(path, name).is_ok()
}

fn xattr_is(path: &Path, name: &str, value: &[u8]) -> bool {
    let mut buf = [0u8; 8];
    rustix::fs::lgetxattr(path, name, &mut buf).is_ok_and(|n| &buf[..n] == value)
}

#[cfg(test)]
#[path = "layer_tests.rs"]
mod tests;
