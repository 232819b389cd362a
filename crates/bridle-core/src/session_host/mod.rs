//! The state of the desktop window's front end: the launch's wiring and its live sessions
//! (DESIGN §16: any number at once, each with its engine, processes and sandbox), one of them
//! shown; and the answers to every command the window sends, as `Result<T, ErrorInfo>`. It sits
//! at layer L5, beside `wiring`; the desktop shell only hands its answers to Tauri and its
//! [`Outgoing`] messages to the window.
//!
//! Rules: at launch, a session of this workspace that an earlier run left waiting on approvals
//! is reopened (its requests can still be answered and its turn resumes); otherwise a new
//! session starts. Showing another session never stops one: each stays live until it is
//! deleted, archived or the app exits, and one session is never run by two engines (its lease).
//! Each engine's events are forwarded numbered (`seq`) by a task of its own, every session's
//! (they name their session; the window keeps the shown one's and counts the rest). An answer
//! to a question goes to the session that asked, shown or not. The MCP servers belong to their
//! session (they start in its workspace); the shown session's list is forwarded after every
//! change and when it becomes the shown one, numbered past every list sent or answered before,
//! so the window keeps the newest whichever way it came. SQLite, files and the keychain are
//! touched on the blocking pool, never on the caller's thread.

mod audit;
mod desk;
mod sessions;
mod settings;
mod skills;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};

use bridle_protocol::{ErrorCode, ErrorInfo, Event, McpServerList, SequencedEvent, SessionSummary};
use tokio::sync::mpsc::Receiver;
use tokio::sync::{watch, Mutex};

use crate::clock::SystemClock;
use crate::engine::{Engine, EngineDeps, SessionSpec};
use crate::mcp::McpHub;
use crate::provider::{self, ModelProvider};
use crate::store::Store;
use crate::wiring::{Wiring, WiringError};

pub use settings::rules_explain;

/// What the host sends the window.
pub enum Outgoing {
    /// An event of a live session, with its `seq` in that session's stream.
    Engine(Box<SequencedEvent>),
    /// The shown session's MCP servers, numbered, after any change of their states.
    Mcp(McpServerList),
}

/// Delivers what the host sends the window.
pub type Forward = Arc<dyn Fn(Outgoing) + Send + Sync>;

/// Loads the wiring again (after Settings saved the config), with the launch's flags and the
/// environment the front end reads.
pub type Reload = Arc<dyn Fn() -> Result<Wiring, WiringError> + Send + Sync>;

/// Why opening a session or answering a command failed, before it becomes an [`ErrorInfo`].
type Failure = Box<dyn std::error::Error + Send + Sync>;

/// A live session, with its MCP servers.
struct Live {
    engine: Engine,
    summary: SessionSummary,
    mcp: Arc<McpHub>,
    /// The parent whose engine runs it, for a child shown on its own (DESIGN §16.1): the
    /// MCP servers are the parent's, and it ends with the parent.
    child_of: Option<String>,
}

struct Inner {
    wiring: std::sync::RwLock<Wiring>,
    reload: Reload,
    store: Arc<Store>,
    /// The live sessions, by id.
    sessions: Mutex<HashMap<String, Live>>,
    /// The session the window shows (read by the MCP forwarders without the lock above).
    shown: std::sync::RwLock<Option<String>>,
    forward: Forward,
    /// The number of the last MCP list sent or answered.
    mcp_seq: AtomicU64,
}

impl Inner {
    fn shown(&self) -> Option<String> {
        self.shown.read().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    fn set_shown(&self, id: Option<String>) {
        *self.shown.write().unwrap_or_else(std::sync::PoisonError::into_inner) = id;
    }

    /// `hub`'s list as the window gets it, pushed or answered: numbered past every list before.
    fn mcp_list(&self, hub: &McpHub) -> McpServerList {
        McpServerList { seq: self.mcp_seq.fetch_add(1, Ordering::SeqCst) + 1, ..hub.status() }
    }
}

/// Shared by every command; cheap to clone.
#[derive(Clone)]
pub struct SessionHost(Arc<Inner>);

/// A host that may still be starting: the window opens at once and its commands wait here.
#[derive(Clone)]
pub struct Starting(watch::Receiver<Option<Result<SessionHost, ErrorInfo>>>);

impl Starting {
    /// The host once it has started, or why it did not.
    pub async fn get(&self) -> Result<SessionHost, ErrorInfo> {
        let mut ready = self.0.clone();
        let started = match ready.wait_for(Option::is_some).await {
            Ok(state) => state.clone(),
            Err(_) => None,
        };
        started.unwrap_or_else(|| Err(failure(ErrorCode::NotStarted, "the engine did not start")))
    }
}

/// A command's failure as the window gets it.
fn failure(code: ErrorCode, e: impl std::fmt::Display) -> ErrorInfo {
    ErrorInfo { code, message: e.to_string(), retryable: false }
}

/// An error with its causes, `outer: cause: cause`, as a log line or message shows it.
fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

impl SessionHost {
    /// The host as a [`Starting`] handle now, and the work that starts it, for the front end to
    /// spawn on its runtime (the store, the sandbox probe and the keychain take a while; the
    /// window need not wait).
    pub fn start_later(
        wiring: Wiring,
        reload: Reload,
        forward: Forward,
    ) -> (Starting, impl Future<Output = ()> + Send + 'static) {
        let (ready, starting) = watch::channel(None);
        let work = async move {
            let started = SessionHost::start(wiring, reload, forward).await.map_err(|e| {
                let why = chain(&*e);
                tracing::error!("the engine did not start: {why}");
                failure(ErrorCode::NotStarted, why)
            });
            let _ = ready.send(Some(started));
        };
        (Starting(starting), work)
    }

