//! The state of a front end that shows one session at a time (the desktop window): the launch's
//! wiring and the one open session, which the user may switch (open another, start a new one,
//! delete) and which restarts with new settings; and the answers to every command the window
//! sends, as `Result<T, ErrorInfo>`. It sits at layer L5, beside `wiring`; the desktop shell only
//! hands its answers to Tauri and its [`Outgoing`] messages to the window.
//!
//! Rules: at launch, a session of this workspace that an earlier run left waiting on approvals
//! is reopened (its requests can still be answered and its turn resumes); otherwise a new
//! session starts. Switching closes the open session's engine first ([`Engine::shutdown`]: a
//! running turn is interrupted and its history kept), so one session is never run by two
//! engines. Each engine's events are forwarded numbered (`seq`) by a task of its own, and every
//! change of the session's MCP servers is forwarded as their whole list, numbered (`seq`) past
//! every list sent before, the sessions opened earlier included, and answered with the same
//! numbering, so the window keeps the newest whichever way it came. The MCP servers belong
//! to the open session (they start in its workspace); they can be restarted, added, edited and
//! removed while it runs, and the session offers their tools as they stand from its next turn.
//! SQLite, files and the keychain are touched on the blocking pool, never on the caller's thread.

mod audit;
mod sessions;
mod settings;
mod skills;
#[cfg(test)]
mod tests;

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

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
    /// An event of the open session, with its `seq`.
    Engine(Box<SequencedEvent>),
    /// The open session's MCP servers, numbered, after any change of their states.
    Mcp(McpServerList),
}

/// Delivers what the host sends the window.
pub type Forward = Arc<dyn Fn(Outgoing) + Send + Sync>;

/// Loads the wiring again (after Settings saved the config), with the launch's flags and the
/// environment the front end reads.
pub type Reload = Arc<dyn Fn() -> Result<Wiring, WiringError> + Send + Sync>;

/// Why opening a session or answering a command failed, before it becomes an [`ErrorInfo`].
type Failure = Box<dyn std::error::Error + Send + Sync>;

/// The session the window shows, with its MCP servers.
struct Live {
    engine: Engine,
    summary: SessionSummary,
    mcp: Servers,
}

/// A session's MCP servers, and where the window's numbering of their lists starts.
#[derive(Clone)]
struct Servers {
    hub: Arc<McpHub>,
    /// Added to the hub's generation: past every list of the sessions opened before.
    base: u64,
}

impl Servers {
    /// The servers' list as the window gets it, pushed or answered.
    fn list(&self) -> McpServerList {
        let list = self.hub.status();
        McpServerList { seq: self.base + list.seq, ..list }
    }

    /// Where the next session's numbering starts: past every list of this one.
    fn next_base(&self) -> u64 {
        self.base + self.hub.generation() + 1
    }
}

struct Inner {
    wiring: std::sync::RwLock<Wiring>,
    reload: Reload,
    store: Arc<Store>,
    live: Mutex<Option<Live>>,
    forward: Forward,
    /// Where the next session's MCP lists are numbered from.
    mcp_base: AtomicU64,
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
            live: Mutex::new(None),
            forward,
            mcp_base: AtomicU64::new(0),
        }));
        host.switch(spec, workspace).await?;
        Ok(host)
    }

    fn wiring(&self) -> Wiring {
        self.0.wiring.read().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    /// Closes the open session and opens `spec` in `workspace` with the current wiring. When
    /// that fails (another process has the session open, its workspace is gone), the session
    /// that was open is opened again, so the window is never left without one.
    async fn switch(&self, spec: SessionSpec, workspace: PathBuf) -> Result<SessionSummary, Failure> {
        let mut live = self.0.live.lock().await;
        let previous = match live.take() {
            Some(old) => {
                old.engine.shutdown().await;
                old.mcp.hub.shutdown().await;
                self.0.mcp_base.store(old.mcp.next_base(), Ordering::SeqCst);
                Some(old.summary)
            }
            None => None,
        };
        match self.spawn(spec, workspace).await {
            Ok(opened) => {
                let summary = opened.summary.clone();
                *live = Some(opened);
                Ok(summary)
            }
            Err(e) => {
                if let Some(p) = previous {
                    match self.spawn(SessionSpec::Resume(p.session_id), PathBuf::from(p.workspace)).await {
                        Ok(back) => *live = Some(back),
                        Err(again) => {
                            tracing::error!("cannot reopen the session that was open: {}", chain(&*again))
                        }
                    }
                }
                Err(e)
            }
        }
    }

    /// Starts an engine for `spec` and forwards its events.
    async fn spawn(&self, spec: SessionSpec, workspace: PathBuf) -> Result<Live, Failure> {
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
        let mcp = Servers { hub: wiring.mcp(), base: self.0.mcp_base.load(Ordering::SeqCst) };
        let tools = {
            let _phase = crate::clock::Phase::start("built-in tools");
            Arc::new(crate::tools::builtin_registry()?)
        };
        let deps = EngineDeps {
            provider,
            tools,
            mcp: Some(mcp.hub.clone()),
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
        let provider_config = wiring.config.provider.as_ref();
        let summary = SessionSummary {
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
        };
        forward(events, self.0.forward.clone());
        forward_mcp(&mcp, self.0.forward.clone());
        Ok(Live { engine, summary, mcp })
    }

    async fn engine(&self) -> Result<Engine, ErrorInfo> {
        match &*self.0.live.lock().await {
            Some(live) => Ok(live.engine.clone()),
            None => Err(failure(ErrorCode::NoSession, "no session is open")),
        }
    }

    /// Closes the open session and its MCP servers (the app is exiting).
    pub async fn close(&self) {
        if let Some(live) = self.0.live.lock().await.take() {
            live.engine.shutdown().await;
            live.mcp.hub.shutdown().await;
        }
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

    /// Queues an op on the open session.
    pub async fn submit(&self, op: bridle_protocol::Op) -> Result<(), ErrorInfo> {
        self.engine().await?.submit(op).await.map_err(|e| failure(ErrorCode::EngineClosed, e))
    }

    /// The open session's header.
    pub async fn summary(&self) -> Result<SessionSummary, ErrorInfo> {
        match &*self.0.live.lock().await {
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
        let mut seq = 0;
        while let Some(event) = events.recv().await {
            seq += 1;
            to(Outgoing::Engine(Box::new(SequencedEvent { seq, event })));
        }
    });
}

/// Forwards the MCP servers' list now and after every change, until the hub goes.
fn forward_mcp(servers: &Servers, to: Forward) {
    let (hub, base, mut changes) = (Arc::downgrade(&servers.hub), servers.base, servers.hub.subscribe());
    tokio::spawn(async move {
        loop {
            match hub.upgrade() {
                Some(hub) => to(Outgoing::Mcp(Servers { hub, base }.list())),
                None => return,
            }
            if changes.changed().await.is_err() {
                return;
            }
        }
    });
}

/// The most recent session of `workspace` with a request still pending.
fn waiting_session(store: &Store, workspace: &Path) -> Result<Option<String>, crate::store::StoreError> {
    let workspace = workspace.display().to_string();
    let mut newest: Option<(i64, String)> = None;
    for stored in store.pending_approvals(None)? {
        let session = store.session(&stored.request.session_id)?;
        if session.workspace == workspace && newest.as_ref().is_none_or(|(at, _)| stored.request.created_at > *at) {
            newest = Some((stored.request.created_at, session.id));
        }
    }
    Ok(newest.map(|(_, id)| id))
}
