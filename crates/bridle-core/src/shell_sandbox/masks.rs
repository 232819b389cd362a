//! What a command must not see: the doors to the desktop (the buses, X11, Wayland, the SSH
//! agent, the runtime dir) added to the masked paths, and the path lists made canonical.
//!
//! Rule: a door is masked by the path the environment names for it, and a mask inside another
//! is dropped (the outer one hides it, and a mount inside a masked folder cannot be made).

use std::ffi::OsString;
use std::path::PathBuf;

/// `masked` plus the doors to the desktop a command must not reach: `/run` and `/var/run` (the
/// system bus, container runtimes' sockets), the user's runtime dir (the session bus, the
/// keychain, Wayland) and every socket path `env` names for the session and system bus, X11,
/// Wayland and the SSH agent. (Abstract sockets need no mask: the command's network namespace is
/// never the host's.)
pub(super) fn with_desktop_doors(masked: &[PathBuf], env: impl Iterator<Item = (OsString, OsString)>) -> Vec<PathBuf> {
    let mut all = masked.to_vec();
    all.extend(["/run", "/var/run"].map(PathBuf::from));
    all.push(PathBuf::from(format!("/run/user/{}", rustix::process::getuid().as_raw())));
    let vars: std::collections::HashMap<String, String> =
        env.map(|(k, v)| (k.to_string_lossy().into_owned(), v.to_string_lossy().into_owned())).collect();
    let runtime = vars.get("XDG_RUNTIME_DIR").filter(|d| d.starts_with('/')).map(PathBuf::from);
    all.extend(runtime.clone());
    for name in ["DBUS_SESSION_BUS_ADDRESS", "DBUS_SYSTEM_BUS_ADDRESS"] {
        if let Some(address) = vars.get(name) {
            all.extend(bus_socket_paths(address));
        }
    }
    if let Some(display) = vars.get("DISPLAY") {
        all.extend(x11_socket(display));
    }
    if let Some(wayland) = vars.get("WAYLAND_DISPLAY") {
        let path = PathBuf::from(wayland);
        all.extend(if path.is_absolute() { Some(path) } else { runtime.map(|r| r.join(wayland)) });
    }
    if let Some(agent) = vars.get("SSH_AUTH_SOCK").filter(|a| a.starts_with('/')) {
        all.push(PathBuf::from(agent));
    }
    all
}

/// The socket paths (and socket folders) a D-Bus address names: `unix:path=`, `dir=`, `tmpdir=`
/// of each `;`-separated address.
pub(super) fn bus_socket_paths(address: &str) -> Vec<PathBuf> {
    address
        .split(';')
        .filter_map(|a| a.strip_prefix("unix:"))
        .flat_map(|a| a.split(','))
        .filter_map(|kv| kv.split_once('='))
        .filter(|(k, v)| matches!(*k, "path" | "dir" | "tmpdir") && v.starts_with('/'))
        .map(|(_, v)| PathBuf::from(v))
        .collect()
}

/// The X server's socket for `DISPLAY` (`:0`, `unix:0.0`; none for a remote display).
pub(super) fn x11_socket(display: &str) -> Option<PathBuf> {
    let (host, rest) = display.split_once(':')?;
    if !(host.is_empty() || host == "unix") {
        return None;
    }
    let number = rest.split('.').next().filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))?;
    Some(PathBuf::from(format!("/tmp/.X11-unix/X{number}")))
}

/// `paths` without those beneath another of them (the config file in the data dir): masking
/// the folder hides them already, and a mount inside a masked folder cannot be made.
pub(super) fn outermost(paths: Vec<PathBuf>) -> Vec<PathBuf> {
    paths.iter().filter(|p| !paths.iter().any(|q| q != *p && p.starts_with(q))).cloned().collect()
}

/// The paths of `paths` that exist, canonical, without duplicates.
pub(super) fn existing(paths: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for p in paths {
        if let Ok(canonical) = p.canonicalize() {
            if !out.contains(&canonical) {
                out.push(canonical);
            }
        }
    }
    out
}
