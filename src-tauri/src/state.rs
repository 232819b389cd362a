//! The app's state: one engine for the window's session.
//!
//! Rule: a session of this workspace that an earlier run left waiting on approvals is reopened
//! (its requests can still be answered and its turn resumes); otherwise a new session starts.

use std::sync::Arc;

use anyhow::Context;
use bridle_core::audit::{AuditFilter, AuditKind, AuditLog, AuditSink};
use bridle_core::clock::SystemClock;
use bridle_core::config::{paths, Config};
use bridle_core::engine::{Engine, EngineConfig, EngineDeps, SessionSpec};
use bridle_core::provider::{self, ModelProvider};
use bridle_core::store::Store;
use bridle_core::tools::builtin_registry;
use bridle_protocol::{ApprovalRequest, AuditEvent, AuditQuery, Event, SessionSummary};
use tokio::sync::mpsc::Receiver;

use crate::launch::LaunchOptions;

pub struct AppState {
    pub engine: Engine,
    pub summary: SessionSummary,
    pub store: Arc<Store>,
    pub data_dir: std::path::PathBuf,
}

impl AppState {
    /// Loads the config, opens the store and starts a new session.
    pub async fn start(options: &LaunchOptions) -> anyhow::Result<(AppState, Receiver<Event>)> {
        let config = Config::load(&options.config_file)?;
        std::fs::create_dir_all(&options.data_dir)
            .with_context(|| format!("cannot create the data directory {}", options.data_dir.display()))?;
        let store = Arc::new(Store::open(&options.data_dir.join("bridle.db"))?);
        let provider: Arc<dyn ModelProvider> = match &config.provider {
            Some(p) => {
                // Keys come from the environment until the keychain lands; never from the config.
                let key = std::env::var(p.kind.api_key_variable()).ok().filter(|k| !k.is_empty());
                provider::from_config(p, key)?.into()
            }
            None => Arc::new(provider::Unconfigured),
        };
        let spec = match waiting_session(&store, &options.workspace)? {
            Some(id) => SessionSpec::Resume(id),
            None => SessionSpec::New,
        };
        let audit = AuditSink::start(AuditLog::open(&options.data_dir)?);
        let deps = EngineDeps {
            provider,
            tools: Arc::new(builtin_registry()?),
            store: store.clone(),
            clock: Arc::new(SystemClock),
            audit,
        };
        let mut engine_config = EngineConfig::from_config(&config, options.workspace.clone(), options.data_dir.clone());
        engine_config.home = paths::home(|name| std::env::var_os(name));
        engine_config.config_file = Some(options.config_file.clone());
        let (engine, events) = Engine::spawn(engine_config, deps, spec)?;
        let summary = SessionSummary {
            session_id: engine.session_id().to_string(),
            workspace: options.workspace.display().to_string(),
            mode: config.mode,
            model: config.provider.as_ref().map(|p| p.model.clone()),
            context_window: config.provider.as_ref().and_then(|p| p.context_window),
        };
        Ok((AppState { engine, summary, store, data_dir: options.data_dir.clone() }, events))
    }

    /// The session's requests still waiting for an answer (the window asks on load: requests
    /// announced before it listened are not lost).
    pub fn pending_approvals(&self) -> anyhow::Result<Vec<ApprovalRequest>> {
        let pending = self.store.pending_approvals(Some(self.engine.session_id()))?;
        Ok(pending.into_iter().map(|stored| stored.request).collect())
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
