//! The OS sandbox `bash` runs in (DESIGN §5.1): bubblewrap, else Landlock, else none.
//!
//! A shell line can always hide more than a reader of text finds, so the kernel enforces and the
//! guard explains. Inside the sandbox the file system is read-only but for the workspace (its
//! `.git/config` and `.git/hooks/` stay read-only), a private `/tmp` and the paths the user made
//! writable; every sensitive path, Bridle's data dir and its config are masked; there is no
//! network unless the config allows it; a command can signal only its own processes.
//!
//! The rule this module keeps: it fails closed and says so. When no mechanism works here the
//! sandbox is [`SandboxKind::None`] with the reason, every result says how it ran, and the guard
//! asks (`auto`) or denies (`plan`) shell calls that would run unconfined.

mod bwrap;
mod landlock;

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::config::{SandboxBackend, SandboxConfig};

/// How a command was (or would be) confined.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SandboxKind {
    /// bubblewrap: mount, PID and network namespaces.
    Bwrap,
    /// Landlock: the kernel's file, TCP and signal restrictions.
    Landlock,
    /// Unconfined.
    None,
}

impl SandboxKind {
    /// The name in results, the audit and the UI.
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxKind::Bwrap => "bwrap",
            SandboxKind::Landlock => "landlock",
            SandboxKind::None => "none",
        }
    }
}

/// What a sandboxed command may touch, for one workspace.
#[derive(Debug, Clone)]
pub(crate) struct Confinement {
    /// The workspace (canonical): writable unless `read_only`.
    pub root: PathBuf,
    /// `plan` mode: the workspace is read-only too.
    pub read_only: bool,
    /// Inside the workspace, never writable (no persistence through git).
    pub protected_in_root: Vec<PathBuf>,
    /// Extra writable paths from the config (canonical, existing).
    pub writable: Vec<PathBuf>,
    /// Masked: empty whatever the command (canonical, existing).
    pub masked: Vec<PathBuf>,
    /// Whether the network is reachable.
    pub network: bool,
}

/// The shell sandbox of one session: which mechanism, and what it allows.
#[derive(Debug, Clone)]
pub struct ShellSandbox {
    kind: SandboxKind,
    unsandboxed_because: Option<String>,
    confinement: Confinement,
}

impl ShellSandbox {
    /// The sandbox for a workspace at `root`: `masked` are the sensitive paths (credentials,
    /// Bridle's data dir and config file); `read_only` is `plan` mode. Probes, once per process,
    /// which mechanism works here.
    pub fn new(settings: &SandboxConfig, root: &Path, masked: &[PathBuf], read_only: bool) -> Self {
        let confinement = Confinement {
            root: root.to_path_buf(),
            read_only,
            protected_in_root: [".git/config", ".git/hooks"].iter().map(|p| root.join(p)).collect(),
            writable: existing(&settings.writable),
            masked: outermost(existing(&masked_with_runtime_dir(masked))),
            network: settings.network,
        };
        let (kind, unsandboxed_because) = if !settings.enabled {
            (SandboxKind::None, Some("the sandbox is disabled in the config ([sandbox] enabled = false)".to_string()))
        } else {
            choose(settings.backend)
        };
        if let Some(why) = &unsandboxed_because {
            tracing::warn!("bash runs without an OS sandbox: {why}");
        }
        Self { kind, unsandboxed_because, confinement }
    }

    /// A sandbox that confines nothing, saying why.
    pub fn unsandboxed(root: &Path, why: impl Into<String>) -> Self {
        let confinement = Confinement {
            root: root.to_path_buf(),
            read_only: false,
            protected_in_root: Vec::new(),
            writable: Vec::new(),
            masked: Vec::new(),
            network: true,
        };
        Self { kind: SandboxKind::None, unsandboxed_because: Some(why.into()), confinement }
    }

    /// The mechanism commands run under.
    pub fn kind(&self) -> SandboxKind {
        self.kind
    }

    /// Why commands run unconfined, when they do.
    pub fn unsandboxed_because(&self) -> Option<&str> {
        self.unsandboxed_because.as_deref()
    }

    /// Whether commands may reach the network.
    pub fn network(&self) -> bool {
        self.confinement.network
    }

    /// Spawns `bash -c` with `launch`, confined (or not, when `escalated` or there is no
    /// sandbox), in a process group of its own; returns the child and how it runs.
    pub(crate) async fn spawn(
        &self,
        launch: Launch<'_>,
        escalated: bool,
    ) -> std::io::Result<(tokio::process::Child, SandboxKind)> {
        let kind = if escalated { SandboxKind::None } else { self.kind };
        let mut command = match kind {
            SandboxKind::Bwrap => {
                let mut command = tokio::process::Command::new(bwrap::program().map_err(std::io::Error::other)?);
                let arguments = bwrap::arguments(&self.confinement);
                tracing::debug!(?arguments, "bash under bwrap");
                command.args(arguments).arg("--").arg("bash");
                command
            }
            SandboxKind::Landlock | SandboxKind::None => tokio::process::Command::new("bash"),
        };
        let errors = launch.output.try_clone()?;
        command
            .arg("-c")
            .arg(launch.script)
            .current_dir(launch.cwd)
            .env_clear()
            .envs(launch.env)
            .stdin(std::process::Stdio::null())
            .stdout(launch.output)
            .stderr(errors)
            .process_group(0)
            .kill_on_drop(true);
        let child = match kind {
            SandboxKind::Landlock => landlock::spawn(command, &self.confinement).await?,
            SandboxKind::Bwrap | SandboxKind::None => command.spawn()?,
        };
        Ok((child, kind))
    }
}

/// One command to start.
pub(crate) struct Launch<'a> {
    /// The shell line.
    pub script: &'a str,
    /// Where it starts.
    pub cwd: &'a Path,
    /// Its whole environment.
    pub env: Vec<(OsString, OsString)>,
    /// Where stdout and stderr go.
    pub output: std::fs::File,
}

/// Picks the first mechanism of `backend` that works on this machine.
fn choose(backend: SandboxBackend) -> (SandboxKind, Option<String>) {
    let bwrap = || bwrap::program().map(|_| SandboxKind::Bwrap);
    let landlock = || landlock::available().map(|_| SandboxKind::Landlock);
    let tried = match backend {
        SandboxBackend::Bwrap => bwrap(),
        SandboxBackend::Landlock => landlock(),
        SandboxBackend::Auto => bwrap().or_else(|b| landlock().map_err(|l| format!("{b}; {l}"))),
    };
    match tried {
        Ok(kind) => (kind, None),
        Err(why) => (SandboxKind::None, Some(why)),
    }
}

/// The user's runtime dir (`/run/user/UID`) holds the session bus and agent sockets, doors to
/// the keychain: masked with the rest.
fn masked_with_runtime_dir(masked: &[PathBuf]) -> Vec<PathBuf> {
    let mut all = masked.to_vec();
    all.push(PathBuf::from(format!("/run/user/{}", rustix::process::getuid().as_raw())));
    all
}

/// `paths` without those beneath another of them (the config file in the data dir): masking
/// the folder hides them already, and a mount inside a masked folder cannot be made.
fn outermost(paths: Vec<PathBuf>) -> Vec<PathBuf> {
    paths.iter().filter(|p| !paths.iter().any(|q| q != *p && p.starts_with(q))).cloned().collect()
}

/// The paths of `paths` that exist, canonical, without duplicates.
fn existing(paths: &[PathBuf]) -> Vec<PathBuf> {
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

#[cfg(test)]
mod tests;
