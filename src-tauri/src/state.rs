//! The app's state: the launch's wiring and the one session the window shows, which the user
//! may switch (open another, start a new one, delete) and which restarts with new settings.
//!
//! Rules: at launch, a session of this workspace that an earlier run left waiting on approvals
//! is reopened (its requests can still be answered and its turn resumes); otherwise a new
//! session starts. Switching closes the open session's engine first ([`Engine::shutdown`]: a
//! running turn is interrupted and its history kept), so one session is never run by two
//! engines. Each engine's events are forwarded numbered (`seq`) by a task of its own, and every
//! change of the session's MCP servers is forwarded as their whole list. The MCP servers belong
//! to the open session (they start in its workspace); they can be restarted, added, edited and
//! removed while it runs, and the session offers their tools as they stand from its next turn.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use bridle_core::audit::{AuditFilter, AuditKind, AuditLog};
use bridle_core::clock::{Clock, SystemClock};
use bridle_core::config::RuleList;
use bridle_core::engine::{Engine, EngineDeps, SessionSpec};
use bridle_core::mcp::McpHub;
use bridle_core::provider::{self, ModelProvider};
use bridle_core::settings::{self, SaveError};
use bridle_core::store::Store;
use bridle_core::wiring::{Flags, Wiring};
use bridle_protocol::{
    ApprovalRequest, AuditEvent, AuditQuery, ErrorInfo, Event, McpServerSettings, McpServerStatus, ModelInfo,
    ProviderSettings, RuleMeaning, SessionInfo, SessionSnapshot, SessionSummary, Settings, SettingsUpdate,
};
use tokio::sync::mpsc::Receiver;
use tokio::sync::Mutex;

/// What the shell sends the window.
pub enum Outgoing {
    /// An event of the open session, with its `seq`.
    Engine(Box<bridle_protocol::SequencedEvent>),
    /// The open session's MCP servers, after any change of their states.
    Mcp(Vec<McpServerStatus>),
}

/// Delivers what the shell sends the window.
pub type Forward = Arc<dyn Fn(Outgoing) + Send + Sync>;

/// The session the window shows, with its MCP servers.
struct Live {
    engine: Engine,
    summary: SessionSummary,
    mcp: Arc<McpHub>,
}

struct Inner {
    flags: Flags,
    wiring: std::sync::RwLock<Wiring>,
    store: Arc<Store>,
    live: Mutex<Option<Live>>,
    forward: Forward,
}

/// Shared by every command; cheap to clone.
#[derive(Clone)]
pub struct AppState(Arc<Inner>);

/// A command's failure as the window gets it.
pub fn failure(code: &str, e: impl std::fmt::Display) -> ErrorInfo {
    ErrorInfo { code: code.into(), message: e.to_string(), retryable: false }
}

impl AppState {
    /// Opens the store and starts the launch's session.
    pub async fn start(flags: Flags, wiring: Wiring, forward: Forward) -> anyhow::Result<AppState> {
        let store = wiring.store()?;
        let spec = match waiting_session(&store, &wiring.workspace)? {
            Some(id) => SessionSpec::Resume(id),
            None => SessionSpec::New,
        };
        let workspace = wiring.workspace.clone();
        let state = AppState(Arc::new(Inner {
            flags,
            wiring: std::sync::RwLock::new(wiring),
            store,
            live: Mutex::new(None),
            forward,
        }));
        state.switch(spec, workspace).await?;
        Ok(state)
    }

