//! The workspace as an overlay for one command (DESIGN §4.3): the command sees the workspace as
//! it is and writes into an upper layer of its own, so what it changed can be read, shown and
//! landed (or dropped) afterwards instead of reaching the workspace as it happens.
//!
//! Debian 12's bubblewrap (0.8) has no `--overlay`, so Bridle mounts the overlay itself: in the
//! command's child, inside the user namespace its door made or joined ([`super::door`]), a mount
//! namespace of its own gets an overlayfs (`userxattr`: an unprivileged user may mount it since
//! Linux 5.11) over the workspace's own path; bwrap then starts inside that namespace and binds
//! the workspace path, which is the overlay. It is mounted `volatile`: a layer lives for one
//! command and is read back by Bridle, so overlayfs need not sync what it copies up (with the
//! syncs, a command changing 1,000 small files took 636 ms instead of 210).
//!
//! Scratch folders that already exist (`target`, `node_modules`, ... : [`SCRATCH`]) are not
//! overlaid: each is bound aside before the overlay is mounted and moved back over it after, so
//! a build writes its output straight into the workspace as it does without a layer, and the
//! layer holds only what is worth showing. Each is opened without following links and bound
//! through its descriptor, so a folder swapped for a link since the layer was made fails the
//! spawn rather than bringing the link's target into the sandbox.
//!
//! Rule: the mount is made between fork and exec with system calls only, on text prepared
//! before the fork; if any step fails the spawn fails (the command never writes to the
//! workspace when it was to write to a layer). The overlay is made with the mount API, each path
//! passed whole, so any workspace path works (commas, colons, backslashes, newlines); it is
//! mounted `nosuid`. [`probe`] says, for one workspace, whether it works there, so the guard can
//! ask by the command's text where it does not.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Folders of build output written straight through, when they exist when the command starts.
pub use crate::config::SCRATCH;

/// At most this many scratch folders are bound through (the child holds them in a fixed array).
const MAX_THROUGH: usize = 8;

/// One command's upper layer: where what it writes goes, and the work folder overlayfs needs
/// beside it (on the same file system). Removed with this value.
#[derive(Debug)]
pub struct Layer {
    /// Holds `upper`, `work` and the places scratch folders wait while the overlay is mounted.
    home: PathBuf,
    upper: PathBuf,
    /// The workspace's path: the overlay's lower layer and its mount point.
    target: CString,
    /// The upper layer and overlayfs's work folder, as the mount API names them.
    upper_c: CString,
    work_c: CString,
    /// The same as one legacy `mount(2)` option string, for a kernel without `lowerdir+` (before
    /// 6.8); none when a path holds a character such a string cannot carry.
    options: Option<CString>,
    /// Each scratch folder written through: its path in the workspace, and where it waits.
    through: Vec<(CString, CString)>,
    /// `home`, locked while this value lives: [`sweep`] removes only layers nobody holds.
    _lock: std::fs::File,
}

/// What the forked child needs to mount a [`Layer`], prepared before the fork.
#[derive(Debug, Clone, Copy)]
pub(super) struct LayerInChild {
    target: *const libc::c_char,
    upper: *const libc::c_char,
    work: *const libc::c_char,
    /// Null when there is no legacy option string.
    options: *const libc::c_char,
    through: [(*const libc::c_char, *const libc::c_char); MAX_THROUGH],
    count: usize,
}

// SAFETY: the pointers point into a `Layer` that outlives the spawn that uses them; they are
// only read, in the child.
#[allow(unsafe_code)]
unsafe impl Send for LayerInChild {}
#[allow(unsafe_code)]
unsafe impl Sync for LayerInChild {}

impl Layer {
    /// A fresh layer under `layers` (created if missing) for `workspace`, the [`SCRATCH`]
    /// folders written through.
    pub fn new(layers: &Path, workspace: &Path) -> std::io::Result<Self> {
        Self::with_scratch(layers, workspace, SCRATCH)
    }

