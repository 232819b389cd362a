//! One session's shared state: history, usage, approvals, and the ways a turn records and
//! reports.

use std::sync::Arc;

use bridle_protocol::{ApprovalAnswer, ErrorInfo, Event, HistoryItem};
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;

use super::{EngineConfig, EngineDeps};
use crate::approvals::{self, ApprovalQueue, COMMAND_GRANT};
use crate::audit::{AuditKind, AuditRecord};
use crate::changes::SessionFiles;
use crate::compaction::{self, Estimator, Fit, View};
use crate::config::edit::RuleList;
use crate::pipeline::CallPipeline;
use crate::provider::ModelRequest;
use crate::store::SessionLease;
use crate::tools::{PreparedCall, ToolContext, UsageMeter, UsageSnapshot};

pub(crate) struct Session {
    pub id: String,
    pub config: EngineConfig,
    pub deps: EngineDeps,
    /// Replaced whole when the mode or the MCP servers change (between turns); read through
    /// [`Session::pipeline`].
    pipeline: std::sync::RwLock<CallPipeline>,
    /// The MCP hub's generation the offered tools were read at, and the servers ready then.
    tools_seen: std::sync::Mutex<(u64, std::collections::BTreeSet<String>)>,
    pub usage: UsageMeter,
    pub approvals: ApprovalQueue,
    /// What the session read and changed: stale-write stamps and checkpoints.
    pub files: Arc<SessionFiles>,
    /// What the model sees of the history (after compactions).
    view: std::sync::Mutex<View>,
    /// This session's tokens-per-character, learnt from the provider's counts.
    estimator: std::sync::Mutex<Estimator>,
    /// Whether the prompt-truncation warning was given (once per session).
    warned_truncation: std::sync::atomic::AtomicBool,
    /// The workspace watch that reports files changed behind the session's back.
    watch: std::sync::Mutex<Option<crate::changes::WorkspaceWatch>>,
    history: Mutex<Vec<HistoryItem>>,
    /// The brief: Bridle's instructions, the environment, the project's instructions.
    pub(crate) brief: crate::brief::Brief,
    events: super::events::EventSender,
    /// Held while the session is open here, so another process answering one of its approvals
    /// leaves the running to this one.
    _lease: SessionLease,
}

impl Session {
    pub(crate) fn new(
        id: String,
        config: EngineConfig,
        deps: EngineDeps,
        (tools_seen, pipeline): (u64, CallPipeline),
        history: Vec<HistoryItem>,
        events: super::events::EventSender,
        lease: SessionLease,
    ) -> Self {
        // A resumed session counts on from its stored totals.
        let (total, context_used) = deps.store.usage(&id).unwrap_or_default();
        let usage = Arc::new(std::sync::Mutex::new(UsageSnapshot {
            total,
            context_used,
            context_window: config.context_window,
        }));
        let approvals = ApprovalQueue::new(deps.store.clone(), deps.clock.clone());
        let files = Arc::new(SessionFiles::new(&id, deps.store.clone(), &config.data_dir, deps.clock.clone()));
        let view = deps.store.view(&id).ok().flatten().and_then(|v| serde_json::from_str(&v).ok()).unwrap_or_default();
        let brief = {
            use crate::brief;
            let shell = &pipeline.workspace().shell;
            let environment =
                brief::Environment::detect(&config.workspace, deps.clock.now_ms(), shell, shell.network());
            let config_dir = config.config_file.as_deref().and_then(std::path::Path::parent);
            brief::assemble(
                &config.system_prompt,
                &environment,
                brief::load_instructions(config_dir, &config.workspace),
            )
        };
        let pipeline = std::sync::RwLock::new(pipeline);
        let ready = ready_servers(&deps);
        Self {
            id,
            config,
            deps,
            pipeline,
            tools_seen: std::sync::Mutex::new((tools_seen, ready)),
            usage,
            approvals,
            files,
            view: std::sync::Mutex::new(view),
            estimator: std::sync::Mutex::new(Estimator::default()),
            warned_truncation: std::sync::atomic::AtomicBool::new(false),
            watch: std::sync::Mutex::new(None),
            history: Mutex::new(history),
            brief,
            events,
            _lease: lease,
        }
    }

