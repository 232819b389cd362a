//! Landlock, where bubblewrap cannot run: the kernel lets the command read everything but the
//! masked paths, the host's terminals and the home folder (but for what of it is shown), write
//! only the workspace, `/tmp`, the usual devices and the user's writable paths, make no TCP
//! connection but to its proxy's port and the listed host ports, and no listener (ABI 4; a kernel that
//! cannot restrict TCP refuses to start the command rather than share the network), reach no
//! abstract socket and signal no process outside its own domain (ABI 6). The seccomp filter
//! refuses what Landlock does not confine: new Unix-domain sockets (a socket path is not a file
//! Landlock judges), UDP without network, mounts and namespaces. Every capability is dropped, so
//! a command started by root is no stronger than one started by a user.
//!
//! Landlock only adds permissions, so "everything but a masked path" is spelled as the siblings
//! along the way to it ([`cover`]). Rule: a Landlock domain, a seccomp filter and a thread's
//! capabilities are per thread and inherited by the children that thread forks, so all three are
//! applied on a fresh thread that spawns the command and ends; none of Bridle's own threads is
//! ever restricted.
//!
//! A masked path inside a writable folder (a data dir under `/tmp`) makes that folder's own
//! entries writable but not the folder itself: no new file at its top. Known limits, said in every
//! result ([`super::ShellSandbox::gaps`]): `/tmp` is shared with the host, host processes are
//! visible, `.git/config` and `.git/hooks/` are writable with the rest of the workspace (the guard
//! reads for them).

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use landlock::{
    Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, NetPort, PathBeneath, PathFd, Ruleset, RulesetAttr,
    RulesetCreatedAttr, RulesetStatus, Scope, ABI,
};

use seccompiler::BpfProgram;

use super::Confinement;

const TARGET: ABI = ABI::V6;

/// Devices every shell needs to write.
const DEVICES: &[&str] = &["/dev/null", "/dev/zero", "/dev/full", "/dev/shm"];

/// Terminals, out of reach whatever else is readable: the host's terminals are the user's
/// (a command could print a fake prompt there and read what is typed), and a command has no
/// controlling terminal of its own (it starts in a new session).
const TERMINALS: &[&str] = &["/dev/tty", "/dev/pts", "/dev/ptmx", "/dev/console"];

/// Whether this kernel enforces Landlock's file-system rules (probed once per process).
pub(super) fn available() -> Result<(), String> {
    static PROBED: OnceLock<Result<(), String>> = OnceLock::new();
    PROBED.get_or_init(probe).clone()
}

fn probe() -> Result<(), String> {
    // A throwaway thread takes a ruleset that allows everything: enforced means it works.
    let everything =
        Rules { read: Vec::new(), write: vec![PathBuf::from("/")], proxy_port: None, host_ports: Vec::new() };
    std::thread::spawn(move || everything.restrict_this_thread().map_err(|e| e.to_string()))
        .join()
        .map_err(|_| "the Landlock probe failed".to_string())?
}

/// Spawns `command` on a fresh thread restricted by `c`'s rules and `filter`; it may connect to
/// `proxy_port` on the host's loopback (and to no other TCP port).
pub(super) async fn spawn(
    mut command: tokio::process::Command,
    c: &Confinement,
    filter: Arc<BpfProgram>,
    proxy_port: Option<u16>,
) -> std::io::Result<tokio::process::Child> {
    let rules = Rules { proxy_port, ..Rules::for_confinement(c) };
    let runtime = tokio::runtime::Handle::current();
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::spawn(move || {
        let _runtime = runtime.enter();
        let spawned = rules.restrict_this_thread_wholly(&filter).and_then(|()| command.spawn());
        let _ = tx.send(spawned);
    });
    rx.await.map_err(|_| std::io::Error::other("the sandboxing thread ended without starting the command"))?
}

/// [`spawn`] for a caller outside the async runtime.
pub(super) fn spawn_blocking(
    mut command: tokio::process::Command,
    c: &Confinement,
    filter: Arc<BpfProgram>,
) -> std::io::Result<std::process::Child> {
    let rules = Rules::for_confinement(c);
    std::thread::spawn(move || rules.restrict_this_thread_wholly(&filter).and_then(|()| command.as_std_mut().spawn()))
        .join()
        .map_err(|_| std::io::Error::other("the sandboxing thread ended without starting the command"))?
}

/// The paths a confined command may read and write, and the one port it may connect to.
struct Rules {
    read: Vec<PathBuf>,
    write: Vec<PathBuf>,
    proxy_port: Option<u16>,
    host_ports: Vec<u16>,
}

impl Rules {
    fn for_confinement(c: &Confinement) -> Self {
        let mut hidden = c.masked.clone();
        hidden.extend(TERMINALS.iter().map(PathBuf::from).filter(|p| p.exists()));
        hidden.extend(c.home.clone());
        let mut read = cover(Path::new("/"), &hidden);
        // What of home is shown, through links to where they lead, the masks still applied.
        for shown in &c.readable {
            if let Some(real) = shown.canonicalize().ok().filter(|r| !c.masked.iter().any(|m| r.starts_with(m))) {
                read.extend(cover(&real, &c.masked));
            }
        }
        // A worktree's common git folder, read-only, the masks applied.
        for shown in c.shown.iter().filter(|s| !c.masked.iter().any(|m| s.starts_with(m))) {
            read.extend(cover(shown, &c.masked));
        }
        // Never writable, even through a writable folder that holds them (a workspace under
        // `/tmp`): the masked paths, and in `plan` the workspace. `.git/config` and `.git/hooks/`
        // cannot be kept out here: a rule on a folder covers all beneath it, so writing the
        // workspace root but not its `.git/config` would also forbid creating or deleting any
        // top-level file. bubblewrap keeps them read-only; under Landlock the guard watches them.
        let mut keep: Vec<PathBuf> = c.masked.clone();
        let mut write = Vec::new();
        if c.read_only {
            keep.push(c.root.clone());
        } else {
            // A masked folder that holds the workspace (`/run/media/...`) masks what is around it,
            // not the workspace itself (as under bubblewrap, where the workspace is bound back).
            let around: Vec<PathBuf> = keep.iter().filter(|k| !c.root.starts_with(k)).cloned().collect();
            write.extend(cover(&c.root, &around));
        }
        write.extend(cover(Path::new("/tmp"), &keep));
        for w in &c.writable {
            write.extend(cover(w, &keep));
        }
        write.extend(DEVICES.iter().map(PathBuf::from).filter(|p| p.exists()));
        Self { read, write, proxy_port: None, host_ports: c.host_ports.clone() }
    }