    /// Opens the store and starts the launch's session.
    pub async fn start(wiring: Wiring, reload: Reload, forward: Forward) -> Result<SessionHost, Failure> {
        let _phase = crate::clock::Phase::start("engine started (in all)");
        let store = wiring.store()?;
        let waiting = crate::clock::Phase::start("session waiting on approvals looked up");
        let spec = match waiting_session(&store, &wiring.workspace)? {
            Some(id) => SessionSpec::Resume(id),
            None => SessionSpec::New,
        };
        drop(waiting);
        let workspace = wiring.workspace.clone();
        let host = SessionHost(Arc::new(Inner {
            wiring: std::sync::RwLock::new(wiring),
            reload,
            store,
            sessions: Mutex::new(HashMap::new()),
            shown: std::sync::RwLock::new(None),
            forward,
            mcp_seq: AtomicU64::new(0),
        }));
        host.show(spec, workspace).await?;
        Ok(host)
    }

    fn wiring(&self) -> Wiring {
        self.0.wiring.read().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    /// Shows `spec` in the window: a live session as it is, another one started in
    /// `workspace` with the current wiring. The sessions live already go on.
    async fn show(&self, spec: SessionSpec, workspace: PathBuf) -> Result<SessionSummary, Failure> {
        let mut sessions = self.0.sessions.lock().await;
        if let SessionSpec::Resume(id) = &spec {
            if let Some(live) = sessions.get(id) {
                let summary = live.summary.clone();
                self.shown_now(id.clone(), &live.mcp);
                return Ok(summary);
            }
            if let Some(summary) = self.show_child(&mut sessions, id) {
                return Ok(summary);
            }
        }
        let opened = self.spawn(spec, workspace).await?;
        let (id, summary) = (opened.summary.session_id.clone(), opened.summary.clone());
        self.shown_now(id.clone(), &opened.mcp);
        sessions.insert(id, opened);
        Ok(summary)
    }

    /// Marks `id` as shown and sends the window its MCP servers.
    fn shown_now(&self, id: String, mcp: &McpHub) {
        self.0.set_shown(Some(id));
        (self.0.forward)(Outgoing::Mcp(self.0.mcp_list(mcp)));
    }

    /// Ends the shown session's engine and starts it again with the current wiring (settings
    /// saved, skills trusted); with none shown, a new session starts. When the restart fails
    /// the session is left closed and another live one is shown, if any.
    async fn restart_shown(&self) -> Result<SessionSummary, Failure> {
        let old = match self.0.shown() {
            Some(id) => self.0.sessions.lock().await.remove(&id),
            None => None,
        };
        let Some(old) = old else { return self.show(SessionSpec::New, self.wiring().workspace).await };
        // A child starts again with its parent.
        if let Some(parent) = old.child_of.clone() {
            self.show(SessionSpec::Resume(parent), PathBuf::from(&old.summary.workspace)).await?;
            return Box::pin(self.restart_shown()).await;
        }
        let (id, workspace) = (old.summary.session_id.clone(), old.summary.workspace.clone());
        close_live(old).await;
        self.0.forget_children(&id).await;
        let restarted = self.show(SessionSpec::Resume(id), PathBuf::from(workspace)).await;
        if restarted.is_err() {
            self.show_any().await;
        }
        restarted
    }

    /// Shows some live session when the shown one went; none when none is live.
    async fn show_any(&self) {
        let sessions = self.0.sessions.lock().await;
        match sessions.iter().next() {
            Some((id, live)) => self.shown_now(id.clone(), &live.mcp),
            None => self.0.set_shown(None),
        }
    }

    /// Starts an engine for `spec` and forwards its events.
    async fn spawn(&self, spec: SessionSpec, workspace: PathBuf) -> Result<Live, Failure> {
        // A session in a worktree of its own works there, whichever folder it was asked from.
        let workspace = match &spec {
            SessionSpec::Resume(id) => {
                let (store, id) = (self.0.store.clone(), id.clone());
                let record = tokio::task::spawn_blocking(move || store.worktree(&id)).await??;
                record.filter(|r| r.archived.is_none()).map(|r| r.worktree.path).unwrap_or(workspace)
            }
            SessionSpec::New => workspace,
        };
        // The session's workspace, for its MCP servers too.
        let mut wiring = self.wiring();
        wiring.workspace = workspace.clone();
        let provider: Arc<dyn ModelProvider> = match &wiring.config.provider {
            Some(p) => {
                let p = p.clone();
                let w = wiring.clone();
                let _phase = crate::clock::Phase::start("provider and its key (keychain)");
                // The key lookup may ask the keychain over D-Bus: off the async threads.
                tokio::task::spawn_blocking(move || w.provider(&p)).await??
            }
            None => Arc::new(provider::Unconfigured),
        };
        let mcp = wiring.mcp();
        let tools = {
            let _phase = crate::clock::Phase::start("built-in tools");
            Arc::new(crate::tools::builtin_registry()?)
        };
        let deps = EngineDeps {
            provider,
            tools,
            mcp: Some(mcp.clone()),
            store: self.0.store.clone(),
            clock: Arc::new(SystemClock),
            audit: wiring.audit()?,
        };
        let mut config = wiring.engine_config();
        config.front_end = "app";
        config.workspace = workspace.clone();
        let spawned = crate::clock::Phase::start("engine spawned");
        let (engine, events) = Engine::spawn(config, deps, spec)?;
        drop(spawned);
        let summary = summary_of(&engine, &workspace, &wiring);
        forward(events, self.0.forward.clone());
        forward_mcp(&mcp, engine.session_id().to_string(), Arc::downgrade(&self.0));
        Ok(Live { engine, summary, mcp, child_of: None })
    }

    /// Shows child `id` of a live session (DESIGN §16.1): it runs under its parent's engine, which
    /// forwards its events; `None` when no live session has it.
    fn show_child(&self, sessions: &mut HashMap<String, Live>, id: &str) -> Option<SessionSummary> {
        let (engine, parent) = sessions.values().find_map(|live| live.engine.agent(id).map(|e| (e, live)))?;
        let workspace = PathBuf::from(&parent.summary.workspace);
        let mcp = parent.mcp.clone();
        let (summary, child_of) =
            (summary_of(&engine, &workspace, &self.wiring()), Some(parent.summary.session_id.clone()));
        self.shown_now(id.to_string(), &mcp);
        sessions.insert(id.to_string(), Live { engine, summary: summary.clone(), mcp, child_of });
        Some(summary)
    }

    /// The shown session's engine.
    async fn engine(&self) -> Result<Engine, ErrorInfo> {
        let shown = self.0.shown().unwrap_or_default();
        match self.0.sessions.lock().await.get(&shown) {
            Some(live) => Ok(live.engine.clone()),
            None => Err(failure(ErrorCode::NoSession, "no session is open")),
        }
    }

    /// Closes every live session and its MCP servers (the app is exiting).
    pub async fn close(&self) {
        let all: Vec<Live> = self.0.sessions.lock().await.drain().map(|(_, live)| live).collect();
        self.0.set_shown(None);
        futures::future::join_all(all.into_iter().map(close_live)).await;
        // What is still queued for the team's collector: at most 2 s, and a row for what it
        // never got.
        let wiring = self.wiring();
        if wiring.config.telemetry.is_on() {
            let closed = tokio::task::spawn_blocking(move || match wiring.audit() {
                Ok(audit) => wiring.close_telemetry(&audit),
                Err(e) => tracing::error!("audit log: {e}"),
            });
            let _ = closed.await;
        }
    }

    /// The shown session's header.
    pub async fn summary(&self) -> Result<SessionSummary, ErrorInfo> {
        let shown = self.0.shown().unwrap_or_default();
        match self.0.sessions.lock().await.get(&shown) {
            // The mode and the sandbox as they are now: a mode changed since the session opened
            // shows in a reloaded window too.
            Some(live) => {
                let (sandbox, unsandboxed_because) = live.engine.sandbox();
                let (mode, sandbox_home) = (live.engine.mode(), live.engine.sandbox_home());
                let summary = live.summary.clone();
                Ok(SessionSummary { mode, sandbox: sandbox.into(), unsandboxed_because, sandbox_home, ..summary })
            }
            None => Err(failure(ErrorCode::NoSession, "no session is open")),
        }
    }
}

/// The header of `engine`'s session in `workspace`.
fn summary_of(engine: &Engine, workspace: &Path, wiring: &Wiring) -> SessionSummary {
    let provider_config = wiring.config.provider.as_ref();
    SessionSummary {
        session_id: engine.session_id().to_string(),
        workspace: workspace.display().to_string(),
        mode: engine.mode(),
        model: provider_config.map(|p| p.model.clone()),
        context_window: provider_config.and_then(|p| p.context_window),
        sandbox: engine.sandbox().0.to_string(),
        unsandboxed_because: engine.sandbox().1,
        sandbox_home: engine.sandbox_home(),
        price: provider_config.and_then(|p| wiring.config.pricing.price_of(&p.model)),
        instructions: engine
            .instruction_files()
            .iter()
            .map(|(path, tokens)| bridle_protocol::InstructionFileInfo { path: path.clone(), tokens: *tokens })
            .collect(),
        allowed_modes: wiring
            .config
            .managed
            .as_ref()
            .filter(|m| m.policy.allowed_modes.is_some())
            .map(|_| engine.allowed_modes()),
    }
}

/// Runs `work` on the blocking pool (SQLite and files never run on the window's threads).
async fn blocking<T: Send + 'static>(
    code: ErrorCode,
    work: impl FnOnce() -> Result<T, Failure> + Send + 'static,
) -> Result<T, ErrorInfo> {
    match tokio::task::spawn_blocking(work).await {
        Ok(result) => result.map_err(|e| failure(code, chain(&*e))),
        Err(e) => Err(failure(code, format!("the command failed: {e}"))),
    }
}

/// Forwards one engine's events, numbered, until its stream ends.
fn forward(mut events: Receiver<Event>, to: Forward) {
    tokio::spawn(async move {
        // A child's events come in its parent's stream: each session is numbered on its own, as
        // its engine counts them (`events_sent`, the snapshot's `seq`).
        let mut seqs: HashMap<String, u64> = HashMap::new();
        while let Some(event) = events.recv().await {
            let seq = seqs.entry(event.session_id().to_string()).or_default();
            *seq += 1;
            to(Outgoing::Engine(Box::new(SequencedEvent { seq: *seq, event })));
        }
    });
}

/// Forwards session `id`'s MCP servers' list after every change while it is the shown session,
/// until the hub or the host goes.
fn forward_mcp(hub: &Arc<McpHub>, id: String, host: Weak<Inner>) {
    let (hub, mut changes) = (Arc::downgrade(hub), hub.subscribe());
    tokio::spawn(async move {
        while changes.changed().await.is_ok() {
            let (Some(hub), Some(host)) = (hub.upgrade(), host.upgrade()) else { return };
            if host.shown().as_deref() == Some(id.as_str()) {
                (host.forward)(Outgoing::Mcp(host.mcp_list(&hub)));
            }
        }
    });
}

/// Ends one session's engine (a running turn is interrupted, its history kept) and its MCP
/// servers.
async fn close_live(live: Live) {
    live.engine.shutdown().await;
    // A child's servers are its parent's, which closes them.
    if live.child_of.is_none() {
        live.mcp.shutdown().await;
    }
}

impl Inner {
    /// Forgets the children of `parent` shown on their own: they ended with it.
    async fn forget_children(&self, parent: &str) {
        self.sessions.lock().await.retain(|_, live| live.child_of.as_deref() != Some(parent));
    }
}

/// The most recent session of `workspace` (or of a worktree made from it) with a request still
/// pending.
fn waiting_session(store: &Store, workspace: &Path) -> Result<Option<String>, crate::store::StoreError> {
    let workspace = workspace.display().to_string();
    let mut newest: Option<(i64, String)> = None;
    for stored in store.pending_approvals(None)? {
        let session = store.session(&stored.request.session_id)?;
        let origin = session.worktree.as_ref().map(|w| w.origin.as_str());
        let here = session.workspace == workspace || origin == Some(workspace.as_str());
        if here && newest.as_ref().is_none_or(|(at, _)| stored.request.created_at > *at) {
            newest = Some((stored.request.created_at, session.id));
        }
    }
    Ok(newest.map(|(_, id)| id))
}
