//! The app's state: one engine for the window's session.
//!
//! Rule: a session of this workspace that an earlier run left waiting on approvals is reopened
//! (its requests can still be answered and its turn resumes); otherwise a new session starts.

use std::sync::Arc;

use bridle_core::audit::{AuditFilter, AuditKind, AuditLog};
use bridle_core::clock::SystemClock;
use bridle_core::engine::{Engine, EngineDeps, SessionSpec};
use bridle_core::provider::{self, ModelProvider};
use bridle_core::store::Store;
use bridle_core::tools::builtin_registry;
use bridle_protocol::{ApprovalRequest, AuditEvent, AuditQuery, Event, SessionSummary};
use tokio::sync::mpsc::Receiver;

use bridle_core::wiring::Wiring;

#[derive(Clone)]
pub struct AppState {
    pub engine: Engine,
    pub summary: SessionSummary,
    pub store: Arc<Store>,
    pub data_dir: std::path::PathBuf,
}

impl AppState {
    /// Loads the config through core's one wiring, opens the store and starts the session.
    pub async fn start(wiring: &Wiring) -> anyhow::Result<(AppState, Receiver<Event>)> {
        let store = wiring.store()?;
        let provider: Arc<dyn ModelProvider> = match &wiring.config.provider {
            // Keys come from the environment until the keychain lands; never from the config.
            Some(p) => wiring.provider(p)?,
            None => Arc::new(provider::Unconfigured),
        };
        let spec = match waiting_session(&store, &wiring.workspace)? {
            Some(id) => SessionSpec::Resume(id),
            None => SessionSpec::New,
        };
        let deps = EngineDeps {
            provider,
            tools: Arc::new(builtin_registry()?),
            store: store.clone(),
            clock: Arc::new(SystemClock),
            audit: wiring.audit()?,
        };
        let (engine, events) = Engine::spawn(wiring.engine_config(), deps, spec)?;
        let config = &wiring.config;
        let summary = SessionSummary {
            session_id: engine.session_id().to_string(),
            workspace: wiring.workspace.display().to_string(),
            mode: config.mode,
            model: config.provider.as_ref().map(|p| p.model.clone()),
            context_window: config.provider.as_ref().and_then(|p| p.context_window),
            sandbox: engine.sandbox().0.to_string(),
            unsandboxed_because: engine.sandbox().1.map(String::from),
        };
        Ok((AppState { engine, summary, store, data_dir: wiring.data_dir.clone() }, events))
    }

    /// The session's requests still waiting for an answer (the window asks on load: requests
    /// announced before it listened are not lost).
    pub fn pending_approvals(&self) -> anyhow::Result<Vec<ApprovalRequest>> {
        let pending = self.store.pending_approvals(Some(self.engine.session_id()))?;
        Ok(pending.into_iter().map(|stored| stored.request).collect())
    }

    /// The window's session as stored: history with compaction marks, pending approvals, token
    /// totals, file changes — what the window shows again after a restart.
    pub fn session_snapshot(&self) -> anyhow::Result<bridle_protocol::SessionSnapshot> {
        use bridle_core::clock::Clock as _;
        Ok(self.store.snapshot(self.engine.session_id(), bridle_core::clock::SystemClock.now_ms())?)
    }
}

impl AppState {
    /// Audit rows for the Audit view, newest first (a read-only connection of its own, so the
    /// writer thread is never blocked by the view).
    pub fn audit_query(&self, query: AuditQuery) -> anyhow::Result<Vec<AuditEvent>> {
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
            before_id: None,
            limit: Some(query.limit.unwrap_or(500).min(5000)),
        };
        Ok(AuditLog::open(&self.data_dir)?.query(&filter)?)
    }

    /// Writes the whole audit log as JSON lines into the data dir; returns the file's path.
    pub fn audit_export(&self) -> anyhow::Result<String> {
        let stamp = bridle_core::clock::Clock::now_ms(&SystemClock);
        let path = self.data_dir.join(format!("audit-export-{stamp}.jsonl"));
        AuditLog::open(&self.data_dir)?.export(&path)?;
        Ok(path.display().to_string())
    }
}

/// The most recent session of `workspace` with a request still pending.
fn waiting_session(store: &Store, workspace: &std::path::Path) -> anyhow::Result<Option<String>> {
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