    fn wiring(&self) -> Wiring {
        self.0.wiring.read().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    /// Closes the open session and opens `spec` in `workspace` with the current wiring. When
    /// that fails (another process has the session open, its workspace is gone), the session
    /// that was open is opened again, so the window is never left without one.
    async fn switch(&self, spec: SessionSpec, workspace: PathBuf) -> anyhow::Result<SessionSummary> {
        let mut live = self.0.live.lock().await;
        let previous = match live.take() {
            Some(old) => {
                old.engine.shutdown().await;
                old.mcp.shutdown().await;
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
                        Err(again) => tracing::error!("cannot reopen the session that was open: {again:#}"),
                    }
                }
                Err(e)
            }
        }
    }

    /// Starts an engine for `spec` and forwards its events.
    async fn spawn(&self, spec: SessionSpec, workspace: PathBuf) -> anyhow::Result<Live> {
        // The session's workspace, for its MCP servers too.
        let mut wiring = self.wiring();
        wiring.workspace = workspace.clone();
        let provider: Arc<dyn ModelProvider> = match &wiring.config.provider {
            Some(p) => {
                let p = p.clone();
                let w = wiring.clone();
                // The key lookup may ask the keychain over D-Bus: off the async threads.
                tokio::task::spawn_blocking(move || w.provider(&p)).await??
            }
            None => Arc::new(provider::Unconfigured),
        };
        let mcp = wiring.mcp();
        let deps = EngineDeps {
            provider,
            tools: Arc::new(bridle_core::tools::builtin_registry()?),
            mcp: Some(mcp.clone()),
            store: self.0.store.clone(),
            clock: Arc::new(SystemClock),
            audit: wiring.audit()?,
        };
        let mut config = wiring.engine_config();
        config.workspace = workspace.clone();
        let (engine, events) = Engine::spawn(config, deps, spec)?;
        let provider_config = wiring.config.provider.as_ref();
        let summary = SessionSummary {
            session_id: engine.session_id().to_string(),
            workspace: workspace.display().to_string(),
            mode: wiring.config.mode,
            model: provider_config.map(|p| p.model.clone()),
            context_window: provider_config.and_then(|p| p.context_window),
            sandbox: engine.sandbox().0.to_string(),
            unsandboxed_because: engine.sandbox().1.map(String::from),
            price: provider_config.and_then(|p| wiring.config.pricing.price_of(&p.model)),
            instructions: engine
                .instruction_files()
                .iter()
                .map(|(path, tokens)| bridle_protocol::InstructionFileInfo { path: path.clone(), tokens: *tokens })
                .collect(),
        };
        forward(events, self.0.forward.clone());
        forward_mcp(&mcp, self.0.forward.clone());
        Ok(Live { engine, summary, mcp })
    }

    async fn engine(&self) -> Result<Engine, ErrorInfo> {
        match &*self.0.live.lock().await {
            Some(live) => Ok(live.engine.clone()),
            None => Err(failure("no_session", "no session is open")),
        }
    }

    /// Closes the open session and its MCP servers (the app is exiting).
    pub async fn close(&self) {
        if let Some(live) = self.0.live.lock().await.take() {
            live.engine.shutdown().await;
            live.mcp.shutdown().await;
        }
    }

    /// Queues an op on the open session.
    pub async fn submit(&self, op: bridle_protocol::Op) -> Result<(), ErrorInfo> {
        self.engine().await?.submit(op).await.map_err(|e| failure("engine_closed", e))
    }

    /// The open session's header.
    pub async fn summary(&self) -> Result<SessionSummary, ErrorInfo> {
        match &*self.0.live.lock().await {
            Some(live) => Ok(live.summary.clone()),
            None => Err(failure("no_session", "no session is open")),
        }
    }

    /// The open session's requests still waiting for an answer (the window asks on load:
    /// requests announced before it listened are not lost).
    pub async fn pending_approvals(&self) -> Result<Vec<ApprovalRequest>, ErrorInfo> {
        let id = self.engine().await?.session_id().to_string();
        let store = self.0.store.clone();
        blocking("store_read_failed", move || {
            Ok(store.pending_approvals(Some(&id))?.into_iter().map(|stored| stored.request).collect())
        })
        .await
    }

    /// The open session as stored, and the `seq` of the last event sent before it was read:
    /// the window applies only later events on top.
    pub async fn session_snapshot(&self) -> Result<SessionSnapshot, ErrorInfo> {
        let engine = self.engine().await?;
        let seq = engine.events_sent();
        let id = engine.session_id().to_string();
        let store = self.0.store.clone();
        blocking("store_read_failed", move || {
            Ok(SessionSnapshot { seq, ..bridle_core::compaction::snapshot(&store, &id, SystemClock.now_ms())? })
        })
        .await
    }

    /// Every stored session, newest first.
    pub async fn sessions_list(&self) -> Result<Vec<SessionInfo>, ErrorInfo> {
        let store = self.0.store.clone();
        blocking("store_read_failed", move || Ok(store.sessions()?)).await
    }

    /// Opens a stored session in its own workspace.
    pub async fn session_open(&self, session_id: String) -> Result<SessionSummary, ErrorInfo> {
        let store = self.0.store.clone();
        let id = session_id.clone();
        let info = blocking("no_such_session", move || Ok(store.session(&id)?)).await?;
        let workspace = Path::new(&info.workspace).canonicalize().map_err(|e| {
            failure("workspace_missing", format!("the session's workspace {} cannot be opened: {e}", info.workspace))
        })?;
        self.switch(SessionSpec::Resume(session_id), workspace).await.map_err(|e| failure("session_open_failed", e))
    }

    /// A new session in the launch's workspace.
    pub async fn session_new(&self) -> Result<SessionSummary, ErrorInfo> {
        let workspace = self.wiring().workspace;
        self.switch(SessionSpec::New, workspace).await.map_err(|e| failure("session_open_failed", e))
    }

    /// Deletes a session and its file snapshots; the open one is closed and a new one opened.
    pub async fn session_delete(&self, session_id: String) -> Result<SessionSummary, ErrorInfo> {
        let open = self.summary().await.ok();
        if open.as_ref().is_some_and(|s| s.session_id == session_id) {
            self.close().await;
        }
        let (store, data_dir) = (self.0.store.clone(), self.wiring().data_dir);
        blocking("session_delete_failed", move || {
            bridle_core::changes::delete_session(&store, &data_dir, &session_id).map_err(anyhow::Error::msg)
        })
        .await?;
        match open {
            Some(summary) if self.summary().await.is_ok() => Ok(summary),
            _ => self.session_new().await,
        }
    }

    /// The Settings view's values.
    pub async fn settings_get(&self) -> Result<Settings, ErrorInfo> {
        let wiring = self.wiring();
        blocking("settings_read_failed", move || Ok(settings::read(&wiring))).await
    }

    /// Saves the form, reloads the config and reopens the open session under it.
    pub async fn settings_save(&self, update: SettingsUpdate) -> Result<Settings, ErrorInfo> {
        let config_file = self.wiring().config_file;
        let saved = tokio::task::spawn_blocking(move || settings::save(&config_file, &update))
            .await
            .map_err(|e| failure("settings_save_failed", e))?;
        let code = match &saved {
            Err(SaveError::Invalid(_)) => "settings_invalid",
            Err(SaveError::Key(_)) => "keychain_failed",
            _ => "settings_save_failed",
        };
        // The file may be saved even when the key was not: reload in every case but a refusal.
        if !matches!(saved, Err(SaveError::Invalid(_)) | Err(SaveError::Config(_))) {
            self.reload().await.map_err(|e| failure("settings_reload_failed", e))?;
        }
        saved.map_err(|e| failure(code, e))?;
        self.settings_get().await
    }

    /// Reads the config again and restarts the open session with it.
    async fn reload(&self) -> anyhow::Result<()> {
        let flags = self.0.flags.clone();
        let wiring = Wiring::from_process(flags)?;
        *self.0.wiring.write().unwrap_or_else(std::sync::PoisonError::into_inner) = wiring;
        let open = self.summary().await.ok();
        match open {
            Some(s) => self.switch(SessionSpec::Resume(s.session_id), PathBuf::from(s.workspace)).await?,
            None => self.switch(SessionSpec::New, self.wiring().workspace).await?,
        };
        Ok(())
    }

    /// The models the form's server offers, asked with the key typed in or the stored one.
    pub async fn models_list(
        &self,
        provider: ProviderSettings,
        api_key: Option<String>,
    ) -> Result<Vec<ModelInfo>, ErrorInfo> {
        let config = settings::provider_of(&provider).map_err(|e| failure("settings_invalid", e))?;
        let key = match api_key.map(|k| k.trim().to_string()).filter(|k| !k.is_empty()) {
            Some(key) => Some(key),
            None => {
                let (wiring, config) = (self.wiring(), config.clone());
                tokio::task::spawn_blocking(move || wiring.api_key(&config).map(|(key, _)| key))
                    .await
                    .map_err(|e| failure("keychain_failed", e))?
            }
        };
        provider::models::list(&config, key).await.map_err(|e| ErrorInfo {
            code: "connection_failed".into(),
            message: e.to_string(),
            retryable: true,
        })
    }
}

