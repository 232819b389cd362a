//! The OS sandbox `bash` runs in (DESIGN §5.1): bubblewrap, else Landlock, else none.
//!
//! A shell line can always hide more than a reader of text finds, so the kernel enforces and the
//! guard explains. Inside the sandbox a command has no privilege whoever Bridle runs as (root
//! included), runs under one seccomp filter ([`seccomp`]), sees the file system read-only but for
//! the workspace (its `.git/config` and `.git/hooks/` stay read-only), a private `/tmp` and the
//! paths the user made writable; every sensitive path, Bridle's data dir and its config, and every
//! door to the desktop (`/run`, the runtime dir, the sockets the environment names) are masked; it
//! never shares the host's network namespace (its only way out, when `[sandbox.network]` is not
//! off, is Bridle's proxy through the door of [`door`]); it can signal only its own processes; and
//! it may start at most `max_processes` processes.
//!
//! The rule this module keeps: it fails closed and says so. When no mechanism works here the
//! sandbox is [`SandboxKind::None`] with the reason, every result says how it ran (and what its
//! backend does not hold), and the guard asks (`auto`) or denies (`plan`) shell calls that would
//! run unconfined.

mod bwrap;
mod child;
mod door;
mod env;
mod home;
mod landlock;
mod masks;
mod overlay;
mod pids;
mod seccomp;

pub use bridle_protocol::SandboxKind;
pub use door::{Loopback, SANDBOX_PORT, SSH_COMMAND, SSH_TUNNEL};
pub use env::{allows_name, child_environment, HostEnvironment};
pub use home::HOME_READABLE;
pub use overlay::{probe as probe_overlay, sweep as sweep_layers, Layer, SCRATCH};
pub use pids::{end_leftovers as end_leftover_cgroups, CallCgroup};

use std::ffi::OsString;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, OnceLock};

use crate::config::{SandboxBackend, SandboxConfig};
use masks::{existing, outermost, with_desktop_doors};

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
    /// The home folder, shown empty but for `readable` (none: shown as it is).
    pub home: Option<PathBuf>,
    /// What of home is shown, read-only: the built-in list and the config's `readable`, as
    /// named under home (existing).
    pub readable: Vec<PathBuf>,
    /// Shown read-only wherever they are (home, the private `/tmp`), unless masked: a worktree's
    /// common git folder, which git in it reads (canonical, existing).
    pub shown: Vec<PathBuf>,
    /// Masked: empty whatever the command (canonical, existing).
    pub masked: Vec<PathBuf>,
    /// Whether commands may reach hosts through Bridle's proxy (`[sandbox.network]` not off).
    pub network: bool,
    /// Ports of the host's loopback commands reach at their own `127.0.0.1` (`host_ports`).
    pub host_ports: Vec<u16>,
    /// Size of the private `/tmp`, in bytes.
    pub tmp_size: u64,
    /// Most processes the session's commands may run at once (each command's own count where only
    /// `RLIMIT_NPROC` is available).
    pub max_processes: u64,
}

