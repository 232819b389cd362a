//! A session's background processes (DESIGN §4.4): each started by a `bash` call with
//! `background: true`, in the session's sandbox and network, with its output in a ring, its
//! network served while it runs, and a task that waits for its end.
//!
//! Rules: at most [`MAX_PER_SESSION`] run at once; each is recorded in the store before the call
//! answers (so a crash leaves nothing behind: [`super::end_leftovers`]) and closed when it ends;
//! they all end with their session ([`SessionProcesses::stop_all`], or dropping it); stopping
//! one ends its whole group (SIGTERM, a grace period, SIGKILL, and a sweep of what left it).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use bridle_protocol::{ProcessInfo, ProcessState};
use tokio_util::sync::CancellationToken;

use super::group::{become_subreaper, start_time, ProcessGroup, MARKER};
use super::ring::{NewOutput, Ring};
use super::ProcessError;
use crate::changes::{Scan, ScannedChange};
use crate::clock::Clock;
use crate::network::{CallNetwork, HostUse};
use crate::shell_sandbox::{Launch, Loopback, SandboxKind, ShellSandbox};
use crate::store::{ProcessRow, Store};

/// Most background processes one session runs at once.
pub const MAX_PER_SESSION: usize = 8;
/// Output kept per process.
pub const RING_BYTES: usize = 1024 * 1024;
/// Longest a `process_output` call may wait for more.
pub const MAX_WAIT: Duration = Duration::from_secs(30);
/// How long a start waits for the process before answering (it answers at once when it ends).
pub const START_WAIT: Duration = Duration::from_secs(2);
/// Time between SIGTERM and SIGKILL.
const GRACE: Duration = Duration::from_secs(2);
/// How much of the output the window's list carries.
const TAIL_BYTES: usize = 4 * 1024;

/// Who hears that a process started or ended (the engine: an audit row, a window event).
pub trait Observer: Send + Sync {
    /// `process` started, or ended (`changed` and `hosts` then say what it did).
    fn changed(&self, process: &ProcessInfo, hosts: &[HostUse]);
}

/// An observer that hears nothing (outside a session's engine).
pub struct Unobserved;

impl Observer for Unobserved {
    fn changed(&self, _: &ProcessInfo, _: &[HostUse]) {}
}

/// One process to start.
pub struct Start<'a> {
    /// The call starting it (its processes carry the call's marker).
    pub call_id: &'a str,
    /// The command line, for `bash -c`.
    pub command: &'a str,
    /// The sandbox it runs in.
    pub shell: &'a ShellSandbox,
    /// The workspace: where it starts, and what its changes are listed against.
    pub root: &'a Path,
    /// Its environment (the marker is added).
    pub env: Vec<(OsString, OsString)>,
    /// Approved to run outside the sandbox.
    pub escalated: bool,
    /// The proxy and gate its connections go through, when it may reach hosts.
    pub network: Option<CallNetwork>,
}

/// What a read of a process's output returns.
#[derive(Debug)]
pub struct Output {
    /// The process as it stands.
    pub process: ProcessInfo,
    /// The output since the last read.
    pub text: String,
    /// Bytes that fell out of the ring before they were read.
    pub dropped: u64,
    /// How the sandbox ran it.
    pub sandbox: SandboxKind,
}

/// One session's background processes.
pub struct SessionProcesses {
    session_id: String,
    store: Arc<Store>,
    clock: Arc<dyn Clock>,
    observer: Arc<dyn Observer>,
    /// The network namespace its commands share under bubblewrap, made at the first command.
    loopback: OnceLock<Option<Loopback>>,
    table: Mutex<Vec<Arc<Background>>>,
    /// Processes numbered so far (ids go on from an earlier run of the session).
    numbered: AtomicU64,
    closed: AtomicBool,
}

impl std::fmt::Debug for SessionProcesses {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionProcesses").field("session_id", &self.session_id).finish_non_exhaustive()
    }
}