impl AppState {
    async fn hub(&self) -> Result<Arc<McpHub>, ErrorInfo> {
        match &*self.0.live.lock().await {
            Some(live) => Ok(live.mcp.clone()),
            None => Err(failure("no_session", "no session is open")),
        }
    }

    /// The open session's MCP servers.
    pub async fn mcp_status(&self) -> Result<Vec<McpServerStatus>, ErrorInfo> {
        Ok(self.hub().await?.reports())
    }

    /// Restarts one MCP server; answers once it is ready or has failed.
    pub async fn mcp_restart(&self, name: String) -> Result<Vec<McpServerStatus>, ErrorInfo> {
        let hub = self.hub().await?;
        hub.restart(&name).await.map_err(|e| failure("mcp_unknown_server", e))?;
        Ok(hub.reports())
    }

    /// Adds or edits one MCP server in the config, then brings the running servers to it.
    pub async fn mcp_save(&self, server: McpServerSettings, previous: Option<String>) -> Result<Settings, ErrorInfo> {
        let config_file = self.wiring().config_file;
        self.edit_mcp(move || settings::save_mcp_server(&config_file, &server, previous.as_deref())).await
    }

    /// Removes one MCP server from the config and stops it.
    pub async fn mcp_remove(&self, name: String) -> Result<Settings, ErrorInfo> {
        let config_file = self.wiring().config_file;
        self.edit_mcp(move || settings::remove_mcp_server(&config_file, &name)).await
    }

