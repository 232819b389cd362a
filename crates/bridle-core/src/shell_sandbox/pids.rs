//! The cgroups of a session's sandboxed commands, where one can be made (root, or a delegated
//! cgroup v2 subtree): the session's, whose `pids.max` is its process limit (the kernel never
//! applies `RLIMIT_NPROC` to root), and one per command below it, so that everything a command
//! started — detached with `setsid`, its environment cleared — ends with its call: the kernel
//! knows a process's cgroup, and a process cannot leave it.
//!
//! Rule: a command joins its cgroup before it runs anything (between fork and exec, by a write
//! to a descriptor opened here), so nothing it starts escapes; a command's cgroup is killed
//! (`cgroup.kill`) and removed when its call lets go of it; the next Bridle kills and removes
//! what a crashed one left ([`end_leftovers`]).

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

/// One command's cgroup: everything it started is inside. Dropping it kills them all.
#[derive(Debug)]
pub struct CallCgroup {
    dir: PathBuf,
    procs: std::fs::File,
}

impl CallCgroup {
    /// The descriptor a child writes `0` to, to join.
    pub(super) fn procs(&self) -> RawFd {
        self.procs.as_raw_fd()
    }

    /// How many processes are still inside.
    pub fn count(&self) -> usize {
        std::fs::read_to_string(self.dir.join("cgroup.procs")).map(|p| p.lines().count()).unwrap_or(0)
    }
}

impl Drop for CallCgroup {
    fn drop(&mut self) {
        // Killed now; removed on a thread of its own, so no call waits for the kernel to let go.
        let dir = std::mem::take(&mut self.dir);
        let _ = kill(&dir);
        let _ = std::thread::Builder::new().name("cgroup-removal".into()).spawn(move || kill_and_remove(&dir));
    }
}

/// Kills every process in the cgroup `dir` and below it at once (`cgroup.kill`, Linux 5.14).
fn kill(dir: &Path) -> std::io::Result<()> {
    std::fs::OpenOptions::new().write(true).open(dir.join("cgroup.kill"))?.write_all(b"1")
}

/// Kills every process in the cgroup `dir` (and below it) and removes it, waiting a little for
/// the kernel to reap them (a cgroup with a process in it cannot be removed).
fn kill_and_remove(dir: &Path) {
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                kill_and_remove(&entry.path());
            }
        }
    }
    let killed = kill(dir);
    for _ in 0..200 {
        if killed.is_err() {
            // Before Linux 5.14 (or cgroup v1): each process by its pid.
            for pid in std::fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default().lines() {
                if let Some(pid) = pid.trim().parse().ok().and_then(rustix::process::Pid::from_raw) {
                    let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
                }
            }
        }
        if std::fs::remove_dir(dir).is_ok() || !dir.exists() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    tracing::warn!("the cgroup {} could not be emptied and removed", dir.display());
}

/// Kills what Bridle processes that are gone (killed, crashed) left in their cgroups, and
/// removes those cgroups: what their commands started ends with them. Returns how many cgroups
/// went.
pub fn end_leftovers() -> usize {
    own_pids_cgroup().map_or(0, |parent| sweep(&parent))
}

impl PidsCgroup {
    /// A cgroup for one command, below the session's (`None` where it cannot be made).
    pub(super) fn for_call(&self) -> Option<CallCgroup> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        // Children of the session's cgroup get the `pids` controller (the session's limit
        // counts them all); the session's cgroup itself holds no process (cgroup v2's rule).
        let _ = std::fs::OpenOptions::new()
            .write(true)
            .open(self.dir.join("cgroup.subtree_control"))
            .and_then(|mut f| f.write_all(b"+pids"));
        let dir = self.dir.join(format!("call-{}", NEXT.fetch_add(1, Ordering::Relaxed)));
        std::fs::create_dir(&dir).ok()?;
        match std::fs::OpenOptions::new().write(true).open(dir.join("cgroup.procs")) {
            Ok(procs) => Some(CallCgroup { dir, procs }),
            Err(e) => {
                tracing::debug!("cannot set up the cgroup {}: {e}", dir.display());
                let _ = std::fs::remove_dir(&dir);
                None
            }
        }
    }

    /// A fresh cgroup under this process's own, allowing at most `max` processes (0: no limit);
    /// `None` where no writable `pids` hierarchy is found.
    pub(super) fn create(max: u64) -> Option<PidsCgroup> {
        let max = if max == 0 { "max".to_string() } else { max.to_string() };
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let parent = own_pids_cgroup()?;
        sweep(&parent);
        let dir = parent.join(format!("bridle-{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed)));
        std::fs::create_dir(&dir).ok()?;
        let made = (|| {
            std::fs::OpenOptions::new().write(true).open(dir.join("pids.max"))?.write_all(max.as_bytes())?;
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
        // What is left in it ends with the session's sandbox.
        kill_and_remove(&self.dir);
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

/// Kills and removes the cgroups under `parent` of Bridle processes that are gone; how many.
fn sweep(parent: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(parent) else { return 0 };
    let mut ended = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.strip_prefix("bridle-")).and_then(|n| n.split('-').next()) else {
            continue;
        };
        if !Path::new("/proc").join(pid).exists() {
            kill_and_remove(&entry.path());
            ended += 1;
        }
    }
    ended
}