    /// A fresh layer with `scratch` (workspace-relative folder names) written through, those
    /// that exist as real folders (not links) now.
    pub fn with_scratch(layers: &Path, workspace: &Path, scratch: &[&str]) -> std::io::Result<Self> {
        std::fs::create_dir_all(layers)?;
        let home = layers.join(format!("layer-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir(&home)?;
        let lock = std::fs::File::open(&home)?;
        rustix::fs::flock(&lock, rustix::fs::FlockOperation::NonBlockingLockExclusive)?;
        let upper = home.join("upper");
        let work = home.join("work");
        std::fs::create_dir(&upper)?;
        std::fs::create_dir(&work)?;
        let workspace = workspace.canonicalize()?;
        let c = |p: &Path| CString::new(p.as_os_str().as_bytes()).map_err(std::io::Error::other);
        let options =
            legacy_options(&workspace, &upper, &work).map(CString::new).transpose().map_err(std::io::Error::other)?;
        let (target, upper_c, work_c) = (c(&workspace)?, c(&upper)?, c(&work)?);
        let mut through = Vec::new();
        let plain = |n: &&&str| !n.is_empty() && !n.contains('/') && !matches!(**n, "." | "..");
        for name in scratch.iter().filter(plain) {
            let folder = workspace.join(name);
            let real = folder.symlink_metadata().is_ok_and(|m| m.is_dir());
            if !real || through.len() == MAX_THROUGH {
                continue;
            }
            let aside = home.join(format!("through-{}", through.len()));
            std::fs::create_dir(&aside)?;
            through.push((c(&folder)?, c(&aside)?));
        }
        Ok(Self { home, upper, target, upper_c, work_c, options, through, _lock: lock })
    }

    /// The upper layer: everything the command created or changed, and a whiteout for each
    /// thing it removed.
    pub fn upper(&self) -> &Path {
        &self.upper
    }

    pub(super) fn in_child(&self) -> LayerInChild {
        let mut through = [(std::ptr::null(), std::ptr::null()); MAX_THROUGH];
        for (slot, (folder, aside)) in through.iter_mut().zip(&self.through) {
            *slot = (folder.as_ptr(), aside.as_ptr());
        }
        LayerInChild {
            target: self.target.as_ptr(),
            upper: self.upper_c.as_ptr(),
            work: self.work_c.as_ptr(),
            options: self.options.as_ref().map_or(std::ptr::null(), |o| o.as_ptr()),
            through,
            count: self.through.len(),
        }
    }
}

impl Drop for Layer {
    fn drop(&mut self) {
        // The work folder holds a folder overlayfs made without write permission for anyone.
        let _ = make_writable(&self.home);
        let _ = std::fs::remove_dir_all(&self.home);
    }
}

/// Removes the layers under `layers` that no live [`Layer`] holds (left by a process that
/// crashed or was killed mid-command); returns how many went.
pub fn sweep(layers: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(layers) else { return 0 };
    let mut removed = 0;
    for entry in entries.flatten() {
        let home = entry.path();
        let ours = entry.file_name().to_string_lossy().starts_with("layer-");
        if !ours || !entry.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let Ok(lock) = std::fs::File::open(&home) else { continue };
        if rustix::fs::flock(&lock, rustix::fs::FlockOperation::NonBlockingLockExclusive).is_err() {
            continue;
        }
        let _ = make_writable(&home);
        removed += usize::from(std::fs::remove_dir_all(&home).is_ok());
    }
    removed
}

/// Every folder below `dir` made writable by its owner (overlayfs leaves its work folder's
/// inner folder with no permission at all), so the layer can be removed.
fn make_writable(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    for entry in std::fs::read_dir(dir)?.flatten() {
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            let _ = make_writable(&entry.path());
        }
    }
    Ok(())
}

/// The legacy `mount(2)` option string for a layer, or none when a path holds a character it
/// cannot carry (commas and backslashes end or change an option, colons split `lowerdir`): the
/// mount API's `lowerdir+`, which takes each path whole, mounts those.
fn legacy_options(lower: &Path, upper: &Path, work: &Path) -> Option<Vec<u8>> {
    let plain = |p: &Path| {
        let bytes = p.as_os_str().as_bytes();
        (!bytes.iter().any(|b| matches!(b, b',' | b'\\' | b':' | b'\n'))).then(|| bytes.to_vec())
    };
    let mut options = b"lowerdir=".to_vec();
    options.extend(plain(lower)?);
    options.extend(b",upperdir=");
    options.extend(plain(upper)?);
    options.extend(b",workdir=");
    options.extend(plain(work)?);
    options.extend(b",userxattr,volatile");
    Some(options)
}

/// The mount API's constants (linux/mount.h), which this libc does not all name.
mod api {
    pub const FSOPEN_CLOEXEC: libc::c_uint = 1;
    pub const FSCONFIG_SET_FLAG: libc::c_uint = 0;
    pub const FSCONFIG_SET_STRING: libc::c_uint = 1;
    pub const FSCONFIG_CMD_CREATE: libc::c_uint = 6;
    pub const FSMOUNT_CLOEXEC: libc::c_uint = 1;
    pub const MOUNT_ATTR_NOSUID: libc::c_uint = 0x2;
    pub const MOUNT_ATTR_NODEV: libc::c_uint = 0x4;
    pub const MOVE_MOUNT_F_EMPTY_PATH: libc::c_uint = 0x4;
}

/// Mounts the overlay of `layer` over its target with the mount API (Linux 6.8 and later for
/// `lowerdir+`): every path is passed whole, whatever it holds. `Ok(false)`: this kernel has no
/// such API or no `lowerdir+` (the caller may use the legacy string).
#[allow(unsafe_code)]
fn mount_with_api(layer: &LayerInChild) -> std::io::Result<bool> {
    use api::*;
    let check = |r: libc::c_long| if r < 0 { Err(std::io::Error::last_os_error()) } else { Ok(r) };
    // SAFETY: plain system calls on strings prepared before the fork; no allocation, no lock.
    unsafe {
        let fs = libc::syscall(libc::SYS_fsopen, c"overlay".as_ptr(), FSOPEN_CLOEXEC);
        if fs < 0 {
            let e = std::io::Error::last_os_error();
            return if e.raw_os_error() == Some(libc::ENOSYS) { Ok(false) } else { Err(e) };
        }
        let fs = fs as libc::c_int;
        let set = |key: &std::ffi::CStr, value: *const libc::c_char| {
            let cmd = if value.is_null() { FSCONFIG_SET_FLAG } else { FSCONFIG_SET_STRING };
            libc::syscall(libc::SYS_fsconfig, fs, cmd, key.as_ptr(), value, 0)
        };
        if set(c"lowerdir+", layer.target) < 0 {
            let e = std::io::Error::last_os_error();
            libc::close(fs);
            return if e.raw_os_error() == Some(libc::EINVAL) { Ok(false) } else { Err(e) };
        }
        let made = (|| {
            check(set(c"upperdir", layer.upper))?;
            check(set(c"workdir", layer.work))?;
            check(set(c"userxattr", std::ptr::null()))?;
            check(set(c"volatile", std::ptr::null()))?;
            check(libc::syscall(
                libc::SYS_fsconfig,
                fs,
                FSCONFIG_CMD_CREATE,
                std::ptr::null::<libc::c_char>(),
                std::ptr::null::<libc::c_char>(),
                0,
            ))?;
            // Nothing on the overlay runs set-id (DESIGN §5.1), nor opens a device.
            check(libc::syscall(libc::SYS_fsmount, fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV))
        })();
        libc::close(fs);
        let mnt = made? as libc::c_int;
        let moved = libc::syscall(
            libc::SYS_move_mount,
            mnt,
            c"".as_ptr(),
            libc::AT_FDCWD,
            layer.target,
            MOVE_MOUNT_F_EMPTY_PATH,
        );
        libc::close(mnt);
        check(moved)?;
    }
    Ok(true)
}

/// In the forked child, already in its user namespace: a mount namespace of its own, nothing
/// in it propagating back, the scratch folders bound aside, the overlay over the workspace, and
/// the scratch folders moved back over it.
#[allow(unsafe_code)]
pub(super) fn mount_in_child(layer: &LayerInChild) -> std::io::Result<()> {
    let check = |r: libc::c_int| if r < 0 { Err(std::io::Error::last_os_error()) } else { Ok(r) };
    // SAFETY: plain system calls on strings prepared before the fork; no allocation, no lock.
    unsafe {
        check(libc::unshare(libc::CLONE_NEWNS))?;
        check(libc::mount(
            std::ptr::null(),
            c"/".as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        ))?;
        let through = &layer.through[..layer.count.min(MAX_THROUGH)];
        for (folder, aside) in through {
            // Opened without following a link and bound through its descriptor: a folder a
            // command swapped for a link since the layer was made (`target -> ~/.ssh`) fails
            // the spawn instead of binding what the link names.
            let fd = check(libc::open(*folder, libc::O_PATH | libc::O_NOFOLLOW | libc::O_DIRECTORY | libc::O_CLOEXEC))?;
            let source = fd_path(fd);
            let bound = libc::mount(
                source.as_ptr().cast(),
                *aside,
                std::ptr::null(),
                libc::MS_BIND | libc::MS_REC,
                std::ptr::null(),
            );
            libc::close(fd);
            check(bound)?;
        }
        if !mount_with_api(layer)? {
            if layer.options.is_null() {
                return Err(std::io::Error::from_raw_os_error(libc::EINVAL));
            }
            check(libc::mount(
                c"overlay".as_ptr(),
                layer.target,
                c"overlay".as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV,
                layer.options.cast::<libc::c_void>(),
            ))?;
        }
        for (folder, aside) in through {
            check(libc::mount(*aside, *folder, std::ptr::null(), libc::MS_MOVE, std::ptr::null()))?;
        }
    }
    Ok(())
}

/// `/proc/self/fd/N` with its terminating NUL, written without allocating (between fork and
/// exec).
fn fd_path(fd: libc::c_int) -> [u8; 32] {
    let mut out = [0u8; 32];
    let prefix = b"/proc/self/fd/";
    out[..prefix.len()].copy_from_slice(prefix);
    let mut digits = [0u8; 10];
    let mut n = fd.unsigned_abs();
    let mut len = 0;
    loop {
        digits[len] = b'0' + (n % 10) as u8;
        len += 1;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for (i, d) in digits[..len].iter().rev().enumerate() {
        out[prefix.len() + i] = *d;
    }
    out
}

/// Whether a command can run on an overlay of `workspace` (its path, its file system, this
/// kernel): a child mounts a layer made under `layers` over it, in a mount namespace of its own,
/// and exits; nothing is written to the workspace. `Err` says why not (no user namespaces, an old
/// kernel, a file system overlayfs refuses).
#[allow(unsafe_code)]
pub fn probe(layers: &Path, workspace: &Path) -> Result<(), String> {
    let layer = Layer::with_scratch(layers, workspace, &[]).map_err(|e| format!("no layer could be made: {e}"))?;
    let door = super::door::Door::new(None, false, &[]).map_err(|e| format!("no namespace could be made: {e}"))?;
    let plan = door.in_child();
    let mount = layer.in_child();
    let program = ["/usr/bin/true", "/bin/true"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .ok_or_else(|| "no `true` program to probe the overlay with".to_string())?;
    let mut command = std::process::Command::new(program);
    command.env_clear().stdin(std::process::Stdio::null()).stdout(std::process::Stdio::null());
    // SAFETY: the hook makes only system calls on memory prepared before the fork.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut command, move || {
            super::door::open_in_child(&plan)?;
            mount_in_child(&mount)
        });
    }
    let status = command.status().map_err(|e| format!("the overlay could not be mounted on this workspace: {e}"))?;
    drop(door);
    match status.success() {
        true => Ok(()),
        false => Err(format!("the overlay could not be mounted on this workspace ({status})")),
    }
}