/// The shell sandbox of one session: which mechanism, and what it allows.
#[derive(Debug, Clone)]
pub struct ShellSandbox {
    kind: SandboxKind,
    unsandboxed_because: Option<String>,
    /// The user turned the sandbox off (`[sandbox] enabled = false`): unconfined by choice, not
    /// because nothing works here.
    disabled: bool,
    confinement: Confinement,
    /// The config's names passed to children beyond the built-in list.
    extra_env: Vec<String>,
    /// The environment Bridle was launched with, as the front end read it (none until
    /// [`Self::with_host_environment`]): children inherit its allowed part.
    host_env: HostEnvironment,
    /// The session's pids cgroup, made at the first command (none where it cannot be made).
    pids: Arc<OnceLock<Option<pids::PidsCgroup>>>,
    /// The seccomp filter for `kind`, built once (none when nothing is confined).
    filter: Option<Arc<seccompiler::BpfProgram>>,
    /// The scratch folders a captured command writes through, or why commands are not captured
    /// (before the overlay is probed: [`Self::capture`]).
    capture: Result<Vec<String>, String>,
    /// Where commands' layers are made (the data dir's `layers`).
    layers: PathBuf,
    /// Whether existing scratch folders are written straight through the overlay (not in
    /// `review`, where nothing a command writes reaches the workspace unseen).
    through: bool,
    /// Whether an overlay mounts on this workspace, probed at the first question.
    overlay: Arc<OnceLock<Result<(), String>>>,
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
            home: None,
            readable: settings.readable.iter().filter(|p| p.symlink_metadata().is_ok()).cloned().collect(),
            shown: Vec::new(),
            masked: outermost(existing(&with_desktop_doors(masked, std::iter::empty()))),
            network: settings.network.is_on(),
            host_ports: settings.network.host_ports.iter().copied().take(door::MAX_HOST_PORTS).collect(),
            tmp_size: settings.tmp_size.bytes(),
            max_processes: settings.max_processes,
        };
        let (mut kind, mut unsandboxed_because) = if !settings.enabled {
            (SandboxKind::None, Some("the sandbox is disabled in the config ([sandbox] enabled = false)".to_string()))
        } else {
            choose(settings.backend)
        };
        // Without its filter no backend keeps its promises: then nothing is confined, and says so.
        let policy = seccomp::Policy::for_backend(kind, settings.unix_sockets);
        let filter = match policy.map(seccomp::program).transpose() {
            Ok(program) => program.map(Arc::new),
            Err(e) => {
                (kind, unsandboxed_because) = (SandboxKind::None, Some(e.to_string()));
                None
            }
        };
        if let Some(why) = &unsandboxed_because {
            tracing::warn!("bash runs without an OS sandbox: {why}");
        }
        let extra_env = settings.env.clone();
        let capture = match (kind, settings.capture, read_only) {
            (_, false, _) => Err("capture is off in the config ([sandbox] capture = false)".to_string()),
            (_, _, true) => Err("the workspace is read-only for commands in this mode".to_string()),
            (SandboxKind::Bwrap, true, false) => Ok(settings.scratch.clone()),
            (SandboxKind::Landlock, ..) => Err("the Landlock sandbox cannot put a command on an overlay".to_string()),
            (SandboxKind::None, ..) => Err("commands run without an OS sandbox".to_string()),
        };
        Self {
            kind,
            unsandboxed_because,
            disabled: !settings.enabled,
            confinement,
            extra_env,
            host_env: HostEnvironment::default(),
            pids: Arc::default(),
            filter,
            capture,
            layers: std::env::temp_dir().join("bridle-layers"),
            through: true,
            overlay: Arc::default(),
        }
    }

    /// A sandbox that confines nothing, saying why.
    pub fn unsandboxed(root: &Path, why: impl Into<String>) -> Self {
        let confinement = Confinement {
            root: root.to_path_buf(),
            read_only: false,
            protected_in_root: Vec::new(),
            writable: Vec::new(),
            home: None,
            readable: Vec::new(),
            shown: Vec::new(),
            masked: Vec::new(),
            network: true,
            host_ports: Vec::new(),
            tmp_size: 0,
            max_processes: 0,
        };
        Self {
            kind: SandboxKind::None,
            unsandboxed_because: Some(why.into()),
            disabled: false,
            confinement,
            extra_env: Vec::new(),
            host_env: HostEnvironment::default(),
            pids: Arc::default(),
            filter: None,
            capture: Err("commands run without an OS sandbox".to_string()),
            layers: std::env::temp_dir().join("bridle-layers"),
            through: true,
            overlay: Arc::default(),
        }
    }

    /// The same sandbox, passing also the variables `names` to what it starts.
    pub fn with_env(mut self, names: &[String]) -> Self {
        self.extra_env = names.to_vec();
        self
    }

    /// The same sandbox for a process launched with `host` (read once, by the front end's wiring):
    /// what its children inherit (the allowed part), and the desktop sockets the variables name,
    /// masked too.
    pub fn with_host_environment(mut self, host: &HostEnvironment) -> Self {
        if self.kind != SandboxKind::None {
            let masked = with_desktop_doors(&self.confinement.masked, host.vars());
            self.confinement.masked = outermost(existing(&masked));
        }
        self.host_env = host.clone();
        self
    }

    /// The environment a program started here inherits: the host environment's allowed part.
    pub fn inherited_environment(&self) -> Vec<(OsString, OsString)> {
        self.environment(self.host_env.vars())
    }

    /// The environment a program started here gets from `vars` (DESIGN §4.2).
    pub fn environment(&self, vars: impl Iterator<Item = (OsString, OsString)>) -> Vec<(OsString, OsString)> {
        child_environment(vars, &self.extra_env)
    }

    /// The same sandbox hiding `home` from commands but for what toolchains need
    /// ([`HOME_READABLE`]) and the config's `readable` paths (DESIGN §5.1).
    pub fn with_home(mut self, home: Option<&Path>) -> Self {
        let home = home.and_then(|h| h.canonicalize().ok()).filter(|h| h.parent().is_some());
        if let (Some(home), true) = (&home, self.kind != SandboxKind::None) {
            let mut readable = home::readable_in(home);
            readable.append(&mut self.confinement.readable);
            self.confinement.readable = readable;
            self.confinement.home = Some(home.clone());
        }
        self
    }

    /// The same sandbox for a session's git worktree (DESIGN §16): the repository's common git
    /// folder `common` is shown read-only (git in the worktree reads it), and the parts of it a
    /// commit writes (`git_folders`; both from the session's record) are writable unless the
    /// workspace is read-only; the worktree's `.git` file, which names its git folder, is not.
    pub fn in_worktree(mut self, common: &Path, git_folders: &[PathBuf]) -> Self {
        let dot_git = self.confinement.root.join(".git");
        if dot_git.symlink_metadata().is_ok_and(|m| m.is_file()) {
            self.confinement.protected_in_root.push(dot_git);
        }
        self.confinement.shown.extend(existing(&[common.to_path_buf()]));
        if !self.confinement.read_only {
            self.confinement.writable.extend(existing(git_folders));
        }
        self
    }

    /// The same sandbox with home shown (read-only, the masks applied), for what the user
    /// configured to run (hooks), not what the model asks for.
    pub fn showing_home(mut self) -> Self {
        self.confinement.home = None;
        self.confinement.readable.clear();
        self
    }

    /// What of the home folder commands see (`None`: home is not hidden, or nothing is confined).
    pub fn home_shown(&self) -> Option<String> {
        let home = self.confinement.home.as_ref()?;
        Some(home::shown(home, &self.confinement.readable))
    }

    /// The same sandbox making its commands' layers under `layers` (the data dir's).
    pub fn with_layers(mut self, layers: PathBuf) -> Self {
        self.layers = layers;
        self
    }

    /// Where commands' layers are made.
    pub fn layers(&self) -> &Path {
        &self.layers
    }

    /// The same sandbox with nothing written through its overlay: every scratch folder is on the
    /// layer too, so what a command writes there is judged before it lands (`review`).
    pub fn capturing_everything(mut self) -> Self {
        self.through = false;
        self
    }

    /// The same sandbox capturing no command's changes, for `why`.
    pub fn not_capturing(mut self, why: &str) -> Self {
        self.capture = Err(why.to_string());
        self
    }

    /// Whether existing scratch folders are written straight through the overlay.
    pub fn writes_through(&self) -> bool {
        self.through
    }

    /// Whether commands are to be captured here at all (the backend, the mode and the config
    /// allow it), before anything is probed.
    pub fn captures(&self) -> bool {
        self.capture.is_ok()
    }

    /// Whether a (not escalated) command's changes are captured on an overlay of this workspace
    /// (DESIGN §4.3): the scratch folders it writes through, or why not. Whether an overlay
    /// mounts on this workspace is probed once per sandbox, at the first question.
    pub fn capture(&self) -> Result<&[String], String> {
        let scratch = self.capture.as_deref().map_err(Clone::clone)?;
        let probed = self.overlay.get_or_init(|| overlay::probe(&self.layers, &self.confinement.root));
        probed.clone().map_err(|e| format!("no overlay on this workspace: {e}"))?;
        Ok(scratch)
    }

    /// The paths outside the workspace the config makes writable for commands.
    pub fn writable_paths(&self) -> &[PathBuf] {
        &self.confinement.writable
    }

    /// Whether the workspace is read-only for commands (`plan`).
    pub fn read_only(&self) -> bool {
        self.confinement.read_only
    }

    /// The mechanism commands run under.
    pub fn kind(&self) -> SandboxKind {
        self.kind
    }

    /// Whether the user turned the sandbox off in the config (`[sandbox] enabled = false`).
    pub fn disabled(&self) -> bool {
        self.disabled
    }

    /// Why commands run unconfined, when they do.
    pub fn unsandboxed_because(&self) -> Option<&str> {
        self.unsandboxed_because.as_deref()
    }

    /// Whether commands may reach the network: through Bridle's proxy when confined (and
    /// `[sandbox.network]` is not off), the host's own when not.
    pub fn network(&self) -> bool {
        match self.kind {
            SandboxKind::Bwrap | SandboxKind::Landlock => self.confinement.network,
            SandboxKind::None => true,
        }
    }

    /// What this sandbox's backend does not hold, for results and the window (`None`: it holds
    /// every promise of DESIGN §5.1).
    pub fn gaps(&self) -> Option<String> {
        let mut gaps: Vec<&str> = Vec::new();
        match self.kind {
            SandboxKind::Bwrap => {}
            SandboxKind::Landlock => gaps.push(
                "Landlock shares /tmp and /dev/shm with the host, lets commands see (not signal) the host's \
                 processes, lists (not reads) the names in hidden folders, allows TCP to the proxy's port on \
                 any address (it names ports, not addresses), and leaves .git/config and .git/hooks/ to the guard",
            ),
            SandboxKind::None => return Some("nothing is confined".into()),
        }
        let no_cgroup = self.session_cgroup().is_none();
        if no_cgroup && rustix::process::getuid().is_root() {
            gaps.push("the process limit is not enforced (root, and no pids cgroup could be made)");
        }
        if self.kind == SandboxKind::Landlock && !self.confinement.host_ports.is_empty() {
            gaps.push("the host ports are reached directly on the shared loopback, not through Bridle: their connections are not audited one by one");
        }
        if no_cgroup && self.kind == SandboxKind::Landlock {
            // bubblewrap's PID namespace ends with the command; Landlock has none.
            gaps.push("a process a command detaches (a new session, a cleared environment) can outlive its call: no cgroup could be made here");
        }
        (!gaps.is_empty()).then(|| gaps.join("; "))
    }

    /// The session's cgroup, made at the first command (none where no cgroup can be made: an
    /// unprivileged user outside a delegated subtree).
    fn session_cgroup(&self) -> Option<&pids::PidsCgroup> {
        self.pids.get_or_init(|| pids::PidsCgroup::create(self.confinement.max_processes)).as_ref()
    }

    /// How a command is held to `max_processes` and tracked: in a cgroup of its own below the
    /// session's (whose `pids.max` is the limit, and which the kernel keeps every process it
    /// starts in: returned, to be dropped when its call ends), else `RLIMIT_NPROC`, which root
    /// is exempt from. `per_call`: whether the caller keeps a cgroup for the command (else it
    /// joins the session's). Moving a process into a cgroup costs some milliseconds: the kernel
    /// waits for an RCU grace period.
    fn process_limit(&self, per_call: bool) -> (child::ProcessLimit, Option<pids::CallCgroup>) {
        match self.session_cgroup() {
            Some(session) => match per_call.then(|| session.for_call()).flatten() {
                Some(call) => (child::ProcessLimit::Cgroup(call.procs()), Some(call)),
                None => (child::ProcessLimit::Cgroup(session.procs()), None),
            },
            None => (child::ProcessLimit::Rlimit(self.confinement.max_processes), None),
        }
    }

    /// Spawns `bash -c` with `launch`, confined (or not, when `escalated` or there is no
    /// sandbox), in a process group of its own; returns the child, how it runs, and when it may
    /// reach the network through the proxy, the listener the proxy is to serve for it (the
    /// command's environment already names it).
    pub(crate) async fn spawn(&self, mut launch: Launch<'_>, escalated: bool) -> std::io::Result<Spawned> {
        let kind = if escalated { SandboxKind::None } else { self.kind };
        let proxied = launch.network && self.confinement.network;
        if proxied {
            // Nothing may send a host around the proxy (there is no way around it, but a client
            // told to go direct would fail where it need not).
            launch.env.retain(|(name, _)| !name.eq_ignore_ascii_case("no_proxy"));
        }
        let loopback = launch.loopback;
        let layered = launch.layer.is_some();
        // What a client of this command's proxy listener must present (DESIGN §5.2).
        let credential = crate::network::wire::Credential::new();
        // The host's loopback ports forwarded to the command's own (not for an escalated command,
        // which has the host's network).
        let host_ports: &[u16] = if kind == SandboxKind::Bwrap { &self.confinement.host_ports } else { &[] };
        if layered && kind != SandboxKind::Bwrap {
            return Err(std::io::Error::other("an overlay of the workspace needs bubblewrap"));
        }
        let (door, landlock_listener) = match kind {
            // A layer is mounted inside the user namespace the door makes or joins.
            SandboxKind::Bwrap if proxied || loopback.is_some() || layered || !host_ports.is_empty() => {
                let door = door::Door::new(loopback, proxied, host_ports)?;
                let env = door.proxy_address().map(|a| door::proxy_environment(a, &credential));
                launch.env.extend(env.unwrap_or_default());
                (Some(door), None)
            }
            SandboxKind::Landlock if proxied => {
                let listener = std::net::TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, 0))?;
                let address = std::net::SocketAddrV4::new(std::net::Ipv4Addr::LOCALHOST, listener.local_addr()?.port());
                launch.env.extend(door::proxy_environment(address, &credential));
                (None, Some(listener))
            }
            _ => (None, None),
        };
        let (mut command, seccomp_fd, cgroup) = self.command(launch, kind, door.as_ref(), true)?;
        let child = match kind {
            SandboxKind::Landlock => {
                let port = landlock_listener.as_ref().and_then(|l| l.local_addr().ok()).map(|a| a.port());
                landlock::spawn(command, &self.confinement, self.filter()?, port).await?
            }
            SandboxKind::Bwrap | SandboxKind::None => command.spawn()?,
        };
        drop(seccomp_fd);
        let (listener, host_ports) = match door {
            Some(door) => door.receive()?,
            None => (landlock_listener, Vec::new()),
        };
        let listener = listener.map(|listener| ProxyListener { listener, credential });
        Ok(Spawned { child, kind, listener, host_ports, cgroup })
    }

    /// [`ShellSandbox::spawn`] for a caller outside the async runtime (always confined as far as
    /// this sandbox goes, and without network): a `std` child.
    pub(crate) fn spawn_blocking(&self, launch: Launch<'_>) -> std::io::Result<std::process::Child> {
        let (mut command, seccomp_fd, _) = self.command(launch, self.kind, None, false)?;
        let child = match self.kind {
            SandboxKind::Landlock => landlock::spawn_blocking(command, &self.confinement, self.filter()?)?,
            SandboxKind::Bwrap | SandboxKind::None => command.as_std_mut().spawn()?,
        };
        drop(seccomp_fd);
        Ok(child)
    }

    /// The seccomp filter of a confining sandbox.
    fn filter(&self) -> std::io::Result<Arc<seccompiler::BpfProgram>> {
        self.filter.clone().ok_or_else(|| std::io::Error::other("no seccomp filter was built for this sandbox"))
    }

    /// The command for `launch` under `kind` (bwrap inside the network `door` opens, when there
    /// is one), and the descriptor it must hold open until it is spawned (bwrap reads its seccomp
    /// filter from it).
    #[allow(clippy::type_complexity)]
    fn command(
        &self,
        launch: Launch<'_>,
        kind: SandboxKind,
        door: Option<&door::Door<'_>>,
        per_call: bool,
    ) -> std::io::Result<(tokio::process::Command, Option<std::os::fd::OwnedFd>, Option<pids::CallCgroup>)> {
        let layer = launch.layer;
        let mut seccomp_fd = None;
        let mut command = match kind {
            SandboxKind::Bwrap => {
                let mut command = tokio::process::Command::new(bwrap::program().map_err(std::io::Error::other)?);
                let fd = child::memory_file(&seccomp::bytes(&self.filter()?))?;
                let arguments = bwrap::arguments(&self.confinement, Some(fd.as_raw_fd()), door.is_some());
                seccomp_fd = Some(fd);
                tracing::debug!(?arguments, "bash under bwrap");
                command.args(arguments).arg("--").arg("bash");
                command
            }
            SandboxKind::Landlock | SandboxKind::None => tokio::process::Command::new("bash"),
        };
        command
            .arg("-c")
            .arg(launch.script)
            .current_dir(launch.cwd)
            .env_clear()
            .envs(launch.env)
            .stdin(launch.stdin)
            .stdout(launch.stdout)
            .stderr(launch.stderr)
            .kill_on_drop(true);
        // A session of its own (so a group of its own) with no controlling terminal: nothing it
        // starts can take the terminal Bridle runs in, whatever the backend.
        child::new_session(&mut command);
        let mut cgroup = None;
        if kind != SandboxKind::None {
            let seccomp = seccomp_fd.as_ref().map(AsRawFd::as_raw_fd);
            let layer = layer.map(Layer::in_child);
            let (limit, call) = self.process_limit(per_call);
            cgroup = call;
            child::prepare(&mut command, limit, seccomp, door.map(door::Door::in_child), layer);
        }
        Ok((command, seccomp_fd, cgroup))
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
    /// Its standard input.
    pub stdin: Stdio,
    /// Its standard output.
    pub stdout: Stdio,
    /// Its standard error.
    pub stderr: Stdio,
    /// Whether it may reach the network through the proxy (when the sandbox's policy is not off).
    pub network: bool,
    /// The session's shared network namespace, joined under bubblewrap (none: the command gets
    /// one of its own).
    pub loopback: Option<&'a Loopback>,
    /// The upper layer the command writes into instead of the workspace (under bubblewrap
    /// only; none: it writes to the workspace).
    pub layer: Option<&'a Layer>,
}

/// A started command.
#[derive(Debug)]
pub(crate) struct Spawned {
    /// The process (bwrap's, or bash's).
    pub child: tokio::process::Child,
    /// How it runs.
    pub kind: SandboxKind,
    /// The listener its proxy variables name, for the proxy to serve while it runs.
    pub listener: Option<ProxyListener>,
    /// Under bubblewrap, a listener on the command's `127.0.0.1` for each host port it may reach
    /// (`[sandbox.network] host_ports`): Bridle forwards what connects to the host's loopback.
    pub host_ports: Vec<(u16, std::net::TcpListener)>,
    /// Its cgroup, where one can be made: everything it started is inside, and dropping this
    /// kills them all. Kept until its call (or its background process) ends: a caller that
    /// takes only `child` from a `Spawned` it does not keep kills the command at once.
    pub cgroup: Option<pids::CallCgroup>,
}

/// A command's way out: the listener its proxy variables name, and the credential they carry.
#[derive(Debug)]
pub(crate) struct ProxyListener {
    /// The listener, for the proxy to serve while the command runs.
    pub listener: std::net::TcpListener,
    /// What a client must present.
    pub credential: crate::network::wire::Credential,
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

#[cfg(test)]
mod tests;