    /// Landlock, the seccomp `filter` and no capability, on this thread (for good).
    fn restrict_this_thread_wholly(&self, filter: &[seccompiler::sock_filter]) -> std::io::Result<()> {
        self.restrict_this_thread()?;
        super::seccomp::apply_to_this_thread(filter)?;
        drop_capabilities()
    }

    fn restrict_this_thread(&self) -> std::io::Result<()> {
        let all = AccessFs::from_all(TARGET);
        let read: BitFlags<AccessFs> = AccessFs::from_read(TARGET);
        let write = all & !read;
        // TCP must be restricted or nothing runs: best effort here would share the host's network.
        let ruleset = Ruleset::default()
            .handle_access(all)
            .map_err(other)?
            .set_compatibility(CompatLevel::HardRequirement)
            .handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp)
            .map_err(|e| other(format!("this kernel's Landlock cannot restrict TCP ({e})")))?
            .set_compatibility(CompatLevel::BestEffort);
        let mut created =
            ruleset.scope(Scope::Signal | Scope::AbstractUnixSocket).map_err(other)?.create().map_err(other)?;
        if let Some(port) = self.proxy_port {
            created = created.add_rule(NetPort::new(port, AccessNet::ConnectTcp)).map_err(other)?;
        }
        // The host ports the config lists: reached directly on the shared loopback (Landlock
        // cannot give a command a loopback of its own to forward to).
        for port in &self.host_ports {
            created = created.add_rule(NetPort::new(*port, AccessNet::ConnectTcp)).map_err(other)?;
        }
        // Listing any folder is allowed (names, not contents), so `ls ~` works; reading is not.
        created =
            created.add_rule(PathBeneath::new(PathFd::new("/").map_err(other)?, AccessFs::ReadDir)).map_err(other)?;
        for path in &self.read {
            if let Ok(fd) = PathFd::new(path) {
                created = created.add_rule(PathBeneath::new(fd, read)).map_err(other)?;
            }
        }
        for path in &self.write {
            if let Ok(fd) = PathFd::new(path) {
                created = created.add_rule(PathBeneath::new(fd, read | write)).map_err(other)?;
            }
        }
        let status = created.restrict_self().map_err(other)?;
        if status.ruleset == RulesetStatus::NotEnforced {
            return Err(std::io::Error::other("Landlock is not enforced on this kernel"));
        }
        Ok(())
    }
}

/// Empties this thread's capability sets and bounding set: what it execs gains none back, even
/// as root.
fn drop_capabilities() -> std::io::Result<()> {
    use rustix::thread::{CapabilitySet, CapabilitySets};
    for bit in 0..64 {
        match rustix::thread::remove_capability_from_bounding_set(CapabilitySet::from_bits_retain(1 << bit)) {
            // Past the last capability this kernel knows, or not allowed (no CAP_SETPCAP: an
            // unprivileged user, whose bounding set grants nothing without file capabilities).
            Ok(()) | Err(rustix::io::Errno::INVAL) | Err(rustix::io::Errno::PERM) => {}
            Err(e) => return Err(e.into()),
        }
    }
    let none = CapabilitySets {
        effective: CapabilitySet::empty(),
        permitted: CapabilitySet::empty(),
        inheritable: CapabilitySet::empty(),
    };
    rustix::thread::set_capabilities(None, none).map_err(Into::into)
}

fn other(e: impl std::fmt::Display) -> std::io::Error {
    std::io::Error::other(format!("cannot set up the Landlock sandbox: {e}"))
}

/// The smallest set of paths under `root` that together hold everything beneath it except
/// `excluded` (and what is beneath those): `root` itself when nothing excluded is inside it,
/// else its entries, skipping an excluded one and descending into one that holds an excluded
/// path. Empty when `root` itself is excluded.
pub(super) fn cover(root: &Path, excluded: &[PathBuf]) -> Vec<PathBuf> {
    if excluded.iter().any(|e| root.starts_with(e)) {
        return Vec::new();
    }
    let inside: Vec<&PathBuf> = excluded.iter().filter(|e| e.starts_with(root)).collect();
    if inside.is_empty() {
        return vec![root.to_path_buf()];
    }
    let Ok(entries) = std::fs::read_dir(root) else { return Vec::new() };
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        // A rule is taken on what a link resolves to: `/dev/stdin` would name this thread's own
        // pipe (which Landlock refuses), `/dev/fd` its descriptors. What a link points at is
        // covered, or not, where it lives.
        if entry.file_type().is_ok_and(|t| t.is_symlink()) {
            continue;
        }
        if inside.iter().any(|e| e.starts_with(&path)) {
            if entry.file_type().map(|t| t.is_dir()).unwrap_or(false) {
                out.extend(cover(&path, excluded));
            }
        } else {
            out.push(path);
        }
    }
    out
}
