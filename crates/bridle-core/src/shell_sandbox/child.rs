//! What a sandboxed command's process gets between fork and exec: its process limit (a pids
//! cgroup it joins, else `RLIMIT_NPROC`), its network namespace, made or the session's joined, with
//! the proxy's door when it has network ([`super::door`]), the overlay of the workspace when it
//! writes to a layer ([`super::overlay`]), and the one file descriptor it must inherit (the
//! seccomp filter bwrap reads).
//!
//! Rule: only async-signal-safe system calls run in the forked child (no allocation, no lock),
//! and no descriptor is made inheritable in Bridle itself, where a process spawned at the same
//! moment on another thread would inherit it too.

use std::io::{Seek, Write};
use std::os::fd::{OwnedFd, RawFd};

/// `bytes` in an anonymous memory file (close-on-exec), read from its start.
pub(super) fn memory_file(bytes: &[u8]) -> std::io::Result<OwnedFd> {
    let fd = rustix::fs::memfd_create("bridle-seccomp", rustix::fs::MemfdFlags::CLOEXEC)?;
    let mut file = std::fs::File::from(fd);
    file.write_all(bytes)?;
    file.rewind()?;
    Ok(OwnedFd::from(file))
}

/// How a child's processes are counted.
#[derive(Debug, Clone, Copy)]
pub(super) enum ProcessLimit {
    /// Join the pids cgroup whose `cgroup.procs` is open as this descriptor.
    Cgroup(RawFd),
    /// `RLIMIT_NPROC`, soft and hard (0: none): it counts every process of the user, and the
    /// kernel does not apply it to root.
    Rlimit(u64),
}

/// Makes the child, before anything else runs in it, the leader of a new session with no
/// controlling terminal (and of a new process group, whose id is its pid).
#[allow(unsafe_code)]
pub(super) fn new_session(command: &mut tokio::process::Command) {
    // SAFETY: setsid is one async-signal-safe system call.
    unsafe {
        command.pre_exec(|| rustix::process::setsid().map(drop).map_err(Into::into));
    }
}

/// Sets, in the child only, its process limit and makes `inherit` survive the exec.
#[allow(unsafe_code)]
pub(super) fn prepare(
    command: &mut tokio::process::Command,
    limit: ProcessLimit,
    inherit: Option<RawFd>,
    door: Option<super::door::DoorInChild>,
    layer: Option<super::overlay::LayerInChild>,
) {
    let hook = move || {
        match limit {
            ProcessLimit::Cgroup(procs) => {
                // SAFETY: open in the parent until the spawn returns, so open in this copy of it.
                let procs = unsafe { std::os::fd::BorrowedFd::borrow_raw(procs) };
                rustix::io::write(procs, b"0")?;
            }
            ProcessLimit::Rlimit(0) => {}
            ProcessLimit::Rlimit(max) => {
                let limit = rustix::process::Rlimit { current: Some(max), maximum: Some(max) };
                rustix::process::setrlimit(rustix::process::Resource::Nproc, limit)?;
            }
        }
        if let Some(door) = &door {
            super::door::open_in_child(door)?;
        }
        // In the user namespace the door made or joined: the workspace becomes the overlay.
        if let Some(layer) = &layer {
            super::overlay::mount_in_child(layer)?;
        }
        if let Some(fd) = inherit {
            // SAFETY: `fd` is open in the parent until the spawn returns, so it is open in this
            // child, which is a copy of the parent taken during the spawn.
            let fd = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
            rustix::io::fcntl_setfd(fd, rustix::io::FdFlags::empty())?;
        }
        Ok(())
    };
    // SAFETY: the hook makes only system calls (write, setrlimit, fcntl, the door's and the mount's),
    // async-signal-safe; it allocates nothing and takes no lock.
    unsafe {
        command.pre_exec(hook);
    }
}