    /// Applies one edit of the config's MCP servers, keeps the config it leaves for later
    /// sessions, and restarts only the servers it changed; the session goes on.
    async fn edit_mcp(
        &self,
        edit: impl FnOnce() -> Result<bridle_core::config::Config, SaveError> + Send + 'static,
    ) -> Result<Settings, ErrorInfo> {
        let config = tokio::task::spawn_blocking(edit).await.map_err(|e| failure("settings_save_failed", e))?;
        let config = config.map_err(|e| match e {
            SaveError::Invalid(_) => failure("settings_invalid", e),
            _ => failure("settings_save_failed", e),
        })?;
        let servers = config.mcp;
        self.0.wiring.write().unwrap_or_else(std::sync::PoisonError::into_inner).config.mcp = servers.clone();
        self.hub().await?.reconfigure(&servers).await;
        self.settings_get().await
    }
}

/// What each pattern of a rule list means, for the rule editor.
pub fn rules_explain(list: &str, patterns: &[String]) -> Result<Vec<RuleMeaning>, ErrorInfo> {
    let list = match list {
        "allow" => RuleList::Allow,
        "ask" => RuleList::Ask,
        "deny" => RuleList::Deny,
        other => return Err(failure("invalid_argument", format!("unknown rule list `{other}`"))),
    };
    Ok(patterns
        .iter()
        .map(|pattern| match bridle_core::guard::describe_rule(list, pattern) {
            Ok(meaning) => RuleMeaning { pattern: pattern.clone(), meaning: Some(meaning), error: None },
            Err(e) => RuleMeaning { pattern: pattern.clone(), meaning: None, error: Some(e.to_string()) },
        })
        .collect())
}

impl AppState {
    /// Audit rows for the Audit view, newest first (a read-only connection of its own, so the
    /// writer thread is never blocked by the view).
    pub async fn audit_query(&self, query: AuditQuery) -> Result<Vec<AuditEvent>, ErrorInfo> {
        let data_dir = self.wiring().data_dir;
        blocking("audit_read_failed", move || {
            let kind = match query.kind.as_deref().filter(|k| !k.is_empty()) {
                Some(k) => Some(k.parse::<AuditKind>().map_err(|e| anyhow::anyhow!("{e}"))?),
                None => None,
            };
            let filter = AuditFilter {
                session_id: query.session_id.filter(|s| !s.is_empty()),
                tool: query.tool.filter(|s| !s.is_empty()),
                kind,
                decision: query.decision,
                since: query.since,
                until: query.until,
                text: query.text.filter(|s| !s.is_empty()),
                before_id: query.before_id,
                limit: Some(query.limit.unwrap_or(500).min(5000)),
            };
            Ok(AuditLog::open(&data_dir)?.query(&filter)?)
        })
        .await
    }

    /// Writes the whole audit log as JSON lines into the data dir; returns the file's path.
    pub async fn audit_export(&self) -> Result<String, ErrorInfo> {
        let data_dir = self.wiring().data_dir;
        blocking("audit_export_failed", move || {
            let path = data_dir.join(format!("audit-export-{}.jsonl", SystemClock.now_ms()));
            AuditLog::open(&data_dir)?.export(&path)?;
            Ok(path.display().to_string())
        })
        .await
    }
}

/// Runs `work` on the blocking pool (SQLite and files never run on the window's threads).
async fn blocking<T: Send + 'static>(
    code: &'static str,
    work: impl FnOnce() -> anyhow::Result<T> + Send + 'static,
) -> Result<T, ErrorInfo> {
    match tokio::task::spawn_blocking(work).await {
        Ok(result) => result.map_err(|e| failure(code, format!("{e:#}"))),
        Err(e) => Err(failure(code, format!("the command failed: {e}"))),
    }
}

/// Forwards one engine's events, numbered, until its stream ends.
fn forward(mut events: Receiver<Event>, to: Forward) {
    tokio::spawn(async move {
        let mut seq = 0;
        while let Some(event) = events.recv().await {
            seq += 1;
            to(Outgoing::Engine(Box::new(bridle_protocol::SequencedEvent { seq, event })));
        }
    });
}

/// Forwards the MCP servers' list now and after every change, until the hub goes.
fn forward_mcp(hub: &Arc<McpHub>, to: Forward) {
    let (hub, mut changes) = (Arc::downgrade(hub), hub.subscribe());
    tokio::spawn(async move {
        loop {
            match hub.upgrade() {
                Some(hub) => to(Outgoing::Mcp(hub.reports())),
                None => return,
            }
            if changes.changed().await.is_err() {
                return;
            }
        }
    });
}

/// The most recent session of `workspace` with a request still pending.
fn waiting_session(store: &Store, workspace: &Path) -> anyhow::Result<Option<String>> {
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