    /// The context window in force, when known: the usage meter's, which starts from the
    /// config and is corrected by what the server serves ([`Self::discover_window`]).
    pub(crate) fn context_window(&self) -> Option<u64> {
        self.usage.lock().unwrap_or_else(std::sync::PoisonError::into_inner).context_window
    }

    /// Asks the server what window it serves for the model (within its 2 s limit) and keeps
    /// the smallest of that and the config's; a config promising more than the server holds is
    /// corrected with a warning, since compaction and the meter would work from a number the
    /// server does not honour.
    pub(crate) async fn discover_window(&self) {
        let limit = crate::provider::window::ASK_LIMIT + std::time::Duration::from_millis(500);
        let served = tokio::time::timeout(limit, self.deps.provider.context_window()).await.ok().flatten();
        let configured = self.config.context_window;
        let window = match (configured, served) {
            (Some(c), Some(s)) => Some(c.min(s)),
            (c, s) => c.or(s),
        };
        self.usage.lock().unwrap_or_else(std::sync::PoisonError::into_inner).context_window = window;
        if let (Some(c), Some(s)) = (configured, served) {
            if c > s {
                let message = format!(
                    "The config says context_window = {c}, but the server serves {s} tokens for {}; Bridle uses {s}",
                    self.deps.provider.model()
                );
                self.warn("context_window_corrected", message).await;
            }
        }
    }

    /// A warning for the window (and the audit), which stops nothing.
    pub(crate) async fn warn(&self, code: &str, message: String) {
        self.audit(AuditKind::Error, None, |r| r.status(code).payload(serde_json::json!({"warning": message})));
        self.emit(Event::Warning { session_id: self.id.clone(), code: code.into(), message }).await;
    }

    /// The server counted `reported` prompt tokens for `request`: far fewer than Bridle's own
    /// count of what it sent means the server cut the prompt (a context smaller than the
    /// request, or a chat template that drops the tools). Said once per session.
    pub(crate) async fn check_truncation(&self, request: &ModelRequest, reported: u64) {
        if reported == 0 || self.warned_truncation.load(std::sync::atomic::Ordering::Relaxed) {
            return;
        }
        let sent = crate::compaction::count_tokens(request);
        if (reported as f64) >= 0.7 * sent as f64 {
            return;
        }
        self.warned_truncation.store(true, std::sync::atomic::Ordering::Relaxed);
        let message = format!(
            "The server counted {reported} prompt tokens for a request of about {sent}: it cut the prompt, so the model may no longer see its instructions, its tools or the start of the conversation. Raise the server's context (for Ollama, use kind = \"ollama\", which sends num_ctx), or use a chat template that renders tools"
        );
        self.warn("prompt_truncated", message).await;
    }

    /// Starts watching the workspace: a file the session read or wrote that changes on disk
    /// behind its back is announced ([`Event::FilesChangedOnDisk`]). Without a watch (no
    /// inotify slots left, say) the stale-write check still holds; only the announcement is lost.
    pub(crate) fn start_watching(&self) {
        let (events, session_id) = (self.events.clone(), self.id.clone());
        let report = move |paths: Vec<String>| {
            events.try_send(Event::FilesChangedOnDisk { session_id: session_id.clone(), paths });
        };
        match crate::changes::watch(self.pipeline().workspace().clone(), self.files.clone(), report) {
            Ok(watch) => *self.watch.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(watch),
            Err(e) => tracing::warn!("session {}: the workspace is not watched: {e}", self.id),
        }
    }

