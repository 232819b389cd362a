//! The process limit of a session's sandboxed commands, where `RLIMIT_NPROC` cannot hold it: the
//! kernel never applies that limit to root (CI and containers run as root), so when Bridle runs
//! as root and can make a cgroup with the `pids` controller, every sandboxed command of the
//! session joins one, whose `pids.max` is the limit.
//!
//! Rule: a command joins the cgroup before it runs anything (between fork and exec, by a write
//! to a descriptor opened here), so nothing it starts escapes the count; the cgroup is removed
//! when the session's sandbox goes, and those a crashed Bridle left are removed by the next.

use std::io::Write;
use std::os::fd::{AsRawFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// One cgroup with a `pids.max`.
#[derive(Debug)]
pub(super) struct PidsCgroup {
    dir: PathBuf,
    procs: std::fs::File,
}

impl PidsCgroup {
    /// A fresh cgroup under this process's own, allowing at most `max` processes; `None` where
    /// no writable `pids` hierarchy is found.
    pub(super) fn create(max: u64) -> Option<PidsCgroup> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let parent = own_pids_cgroup()?;
        sweep(&parent);
        let dir = parent.join(format!("bridle-{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed)));
        std::fs::create_dir(&dir).ok()?;
        let made = (|| {
            std::fs::OpenOptions::new()
                .write(true)
                .open(dir.join("pids.max"))?
                .write_all(max.to_string().as_bytes())?;
            std::fs::OpenOptions::new().write(true).open(dir.join("cgroup.procs"))
        })();
        match made {
            Ok(procs) => Some(PidsCgroup { dir, procs }),
            Err(e) => {
                tracing::debug!("cannot set up the pids cgroup {}: {e}", dir.display());
                let _ = std::fs::remove_dir(&dir);
                None
            }
        }
    }

    /// The descriptor a child writes `0` to, to join.
    pub(super) fn procs(&self) -> RawFd {
        self.procs.as_raw_fd()
    }
}

impl Drop for PidsCgroup {
    fn drop(&mut self) {
        // Fails while a process is still inside; the next Bridle's sweep removes it then.
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// This process's cgroup in a hierarchy with the `pids` controller, when it can make children
/// there: cgroup v1's `pids` hierarchy, or v2 where `pids` is enabled for children.
fn own_pids_cgroup() -> Option<PathBuf> {
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let membership = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    for line in membership.lines() {
        let mut parts = line.splitn(3, ':');
        let (id, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        let v2 = id == "0" && controllers.is_empty();
        if !v2 && !controllers.split(',').any(|c| c == "pids") {
            continue;
        }
        let Some((root, mount)) = mount_point(&mounts, v2) else { continue };
        // Without a cgroup namespace, a container's mount shows its own cgroup as the root.
        let inside = Path::new(path).strip_prefix(&root).unwrap_or(Path::new(path));
        let dir = mount.join(inside.strip_prefix("/").unwrap_or(inside));
        if v2 && !enable_pids_for_children(&dir) {
            continue;
        }
        return Some(dir);
    }
    None
}

/// The root and the mount point of the v1 `pids` hierarchy (or, with `v2`, the unified one).
fn mount_point(mountinfo: &str, v2: bool) -> Option<(PathBuf, PathBuf)> {
    mountinfo.lines().find_map(|line| {
        let (left, right) = line.split_once(" - ")?;
        let mut fields = right.split(' ');
        let (fstype, _source, options) = (fields.next()?, fields.next()?, fields.next().unwrap_or(""));
        let wanted =
            if v2 { fstype == "cgroup2" } else { fstype == "cgroup" && options.split(',').any(|o| o == "pids") };
        let mut left = left.split(' ').skip(3);
        let (root, point) = (left.next()?, left.next()?);
        wanted.then(|| (PathBuf::from(root), PathBuf::from(point)))
    })
}

/// Whether children of `dir` get the `pids` controller (enabling it fails where `dir` itself
/// holds processes and is not the root: the kernel's rule for v2).
fn enable_pids_for_children(dir: &Path) -> bool {
    let enabled = |file: &str| {
        std::fs::read_to_string(dir.join(file)).map(|c| c.split_whitespace().any(|c| c == "pids")).unwrap_or(false)
    };
    if enabled("cgroup.subtree_control") {
        return true;
    }
    enabled("cgroup.controllers")
        && std::fs::OpenOptions::new()
            .write(true)
            .open(dir.join("cgroup.subtree_control"))
            .and_then(|mut f| f.write_all(b"+pids"))
            .is_ok()
}

/// Removes the empty cgroups of Bridle processes that are gone.
fn sweep(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.strip_prefix("bridle-")).and_then(|n| n.split('-').next()) else {
            continue;
        };
        if !Path::new("/proc").join(pid).exists() {
            let _ = std::fs::remove_dir(entry.path());
        }
    }
}
