//! bubblewrap: the command runs with no privilege whoever starts it (a user namespace of its
//! own, every capability dropped, no new user namespace inside, the seccomp filter of
//! [`super::seccomp`]), in namespaces of its own for every kind bwrap knows (PID: it sees and
//! signals only its own processes; network: never the host's, so neither its abstract sockets nor
//! its loopback services are reachable), and sees the machine read-only, the workspace writable, a
//! private `/tmp` and `/dev/shm` of bounded size, a read-only `/dev`, home empty but for what
//! toolchains need, and empty in place of every masked path.
//!
//! Rule: bwrap is found at a fixed system path (never through `PATH`, which the workspace could
//! prepend to) and proven, once per process, to run a command with every one of these options
//! before any command relies on it.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::Confinement;

/// Where distributions install bwrap.
const PLACES: &[&str] = &["/usr/bin/bwrap", "/usr/local/bin/bwrap", "/bin/bwrap"];

/// The bwrap program, once it has run a command with every namespace Bridle asks of it.
pub(super) fn program() -> Result<&'static Path, String> {
    static PROBED: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    PROBED.get_or_init(probe).as_ref().map(PathBuf::as_path).map_err(Clone::clone)
}

fn probe() -> Result<PathBuf, String> {
    let Some(program) = PLACES.iter().map(PathBuf::from).find(|p| p.is_file()) else {
        return Err("bubblewrap (bwrap) is not installed".into());
    };
    let output = std::process::Command::new(&program)
        .args(PRIVILEGE)
        .args(["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--", "true"])
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", program.display()))?;
    if !output.status.success() {
        let said = String::from_utf8_lossy(&output.stderr);
        return Err(format!("bubblewrap cannot create its namespaces here: {}", said.trim()));
    }
    Ok(program)
}

/// What takes every privilege away, for root too: a user namespace, every other namespace bwrap
/// knows (the network's included), no capability, no user namespace inside.
const PRIVILEGE: &[&str] =
    &["--unshare-user", "--unshare-all", "--disable-userns", "--cap-drop", "ALL", "--die-with-parent", "--new-session"];