/// One process and what is known of it.
struct Background {
    row: Mutex<ProcessRow>,
    ring: Mutex<Ring>,
    /// Bumped at every output and at the end.
    pulse: tokio::sync::watch::Sender<u64>,
    stop: CancellationToken,
    /// The stop comes from the session closing (the model is told when it resumes).
    closing: AtomicBool,
    changed: Mutex<Vec<String>>,
    sandbox: SandboxKind,
}

impl Background {
    fn info(&self) -> ProcessInfo {
        ProcessInfo {
            tail: lock(&self.ring).tail(TAIL_BYTES),
            changed: lock(&self.changed).clone(),
            ..super::info_of(&lock(&self.row))
        }
    }

    fn ended(&self) -> bool {
        lock(&self.row).ended_at.is_some()
    }

    fn bump(&self) {
        self.pulse.send_modify(|n| *n += 1);
    }

    /// Waits until `done` holds or `limit` has passed, looking again at every output and at the
    /// end (subscribed before the first look, so no pulse falls between the two).
    async fn wait_until(&self, limit: Duration, done: impl Fn(&Self) -> bool) {
        let mut pulse = self.pulse.subscribe();
        let deadline = tokio::time::Instant::now() + limit;
        while !done(self) {
            if tokio::time::timeout_at(deadline, pulse.changed()).await.is_err() {
                break;
            }
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl SessionProcesses {
    /// The processes of `session_id`, recorded in `store`, heard by `observer`.
    pub fn new(session_id: &str, store: Arc<Store>, clock: Arc<dyn Clock>, observer: Arc<dyn Observer>) -> Self {
        let numbered = store.process_count(session_id).unwrap_or(0);
        Self {
            session_id: session_id.to_string(),
            store,
            clock,
            observer,
            loopback: OnceLock::new(),
            table: Mutex::new(Vec::new()),
            numbered: AtomicU64::new(numbered),
            closed: AtomicBool::new(false),
        }
    }

    /// The network namespace the session's commands share, under bubblewrap (made at the first
    /// call; where it cannot be made, each command gets one of its own, and servers one starts
    /// are not reachable from the next).
    pub fn loopback(&self, shell: &ShellSandbox) -> Option<&Loopback> {
        if shell.kind() != SandboxKind::Bwrap {
            return None;
        }
        self.loopback
            .get_or_init(|| {
                Loopback::new()
                    .inspect_err(|e| {
                        tracing::warn!("session {}: commands get no shared loopback: {e}", self.session_id)
                    })
                    .ok()
            })
            .as_ref()
    }

    /// Starts `start` in the background; returns its id. Refused past [`MAX_PER_SESSION`], once
    /// the session is closing, or when it cannot be recorded (a process the store does not know
    /// could outlive a crash).
    pub async fn start(&self, start: Start<'_>) -> Result<String, String> {
        if self.closed.load(Ordering::SeqCst) {
            return Err("the session is closing; no process can start".into());
        }
        let running: Vec<String> = self
            .all()
            .iter()
            .filter(|b| !b.ended())
            .map(|b| {
                let row = lock(&b.row);
                format!("{} (`{}`)", row.id, row.command)
            })
            .collect();
        if running.len() >= MAX_PER_SESSION {
            return Err(format!(
                "at most {MAX_PER_SESSION} background processes may run in a session, and {} do: {}. Stop one with process_stop first",
                running.len(),
                running.join(", ")
            ));
        }
        let root = start.root.to_path_buf();
        let before = {
            let root = root.clone();
            tokio::task::spawn_blocking(move || Scan::take(&root)).await.unwrap_or_default()
        };
        let (reader, writer) = std::io::pipe().map_err(|e| format!("cannot set up the process's output: {e}"))?;
        let errors = writer.try_clone().map_err(|e| format!("cannot set up the process's output: {e}"))?;
        let mut env = start.env;
        env.push((MARKER.into(), start.call_id.into()));
        let launch = Launch {
            script: start.command,
            cwd: start.root,
            env,
            stdin: std::process::Stdio::null(),
            stdout: writer.into(),
            stderr: errors.into(),
            network: start.network.as_ref().is_some_and(|n| n.proxy.is_some()),
            loopback: self.loopback(start.shell),
            layer: None,
        };
        become_subreaper();
        let spawned =
            start.shell.spawn(launch, start.escalated).await.map_err(|e| format!("cannot start bash: {e}"))?;
        let (child, cgroup) = (spawned.child, spawned.cgroup);
        // Owns the group from here: dropped, it kills it.
        let group = ProcessGroup::new(child.id(), start.call_id.to_string());
        let network = super::network::open(
            spawned.listener,
            spawned.host_ports,
            start.network.as_ref(),
            start.call_id,
            start.command,
        )?;
        let pid = child.id().unwrap_or(0);
        let own = std::process::id();
        let number = self.numbered.fetch_add(1, Ordering::SeqCst) + 1;
        let row = ProcessRow {
            session_id: self.session_id.clone(),
            id: format!("p{number}"),
            call_id: start.call_id.to_string(),
            command: start.command.to_string(),
            pid: i64::from(pid),
            pid_start: start_time(pid).unwrap_or(0) as i64,
            owner_pid: i64::from(own),
            owner_start: start_time(own).unwrap_or(0) as i64,
            started_at: self.clock.now_ms(),
            ended_at: None,
            state: ProcessState::Running.as_str().into(),
            exit_code: None,
        };
        // Dropping the group on this error kills what was started.
        self.store
            .insert_process(&row)
            .map_err(|e| format!("the process was not started: it cannot be recorded ({e})"))?;
        let id = row.id.clone();
        let background = Arc::new(Background {
            row: Mutex::new(row),
            ring: Mutex::new(Ring::new(RING_BYTES)),
            pulse: tokio::sync::watch::channel(0).0,
            stop: CancellationToken::new(),
            closing: AtomicBool::new(false),
            changed: Mutex::new(Vec::new()),
            sandbox: spawned.kind,
        });
        let drained =
            drain(reader, background.clone()).map_err(|e| format!("cannot read the process's output: {e}"))?;
        lock(&self.table).push(background.clone());
        self.observer.changed(&background.info(), &[]);
        let end = Ending { child, group, cgroup, network, drained, before, root };
        tokio::spawn(self.waiter(background, end));
        Ok(id)
    }

    /// The task that waits for a process's end and records it.
    fn waiter(
        &self,
        background: Arc<Background>,
        end: Ending,
    ) -> impl std::future::Future<Output = ()> + Send + 'static {
        let (store, clock, observer) = (self.store.clone(), self.clock.clone(), self.observer.clone());
        async move {
            let Ending { mut child, mut group, cgroup, network, drained, before, root } = end;
            let (stopped, code) = tokio::select! {
                status = child.wait() => (false, status.ok().and_then(|s| s.code())),
                () = background.stop.cancelled() => {
                    group.terminate();
                    let _ = tokio::time::timeout(GRACE, child.wait()).await;
                    (true, None)
                }
            };
            // What it left running ends with it.
            group.stop(if stopped { Duration::ZERO } else { Duration::from_millis(200) }).await;
            let _ = child.wait().await;
            drop(group);
            drop(cgroup);
            let hosts = match network.serving {
                Some(serving) => serving.finish().await,
                None => Vec::new(),
            };
            if let Some(forwarding) = network.forwarding {
                forwarding.finish().await;
            }
            let _ = tokio::time::timeout(GRACE, drained).await;
            let (changes, partial) =
                tokio::task::spawn_blocking(move || before.changes_until(&Scan::take(&root))).await.unwrap_or_default();
            let mut changed: Vec<String> = changes.iter().map(ScannedChange::shown).collect();
            if partial {
                changed.push("(the workspace is too large to list every change)".into());
            }
            *lock(&background.changed) = changed;
            let closing = background.closing.load(Ordering::SeqCst);
            let row = {
                let mut row = lock(&background.row);
                row.ended_at = Some(clock.now_ms());
                row.state = if stopped { ProcessState::Stopped } else { ProcessState::Exited }.as_str().into();
                row.exit_code = code;
                row.clone()
            };
            if let Err(e) = store.end_process(&row, !closing) {
                tracing::warn!("process {} of session {}: its end was not recorded: {e}", row.id, row.session_id);
            }
            // `bridle processes stop` from another process records the stop itself first.
            if let Some(stored) =
                store.processes(&row.session_id).ok().and_then(|rows| rows.into_iter().find(|r| r.id == row.id))
            {
                if stored.state != row.state {
                    *lock(&background.row) = stored;
                }
            }
            background.bump();
            observer.changed(&background.info(), &hosts);
        }
    }

    fn all(&self) -> Vec<Arc<Background>> {
        lock(&self.table).clone()
    }

    fn find(&self, id: &str) -> Result<Arc<Background>, ProcessError> {
        let all = self.all();
        all.iter().find(|b| lock(&b.row).id == id).cloned().ok_or_else(|| ProcessError::Unknown {
            id: id.to_string(),
            known: all.iter().map(|b| lock(&b.row).id.clone()).collect(),
        })
    }

    /// The session's processes, oldest first.
    pub fn list(&self) -> Vec<ProcessInfo> {
        self.all().iter().map(|b| b.info()).collect()
    }

    /// The output of `id` since the last read; waits up to `wait` (at most [`MAX_WAIT`]) for some
    /// when there is none yet and the process runs. The error is for the model (the tools that
    /// read output show it and branch on nothing).
    pub async fn output(&self, id: &str, wait: Duration) -> Result<Output, String> {
        let background = self.find(id).map_err(|e| e.to_string())?;
        background.wait_until(wait.min(MAX_WAIT), |b| lock(&b.ring).has_new() || b.ended()).await;
        let NewOutput { text, dropped } = lock(&background.ring).take_new();
        Ok(Output { process: background.info(), text, dropped, sandbox: background.sandbox })
    }

    /// Waits until `id` has ended, at most `limit`.
    pub async fn wait_end(&self, id: &str, limit: Duration) {
        if let Ok(background) = self.find(id) {
            background.wait_until(limit, Background::ended).await;
        }
    }

    /// Stops `id` (its group: SIGTERM, then SIGKILL after the grace period) and waits for its
    /// end; a process that already ended is left as it is.
    pub async fn stop(&self, id: &str) -> Result<ProcessInfo, ProcessError> {
        let background = self.find(id)?;
        stop_and_wait(&background).await;
        Ok(background.info())
    }

    /// Ends every process (the session is closing): none can start after this.
    pub async fn stop_all(&self) {
        self.closed.store(true, Ordering::SeqCst);
        let all = self.all();
        for background in &all {
            background.closing.store(true, Ordering::SeqCst);
        }
        futures::future::join_all(all.iter().map(stop_and_wait)).await;
    }
}

impl Drop for SessionProcesses {
    /// Whatever still runs is stopped (each waiter then kills its group).
    fn drop(&mut self) {
        for background in lock(&self.table).iter() {
            background.closing.store(true, Ordering::SeqCst);
            background.stop.cancel();
        }
    }
}

/// Asks `background` to stop and waits for its end (the grace period and the sweep included).
async fn stop_and_wait(background: &Arc<Background>) {
    background.stop.cancel();
    background.wait_until(GRACE * 4, Background::ended).await;
}

/// What the waiter holds for a process's end.
struct Ending {
    child: tokio::process::Child,
    group: ProcessGroup,
    /// Its cgroup, where one was made: dropped when it ends, it kills what it detached.
    cgroup: Option<crate::shell_sandbox::CallCgroup>,
    /// Its proxy and host ports, served while it runs.
    network: super::network::CommandNetwork,
    drained: tokio::sync::oneshot::Receiver<()>,
    before: Scan,
    root: PathBuf,
}

/// Copies the process's output into its ring on a thread of its own; the receiver resolves when
/// every writer has closed.
fn drain(
    mut reader: std::io::PipeReader,
    background: Arc<Background>,
) -> std::io::Result<tokio::sync::oneshot::Receiver<()>> {
    use std::io::Read as _;
    let (done, drained) = tokio::sync::oneshot::channel();
    std::thread::Builder::new().name("process-output".into()).spawn(move || {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            match reader.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    lock(&background.ring).push(&buf[..n]);
                    background.bump();
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            }
        }
        let _ = done.send(());
    })?;
    Ok(drained)
}
