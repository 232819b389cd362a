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
//! workspace when it was to write to a layer). [`probe`] says once per process whether it works
//! here at all, so the caller can run the command as before and say why.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

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
    options: CString,
    /// Each scratch folder written through: its path in the workspace, and where it waits.
    through: Vec<(CString, CString)>,
    /// `home`, locked while this value lives: [`sweep`] removes only layers nobody holds.
    _lock: std::fs::File,
}

/// What the forked child needs to mount a [`Layer`], prepared before the fork.
#[derive(Debug, Clone, Copy)]
pub(super) struct LayerInChild {
    target: *const libc::c_char,
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
        let mut options = b"lowerdir=".to_vec();
        options.extend(escaped(&workspace)?);
        options.extend(b",upperdir=");
        options.extend(escaped(&upper)?);
        options.extend(b",workdir=");
        options.extend(escaped(&work)?);
        options.extend(b",userxattr,volatile");
        let target = CString::new(workspace.as_os_str().as_bytes()).map_err(std::io::Error::other)?;
        let options = CString::new(options).map_err(std::io::Error::other)?;
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
            let c = |p: &Path| CString::new(p.as_os_str().as_bytes()).map_err(std::io::Error::other);
            through.push((c(&folder)?, c(&aside)?));
        }
        Ok(Self { home, upper, target, options, through, _lock: lock })
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
            options: self.options.as_ptr(),
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

/// A path as a mount option's value: commas and backslashes would end or change the option, so
/// a path holding them is refused (the caller runs the command as before and says why).
fn escaped(path: &Path) -> std::io::Result<Vec<u8>> {
    let bytes = path.as_os_str().as_bytes();
    if bytes.iter().any(|b| matches!(b, b',' | b'\\' | b':' | b'\n')) {
        return Err(std::io::Error::other(format!(
            "`{}` holds a character an overlay mount cannot name (`,` `:` `\\`)",
            path.display()
        )));
    }
    Ok(bytes.to_vec())
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
        check(libc::mount(
            c"overlay".as_ptr(),
            layer.target,
            c"overlay".as_ptr(),
            0,
            layer.options.cast::<libc::c_void>(),
        ))?;
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

/// Whether a command can run on an overlay here: once per process, a child mounts one over a
/// scratch folder and writes through it; `Err` says why not (no user namespaces, an old kernel,
/// a file system overlayfs refuses).
pub fn probe(scratch: &Path) -> Result<(), String> {
    static PROBED: OnceLock<Result<(), String>> = OnceLock::new();
    PROBED.get_or_init(|| probe_once(scratch)).clone()
}

fn probe_once(scratch: &Path) -> Result<(), String> {
    let fail = |what: &str, e: std::io::Error| format!("{what}: {e}");
    let base = scratch.join(format!("probe-{}", uuid::Uuid::new_v4().simple()));
    let lower = base.join("lower");
    std::fs::create_dir_all(&lower).map_err(|e| fail("scratch", e))?;
    std::fs::write(lower.join("kept"), b"lower").map_err(|e| fail("scratch", e))?;
    let result = Layer::new(&base.join("layers"), &lower)
        .map_err(|e| fail("layer", e))
        .and_then(|layer| write_through(&layer, &lower));
    let _ = std::fs::remove_dir_all(&base);
    result
}

/// Runs a child on `layer` that writes a file and removes one; checks where they went.
#[allow(unsafe_code)]
fn write_through(layer: &Layer, lower: &Path) -> Result<(), String> {
    let fail = |what: &str, e: std::io::Error| format!("{what}: {e}");
    let door = super::door::Door::new(None, false).map_err(|e| fail("namespace", e))?;
    let plan = door.in_child();
    let mount = layer.in_child();
    let write = lower.join("written");
    let mut command = std::process::Command::new("/bin/sh");
    command.arg("-c").arg("echo upper > \"$1\" && rm \"$2\"").arg("sh").arg(&write).arg(lower.join("kept"));
    command.stdin(std::process::Stdio::null()).stdout(std::process::Stdio::null()).stderr(std::process::Stdio::piped());
    // SAFETY: the hook makes only system calls on memory prepared before the fork.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut command, move || {
            super::door::open_in_child(&plan)?;
            mount_in_child(&mount)
        });
    }
    let output = command.output().map_err(|e| format!("the overlay could not be mounted here: {e}"))?;
    drop(door);
    if !output.status.success() {
        return Err(format!("a command on an overlay failed here: {}", String::from_utf8_lossy(&output.stderr).trim()));
    }
    let landed = std::fs::read(layer.upper().join("written")).ok();
    let untouched = !write.exists() && lower.join("kept").exists();
    match (landed.as_deref(), untouched) {
        (Some(b"upper\n"), true) => Ok(()),
        _ => Err("a write through the overlay did not land in its upper layer".into()),
    }
}