/// bwrap's options for `c`, up to (not including) `--` and the command; `seccomp` is the file
/// descriptor the filter's bytes can be read from; `own_network`: bwrap starts inside the
/// network namespace its parent made or joined for the command (the session's loopback, the
/// proxy's door: [`super::door`]) and keeps it, rather than making an empty one.
pub(super) fn arguments(c: &Confinement, seccomp: Option<i32>, own_network: bool) -> Vec<OsString> {
    let mut args: Vec<OsString> = PRIVILEGE.iter().map(OsString::from).collect();
    if own_network {
        args.push("--share-net".into());
    }
    if let Some(fd) = seccomp {
        args.extend(["--seccomp".into(), fd.to_string().into()]);
    }
    let mut push = |parts: &[&std::ffi::OsStr]| args.extend(parts.iter().map(|p| p.to_os_string()));
    let tmp_size = c.tmp_size.to_string();
    push(&["--ro-bind".as_ref(), "/".as_ref(), "/".as_ref()]);
    // `/dev` is a tmpfs of half the memory: read-only but for its devices, and its shared
    // memory folder bounded like `/tmp`.
    push(&[
        "--dev".as_ref(),
        "/dev".as_ref(),
        "--size".as_ref(),
        tmp_size.as_ref(),
        "--tmpfs".as_ref(),
        "/dev/shm".as_ref(),
        "--remount-ro".as_ref(),
        "/dev".as_ref(),
        "--proc".as_ref(),
        "/proc".as_ref(),
        "--size".as_ref(),
        tmp_size.as_ref(),
        "--tmpfs".as_ref(),
        "/tmp".as_ref(),
    ]);
    // The private `/tmp` hides what is around a workspace that lives under it: the repository
    // that holds it comes back read-only (its `.git`), as it is seen elsewhere.
    if let Some(git) = enclosing_repository(&c.root).filter(|g| g.starts_with("/tmp")) {
        push(&["--ro-bind".as_ref(), git.as_os_str(), git.as_os_str()]);
    }
    let binds: Vec<&Path> = std::iter::once(c.root.as_path()).chain(c.writable.iter().map(PathBuf::as_path)).collect();
    // A masked folder that holds the workspace (or a writable path) is emptied first, so the
    // bind that follows puts the workspace back inside it.
    let (outer, inner): (Vec<&PathBuf>, Vec<&PathBuf>) =
        c.masked.iter().filter(|m| visible(m, &binds)).partition(|m| binds.iter().any(|b| b.starts_with(m)));
    for m in outer {
        push(&["--tmpfs".as_ref(), m.as_os_str()]);
    }
    // Home, empty but for what is shown of it (read-only; a link stays a link).
    if let Some(home) = c.home.as_ref().filter(|h| visible(h, &binds)) {
        push(&["--tmpfs".as_ref(), home.as_os_str()]);
        // Each by where it really is (a link may lead anywhere, home included), never one that
        // leads into a masked path.
        for shown in &c.readable {
            let Ok(real) = shown.canonicalize() else { continue };
            if !c.masked.iter().any(|m| real.starts_with(m)) {
                push(&["--ro-bind-try".as_ref(), real.as_os_str(), shown.as_os_str()]);
            }
        }
    }
    // A worktree's common git folder, read-only wherever it is (never inside a masked path).
    for shown in c.shown.iter().filter(|s| !c.masked.iter().any(|m| s.starts_with(m))) {
        push(&["--ro-bind".as_ref(), shown.as_os_str(), shown.as_os_str()]);
    }
    // Later mounts cover earlier ones: the extra writable paths first, so one that holds the
    // workspace cannot undo its read-only parts.
    for w in &c.writable {
        push(&["--bind".as_ref(), w.as_os_str(), w.as_os_str()]);
    }
    let root_bind = if c.read_only { "--ro-bind" } else { "--bind" };
    push(&[root_bind.as_ref(), c.root.as_os_str(), c.root.as_os_str()]);
    if !c.read_only {
        // Each protected path's folder is bound onto itself first: a mount point cannot be
        // renamed or removed, so `mv .git .git2 && mkdir .git` cannot swap in a writable copy.
        let mut folders: Vec<&Path> = Vec::new();
        for p in c.protected_in_root.iter().filter(|p| p.exists()) {
            if let Some(folder) = p.parent().filter(|f| *f != c.root && !folders.contains(f)) {
                folders.push(folder);
                push(&["--bind".as_ref(), folder.as_os_str(), folder.as_os_str()]);
            }
        }
        for p in c.protected_in_root.iter().filter(|p| p.exists()) {
            push(&["--ro-bind".as_ref(), p.as_os_str(), p.as_os_str()]);
        }
    }
    for m in inner {
        if m.is_dir() {
            push(&["--tmpfs".as_ref(), m.as_os_str(), "--remount-ro".as_ref(), m.as_os_str()]);
        } else {
            push(&["--ro-bind".as_ref(), "/dev/null".as_ref(), m.as_os_str()]);
        }
    }
    // The workspace is a mount point in here; without this, git in a workspace that is a
    // sub-folder of a repository would stop looking for `.git` at it.
    push(&["--setenv".as_ref(), "GIT_DISCOVERY_ACROSS_FILESYSTEM".as_ref(), "1".as_ref()]);
    push(&["--chdir".as_ref(), c.root.as_os_str()]);
    args
}

/// Whether `path` can be seen inside the sandbox at all: what lives under the private `/tmp` is
/// gone unless a bind brings it back.
fn visible(path: &Path, binds: &[&Path]) -> bool {
    !path.starts_with("/tmp") || binds.iter().any(|b| path.starts_with(b) || b.starts_with(path))
}

/// The `.git` (folder or file) of the repository a workspace is a sub-folder of, if any: the
/// nearest above the workspace itself (one in the workspace comes with its bind).
fn enclosing_repository(root: &Path) -> Option<PathBuf> {
    root.ancestors().skip(1).map(|a| a.join(".git")).find(|g| g.symlink_metadata().is_ok())
}