    /// The pipeline calls go through now (cheap: every part is shared).
    pub(crate) fn pipeline(&self) -> CallPipeline {
        self.pipeline.read().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    /// Switches to `mode`: a pipeline built the one way ([`super::EngineConfig::pipeline`]) for
    /// it, keeping the rules in force now (an "always" rule added meanwhile included). Called
    /// only between turns, so no call straddles two pipelines.
    pub(crate) async fn set_mode(&self, mode: bridle_protocol::Mode) {
        let config = super::EngineConfig { mode, ..self.config.clone() };
        let next = match config.pipeline(self.pipeline().registry().clone()) {
            Ok(next) => next,
            Err(e) => {
                return self
                    .error("mode_change_failed", format!("cannot switch to {}: {e}", mode.as_str()), false)
                    .await
            }
        };
        next.guard().set_policy((*self.pipeline().guard().policy()).clone());
        *self.pipeline.write().unwrap_or_else(std::sync::PoisonError::into_inner) = next;
        self.audit(AuditKind::SessionStarted, None, |r| {
            r.status("mode_changed").payload(serde_json::json!({"mode": mode.as_str(), "sandbox": self.sandbox().0}))
        });
        self.announce_mode(mode).await;
    }

    /// At a turn's start, before its first request: waits for MCP servers still starting (each
    /// within its start-up timeout; an interrupt stops the wait), and when the servers changed
    /// since the tools were last offered, offers them as they stand now. A server that was ready
    /// then and has stopped since is announced with why, so the user knows where its tools went.
    pub(crate) async fn refresh_tools(&self, cancel: &CancellationToken) {
        let Some(hub) = &self.deps.mcp else { return };
        tokio::select! {
            () = hub.settled() => {}
            () = cancel.cancelled() => return,
        }
        if hub.generation() == self.tools_seen.lock().unwrap_or_else(std::sync::PoisonError::into_inner).0 {
            return;
        }
        let (generation, tools) = offered_tools(&self.deps);
        let ready = ready_servers(&self.deps);
        let was_ready = std::mem::replace(
            &mut *self.tools_seen.lock().unwrap_or_else(std::sync::PoisonError::into_inner),
            (generation, ready),
        )
        .1;
        let next = self.pipeline().with_registry(tools);
        *self.pipeline.write().unwrap_or_else(std::sync::PoisonError::into_inner) = next;
        for report in hub.reports() {
            if report.status == bridle_protocol::McpStatus::Failed && was_ready.contains(&report.name) {
                let why = report.error.unwrap_or_default();
                let message = format!(
                    "The MCP server `{}` stopped ({why}); its tools are no longer offered. \
                     Restart it from Settings, or start a new session",
                    report.name
                );
                self.warn("mcp_server_stopped", message).await;
            }
        }
    }

    /// How `bash` runs in this session now, and why it is unconfined when it is (or what its
    /// sandbox does not hold when confined).
    pub(crate) fn sandbox(&self) -> (&'static str, Option<String>) {
        let pipeline = self.pipeline();
        let shell = &pipeline.workspace().shell;
        (shell.kind().as_str(), shell.unsandboxed_because().map(String::from).or_else(|| shell.gaps()))
    }

    /// Tells the window which mode is in force and how commands run.
    pub(crate) async fn announce_mode(&self, mode: bridle_protocol::Mode) {
        let (sandbox, unsandboxed_because) = self.sandbox();
        let event =
            Event::ModeChanged { session_id: self.id.clone(), mode, sandbox: sandbox.into(), unsandboxed_because };
        self.emit(event).await;
    }

    /// Stores the plan an `update_plan` call set and shows it (`PlanUpdated`).
    pub(crate) async fn keep_plan(&self, turn_id: &str, result: &bridle_protocol::ToolResult) {
        let plan = result.data.as_ref().and_then(|d| d.get("plan")).cloned();
        let Some(items) = plan.and_then(|p| serde_json::from_value::<Vec<bridle_protocol::PlanItem>>(p).ok()) else {
            return;
        };
        if let Err(e) = self.deps.store.set_plan(&self.id, &items, self.deps.clock.now_ms()) {
            self.error("store_write_failed", format!("the plan was not stored: {e}"), true).await;
        }
        let event = Event::PlanUpdated { session_id: self.id.clone(), turn_id: turn_id.to_string(), items };
        self.emit(event).await;
    }

    /// Sends an event; a consumer that went away is not an error of the session.
    pub(crate) async fn emit(&self, event: Event) {
        self.events.send(event).await;
    }

    /// Appends to the history and the store. A store failure is reported to the user once
    /// per item and the turn goes on: the in-memory history stays whole.
    pub(crate) async fn record(&self, turn_id: &str, item: HistoryItem) {
        let now = self.deps.clock.now_ms();
        if let Err(e) = self.deps.store.append(&self.id, turn_id, &item, now) {
            self.error("store_write_failed", format!("{e}; the conversation continues in memory"), true).await;
        }
        self.history.lock().await.push(item);
    }

    /// Stores a call's result the moment the call ends, before its siblings do: a crash
    /// mid-batch keeps every result that was reached. The in-memory history gets the batch's
    /// results in call order afterwards ([`Self::remember_results`]); the store's reader puts
    /// them in call order too.
    pub(crate) async fn persist_result(&self, turn_id: &str, result: &bridle_protocol::ToolResult) {
        let now = self.deps.clock.now_ms();
        let item = HistoryItem::ToolResult { result: result.clone() };
        if let Err(e) = self.deps.store.append(&self.id, turn_id, &item, now) {
            self.error("store_write_failed", format!("{e}; the conversation continues in memory"), true).await;
        }
    }

    /// A batch's results, already stored one by one, join the in-memory history in call order.
    pub(crate) async fn remember_results(&self, results: Vec<bridle_protocol::ToolResult>) {
        let mut history = self.history.lock().await;
        history.extend(results.into_iter().map(|result| HistoryItem::ToolResult { result }));
    }

    /// Whether the session remembers an approval for every one of `keys`.
    pub(crate) fn granted(&self, keys: &[String]) -> bool {
        !keys.is_empty() && keys.iter().all(|k| self.deps.store.has_grant(&self.id, k).unwrap_or(false))
    }

    /// Remembers an approval for the session ("session" and "always" answers); "always" also
    /// writes a visible allow rule to the config file.
    pub(crate) async fn remember(&self, call: &PreparedCall, decision: ApprovalAnswer) {
        if !matches!(decision, ApprovalAnswer::ApproveSession | ApprovalAnswer::ApproveAlways) {
            return;
        }
        let now = self.deps.clock.now_ms();
        for key in approvals::grant_keys(call, self.pipeline().workspace(), &self.id) {
            if let Err(e) = self.deps.store.add_grant(&self.id, &key, now) {
                self.error("store_write_failed", format!("cannot remember the approval: {e}"), true).await;
            }
        }
        if decision == ApprovalAnswer::ApproveAlways {
            self.write_allow_rule(call).await;
        }
    }

    async fn write_allow_rule(&self, call: &PreparedCall) {
        let Some(file) = &self.config.config_file else {
            self.error(
                "config_write_failed",
                "no config file to write the rule to; approved for this session".into(),
                false,
            )
            .await;
            return;
        };
        let pattern = self.pipeline().guard().rule_for(call);
        if let Err(e) = crate::guard::append_rule(file, RuleList::Allow, &pattern) {
            self.error("config_write_failed", format!("cannot write the rule `{pattern}`: {e}"), true).await;
            return;
        }
        // In force from the next call on: the rules are read back from the file just written,
        // with whatever else the user changed there meanwhile.
        let reloaded = crate::config::Config::load(file)
            .map_err(|e| e.to_string())
            .and_then(|config| crate::guard::Policy::from_config(&config).map_err(|e| e.to_string()));
        match reloaded {
            Ok(policy) => self.pipeline().guard().set_policy(policy),
            Err(e) => {
                let message = format!("the rule `{pattern}` was written but the config cannot be read back: {e}");
                self.error("config_read_failed", message, false).await;
            }
        }
    }

    /// A file tool changed `paths`: a changed exec-config file makes every command approval of the
    /// session void, so an approved `npm test` cannot be turned into something else silently.
    pub(crate) async fn files_changed<'a>(&self, paths: impl Iterator<Item = &'a str>) {
        let touched_config = paths.into_iter().any(crate::guard::is_exec_config);
        if touched_config {
            if let Err(e) = self.deps.store.forget_grants(&self.id, COMMAND_GRANT) {
                self.error("store_write_failed", format!("cannot forget command approvals: {e}"), true).await;
            }
        }
    }

    /// Undoes a turn's file changes (the last turn's when `None`), whole or for `paths`;
    /// called between turns. Every file put back or removed is audited; the window hears
    /// [`Event::Undone`].
    pub(crate) async fn undo(&self, turn_id: Option<&str>, paths: &[String]) {
        let workspace = self.pipeline().workspace().clone();
        let blobs = crate::changes::BlobStore::new(&self.config.data_dir);
        let now = self.deps.clock.now_ms();
        let report = match crate::changes::undo(&self.deps.store, &blobs, &workspace, &self.id, turn_id, paths, now) {
            Ok(report) => report,
            Err(e) => return self.error("undo_failed", e, false).await,
        };
        for (path, status) in
            report.restored.iter().map(|p| (p, "restored")).chain(report.removed.iter().map(|p| (p, "removed")))
        {
            self.audit(AuditKind::FileChanged, Some(&report.turn_id), |r| {
                r.status("undone").payload(serde_json::json!({"path": path, "undo": status}))
            });
        }
        self.files_changed(report.restored.iter().chain(&report.removed).map(String::as_str)).await;
        let refused = report
            .refused
            .iter()
            .map(|r| bridle_protocol::UndoRefusal { path: r.path.clone(), reason: r.reason.clone() })
            .collect();
        self.emit(Event::Undone {
            session_id: self.id.clone(),
            turn_id: report.turn_id,
            restored: report.restored,
            removed: report.removed,
            refused,
        })
        .await;
    }

    /// Records an audit row of this session (and `turn_id`), shaped by `fill`.
    pub(crate) fn audit(&self, kind: AuditKind, turn_id: Option<&str>, fill: impl FnOnce(AuditRecord) -> AuditRecord) {
        if !self.deps.audit.is_enabled() {
            return;
        }
        let mut record = AuditRecord::new(kind, self.deps.clock.now_ms()).session(self.id.clone());
        if let Some(turn_id) = turn_id.filter(|t| !t.is_empty()) {
            record = record.turn(turn_id);
        }
        self.deps.audit.record(fill(record));
        self.report_audit_failure();
    }

    /// An audit append that failed (on the writer thread, a moment ago) becomes an `Error` the
    /// user sees, not only a log line. Sent without waiting: this runs inside sync code.
    pub(crate) fn report_audit_failure(&self) {
        if let Some(message) = self.deps.audit.take_failure() {
            let info = ErrorInfo { code: "audit_write_failed".into(), message, retryable: false };
            if !self.events.try_send(Event::Error { session_id: self.id.clone(), info }) {
                tracing::error!("audit write failure could not be reported to the window");
            }
        }
    }

    pub(crate) async fn error(&self, code: &str, message: String, retryable: bool) {
        self.audit(AuditKind::Error, None, |r| {
            r.status(code).payload(serde_json::json!({"message": message, "retryable": retryable}))
        });
        self.emit(Event::Error {
            session_id: self.id.clone(),
            info: ErrorInfo { code: code.into(), message, retryable },
        })
        .await;
    }

    /// A copy of the history so far.
    pub(crate) async fn history_snapshot(&self) -> Vec<HistoryItem> {
        self.history.lock().await.clone()
    }

    /// The next model request: system prompt, the history as the model sees it (compacted),
    /// tools sorted by name.
    pub(crate) async fn request(&self) -> ModelRequest {
        let history = self.history.lock().await;
        self.current_view().apply(&self.brief.text, &history, self.pipeline().registry().definitions())
    }

    fn current_view(&self) -> View {
        self.view.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    /// The provider counted `input_tokens` for `request`: the estimates learn from it.
    pub(crate) fn observe_usage(&self, request: &ModelRequest, input_tokens: u64) {
        self.estimator.lock().unwrap_or_else(std::sync::PoisonError::into_inner).observe(request, input_tokens);
    }

    /// Whether `request` (the next one, as built) passes the compaction threshold: the cheap
    /// check made before every step, on the request already in hand.
    pub(crate) fn needs_compaction(&self, request: &ModelRequest) -> bool {
        let Some(window) = self.context_window() else { return false };
        let estimator = self.estimator.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        estimator.tokens(request) > compaction::threshold(window, self.config.compaction.at)
    }

    /// Compacts when the next request would pass the threshold (always when `force`): the new
    /// view is stored, audited (`compaction`) and announced (`Compacted`). A summary the model
    /// cannot give is an error event; the request then goes as it is.
    pub(crate) async fn compact(&self, turn_id: Option<&str>, force: bool) {
        let Some(window) = self.context_window() else {
            if force {
                let message =
                    "the model's context window is not known ([provider] context_window); nothing to compact against";
                self.error("compact_failed", message.into(), false).await;
            }
            return;
        };
        let history = self.history_snapshot().await;
        let tools = self.pipeline().registry().definitions();
        let fit = Fit {
            system: &self.brief.text,
            history: &history,
            tools: &tools,
            window,
            at: self.config.compaction.at,
            keep_user_messages: self.config.compaction.keep_user_messages,
        };
        let (view, estimator) =
            (self.current_view(), self.estimator.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone());
        let compacted = match compaction::fit(&view, &estimator, self.deps.provider.as_ref(), &fit, force).await {
            Ok(Some(compacted)) => compacted,
            Ok(None) => return,
            Err(e) => return self.error("compact_failed", e.to_string(), true).await,
        };
        let now = self.deps.clock.now_ms();
        let stored = serde_json::to_string(&compacted.view).map_err(|e| e.to_string()).and_then(|json| {
            self.deps
                .store
                .save_view(&self.id, &json, compacted.tokens_before, compacted.tokens_after, now)
                .map_err(|e| e.to_string())
        });
        if let Err(e) = stored {
            self.error(
                "store_write_failed",
                format!("the compaction could not be stored ({e}); it holds for this process only"),
                true,
            )
            .await;
        }
        *self.view.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = compacted.view.clone();
        if let Ok(mut meter) = self.usage.lock() {
            meter.context_used = compacted.tokens_after;
        }
        self.audit(AuditKind::Compaction, turn_id, |r| {
            r.status(if force { "requested" } else { "automatic" }).payload(serde_json::json!({
                "tokensBefore": compacted.tokens_before,
                "tokensAfter": compacted.tokens_after,
                "masked": compacted.masked,
                "summarized": compacted.summarized,
                "summarizedItems": compacted.view.summarized,
            }))
        });
        self.emit(Event::Compacted {
            session_id: self.id.clone(),
            tokens_before: compacted.tokens_before,
            tokens_after: compacted.tokens_after,
        })
        .await;
    }

    pub(crate) fn tool_context(&self, turn_id: &str, call_id: &str, cancel: CancellationToken) -> ToolContext {
        ToolContext {
            usage: self.usage.clone(),
            cancel,
            turn_id: turn_id.to_string(),
            files: Some(self.files.clone()),
            ..ToolContext::new(
                self.id.clone(),
                call_id,
                self.pipeline().workspace().clone(),
                self.config.data_dir.clone(),
                self.deps.clock.clone(),
                self.config.limits.tool_timeout(),
            )
        }
    }
}

/// The tools a session offers: `deps.tools`, plus the MCP servers' ready tools, with the hub's
/// generation they were read at.
pub(crate) fn offered_tools(deps: &EngineDeps) -> (u64, Arc<crate::tools::ToolRegistry>) {
    match &deps.mcp {
        Some(hub) => {
            let generation = hub.generation();
            (generation, Arc::new(hub.extend(&deps.tools)))
        }
        None => (0, deps.tools.clone()),
    }
}

/// The MCP servers ready now, by name.
fn ready_servers(deps: &EngineDeps) -> std::collections::BTreeSet<String> {
    let reports = deps.mcp.as_ref().map(|hub| hub.reports()).unwrap_or_default();
    reports.into_iter().filter(|r| r.status == bridle_protocol::McpStatus::Ready).map(|r| r.name).collect()
}
