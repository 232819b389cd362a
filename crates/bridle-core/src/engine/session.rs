//! One session's shared state: history, usage, approvals, and the ways a turn records and
//! reports.

use std::sync::Arc;

use bridle_protocol::{ErrorCode, ErrorInfo, Event, HistoryItem};
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;

use super::{EngineConfig, EngineDeps};
use crate::audit::{AuditKind, AuditRecord};
use crate::calls::{ApprovalQueue, Calls, Desk};
use crate::changes::SessionFiles;
use crate::compaction::{self, Estimator, Fit, View};
use crate::provider::ModelRequest;
use crate::store::SessionLease;
use crate::tools::{ToolContext, UsageMeter, UsageSnapshot};

pub(crate) struct Session {
    pub id: String,
    pub config: EngineConfig,
    pub deps: EngineDeps,
    /// Replaced whole when the mode or the MCP servers change (between turns); read through
    /// [`Session::calls`]. Shared with the [`super::Engine`], which reports the mode and the
    /// sandbox in force from it.
    calls: SharedCalls,
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
    /// Bridle's notes (an undo's) made while calls waited for their results: they join the
    /// history after those results, where the store's reader puts them too.
    notes: std::sync::Mutex<Vec<HistoryItem>>,
    /// The brief: Bridle's instructions, the environment, the project's instructions.
    pub(crate) brief: crate::brief::Brief,
    events: super::events::EventSender,
    /// Held while the session is open here, so another process answering one of its approvals
    /// leaves the running to this one.
    _lease: SessionLease,
    /// This session, for what a call hands out that must outlive a borrow (its network gate).
    me: std::sync::Weak<Session>,
    /// Its background processes, and the loopback its commands share.
    pub processes: Arc<crate::processes::SessionProcesses>,
    /// The questions about what calls do (hosts, held changes) each turn has waiting.
    pub(crate) questions: super::hosts::Waiting,
}

impl Session {
    pub(crate) fn new(
        id: String,
        config: EngineConfig,
        deps: EngineDeps,
        (tools_seen, calls): (u64, SharedCalls),
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
            let current = calls.read().unwrap_or_else(std::sync::PoisonError::into_inner).clone();
            let shell = &current.workspace().shell;
            let environment =
                brief::Environment::detect(&config.workspace, deps.clock.now_ms(), shell, shell.network());
            let config_dir = config.config_file.as_deref().and_then(std::path::Path::parent);
            brief::assemble(
                &config.system_prompt,
                &environment,
                brief::load_instructions(config_dir, &config.workspace),
            )
        };
        let ready = ready_servers(&deps);
        let watch = super::processes::ProcessWatch {
            session_id: id.clone(),
            audit: deps.audit.clone(),
            events: events.clone(),
            clock: deps.clock.clone(),
        };
        let processes = Arc::new(crate::processes::SessionProcesses::new(
            &id,
            deps.store.clone(),
            deps.clock.clone(),
            Arc::new(watch),
        ));
        Self {
            id,
            config,
            deps,
            calls,
            tools_seen: std::sync::Mutex::new((tools_seen, ready)),
            usage,
            approvals,
            files,
            view: std::sync::Mutex::new(view),
            estimator: std::sync::Mutex::new(Estimator::default()),
            warned_truncation: std::sync::atomic::AtomicBool::new(false),
            watch: std::sync::Mutex::new(None),
            history: Mutex::new(history),
            notes: std::sync::Mutex::new(Vec::new()),
            brief,
            events,
            _lease: lease,
            me: std::sync::Weak::new(),
            processes,
            questions: super::hosts::Waiting::default(),
        }
    }

    /// The same session, knowing its own place (`Arc::new_cyclic`).
    pub(crate) fn knowing(self, me: std::sync::Weak<Session>) -> Self {
        Self { me, ..self }
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
                self.warn(bridle_protocol::WarningCode::ContextWindowCorrected, message).await;
            }
        }
    }

    /// A warning for the window (and the audit), which stops nothing.
    pub(crate) async fn warn(&self, code: bridle_protocol::WarningCode, message: String) {
        self.audit(AuditKind::Warning, None, |r| {
            r.status(code.as_str()).payload(serde_json::json!({"message": message}))
        });
        self.emit(Event::Warning { session_id: self.id.clone(), code, message }).await;
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
        self.warn(bridle_protocol::WarningCode::PromptTruncated, message).await;
    }

    /// Starts watching the workspace: a file the session read or wrote that changes on disk
    /// behind its back is announced ([`Event::FilesChangedOnDisk`]). Without a watch (no
    /// inotify slots left, say) the stale-write check still holds; only the announcement is lost.
    pub(crate) fn start_watching(&self) {
        let (events, session_id) = (self.events.clone(), self.id.clone());
        let report = move |paths: Vec<String>| {
            events.try_send(Event::FilesChangedOnDisk { session_id: session_id.clone(), paths });
        };
        match crate::changes::watch(self.calls().workspace().clone(), self.files.clone(), report) {
            Ok(watch) => *self.watch.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(watch),
            Err(e) => tracing::warn!("session {}: the workspace is not watched: {e}", self.id),
        }
    }

    /// What calls go through now (cheap: every part is shared).
    pub(crate) fn calls(&self) -> Calls {
        self.calls.read().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    /// Where this session's approvals are asked and answered.
    pub(crate) fn desk(&self) -> Desk {
        Desk {
            queue: self.approvals.clone(),
            store: self.deps.store.clone(),
            clock: self.deps.clock.clone(),
            timeout: self.config.limits.approval_timeout(),
            defer: self.config.defer_approvals,
        }
    }

    /// Tells the window that request `id` was withdrawn (from sync code: sent without waiting).
    pub(crate) fn announce_withdrawn(&self, id: &str) {
        self.events.try_send(Event::ApprovalResolved {
            session_id: self.id.clone(),
            approval_id: id.to_string(),
            decision: bridle_protocol::ApprovalAnswer::Deny,
            source: bridle_protocol::DecisionSource::User,
        });
    }

    /// Switches to `mode`: the permit's mode changes, and the calls are built again the one way
    /// ([`super::EngineConfig::calls`]) for the shell sandbox of that mode, under the same
    /// permit (so its rules, an "always" rule added meanwhile included, and its grants hold).
    /// Called only between turns, so no call straddles two.
    pub(crate) async fn set_mode(&self, mode: bridle_protocol::Mode) {
        let current = self.calls();
        let permit = current.permit().clone();
        let previous = permit.mode();
        permit.set_mode(mode);
        let next = match self.config.calls(current.registry().clone(), permit.clone()) {
            Ok(next) => next,
            Err(e) => {
                permit.set_mode(previous);
                return self
                    .error(ErrorCode::ModeChangeFailed, format!("cannot switch to {}: {e}", mode.as_str()), false)
                    .await;
            }
        };
        *self.calls.write().unwrap_or_else(std::sync::PoisonError::into_inner) = next;
        self.audit(AuditKind::ModeChanged, None, |r| {
            r.payload(
                serde_json::json!({"mode": mode.as_str(), "from": previous.as_str(), "sandbox": self.sandbox().0}),
            )
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
        let next = self.calls().with_registry(tools);
        *self.calls.write().unwrap_or_else(std::sync::PoisonError::into_inner) = next;
        for report in hub.reports() {
            if report.status == bridle_protocol::McpStatus::Failed && was_ready.contains(&report.name) {
                let why = report.error.unwrap_or_default();
                let message = format!(
                    "The MCP server `{}` stopped ({why}); its tools are no longer offered. \
                     Restart it from Settings, or start a new session",
                    report.name
                );
                self.warn(bridle_protocol::WarningCode::McpServerStopped, message).await;
            }
        }
    }

    /// How `bash` runs in this session now, and why it is unconfined when it is (or what its
    /// sandbox does not hold when confined).
    pub(crate) fn sandbox(&self) -> (&'static str, Option<String>) {
        sandbox_of(&self.calls())
    }

    /// Tells the window which mode is in force and how commands run.
    pub(crate) async fn announce_mode(&self, mode: bridle_protocol::Mode) {
        let (sandbox, unsandboxed_because) = self.sandbox();
        let sandbox_home = self.calls().workspace().shell.home_shown();
        let event = Event::ModeChanged {
            session_id: self.id.clone(),
            mode,
            sandbox: sandbox.into(),
            unsandboxed_because,
            sandbox_home,
        };
        self.emit(event).await;
    }

    /// Stores the plan an `update_plan` call set and shows it (`PlanUpdated`).
    pub(crate) async fn keep_plan(&self, turn_id: &str, result: &bridle_protocol::ToolResult) {
        let Some(bridle_protocol::ToolDetails::Plan { items }) = &result.details else { return };
        let items = items.clone();
        if let Err(e) = self.deps.store.set_plan(&self.id, &items, self.deps.clock.now_ms()) {
            self.error(ErrorCode::StoreWriteFailed, format!("the plan was not stored: {e}"), true).await;
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
            self.error(ErrorCode::StoreWriteFailed, format!("{e}; the conversation continues in memory"), true).await;
        }
        let mut history = self.history.lock().await;
        history.push(item);
        self.flush_notes(&mut history);
    }

    /// Stores a call's result the moment the call ends, before its siblings do: a crash
    /// mid-batch keeps every result that was reached. The in-memory history gets the batch's
    /// results in call order afterwards ([`Self::remember_results`]); the store's reader puts
    /// them in call order too.
    pub(crate) async fn persist_result(&self, turn_id: &str, result: &bridle_protocol::ToolResult) {
        let now = self.deps.clock.now_ms();
        let item = HistoryItem::ToolResult { result: result.clone() };
        if let Err(e) = self.deps.store.append(&self.id, turn_id, &item, now) {
            self.error(ErrorCode::StoreWriteFailed, format!("{e}; the conversation continues in memory"), true).await;
        }
    }

    /// A batch's results, already stored one by one, join the in-memory history in call order.
    pub(crate) async fn remember_results(&self, results: Vec<bridle_protocol::ToolResult>) {
        let mut history = self.history.lock().await;
        history.extend(results.into_iter().map(|result| HistoryItem::ToolResult { result }));
        self.flush_notes(&mut history);
    }

    /// Appends a note from Bridle (an undo's) to the store and to the history the model sees
    /// next; while calls wait for their results, after those results.
    async fn record_note(&self, item: HistoryItem) {
        let now = self.deps.clock.now_ms();
        if let Err(e) = self.deps.store.append(&self.id, "", &item, now) {
            self.error(ErrorCode::StoreWriteFailed, format!("{e}; the conversation continues in memory"), true).await;
        }
        let mut history = self.history.lock().await;
        self.notes.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(item);
        self.flush_notes(&mut history);
    }

    /// Tells the model of a resumed session which of its background processes ended when it was
    /// last closed (once).
    pub(crate) async fn tell_ended_processes(&self) {
        match self.deps.store.untold_processes(&self.id) {
            Ok(rows) => {
                if let Some(note) = super::processes::ended_note(&rows) {
                    self.record_note(note).await;
                }
            }
            Err(e) => tracing::warn!("session {}: its ended processes cannot be read: {e}", self.id),
        }
    }

    /// Moves the waiting notes into `history` once no call there waits for a result.
    fn flush_notes(&self, history: &mut Vec<HistoryItem>) {
        let mut notes = self.notes.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if !notes.is_empty() && !has_open_calls(history) {
            history.append(&mut notes);
        }
    }

    /// Files changed at `paths` (a tool's change, or an undo): the permit forgets what a
    /// changed exec-config file voids.
    pub(crate) async fn files_changed<'a>(&self, paths: impl Iterator<Item = &'a str>) {
        if let Some(problem) = self.calls().permit().files_changed(paths) {
            self.error(problem.code, problem.message, problem.retryable).await;
        }
    }

    /// Undoes a turn's file changes (the last turn's when `None`), whole or for `paths`;
    /// called between turns. Every file put back or removed is audited; the window hears
    /// [`Event::Undone`].
    pub(crate) async fn undo(&self, turn_id: Option<&str>, paths: &[String]) {
        let workspace = self.calls().workspace().clone();
        let blobs = crate::changes::BlobStore::new(&self.config.data_dir);
        let now = self.deps.clock.now_ms();
        let report = match crate::changes::undo(&self.deps.store, &blobs, &workspace, &self.id, turn_id, paths, now) {
            Ok(report) => report,
            Err(e) => return self.error(ErrorCode::UndoFailed, e, false).await,
        };
        for (path, status) in
            report.restored.iter().map(|p| (p, "restored")).chain(report.removed.iter().map(|p| (p, "removed")))
        {
            self.audit(AuditKind::Undone, Some(&report.turn_id), |r| {
                r.status(status).payload(serde_json::json!({"path": path}))
            });
        }
        self.files_changed(report.restored.iter().chain(&report.removed).map(String::as_str)).await;
        // The undo already stored the stamps; this session's memory of them follows.
        for (path, stamp) in &report.stamps {
            self.files.saw(std::path::Path::new(path), *stamp);
        }
        if let Some(note) = report.note_item() {
            self.record_note(note).await;
        }
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
        self.audit_rows(vec![fill(self.audit_record(kind, turn_id))]);
    }

    /// An audit row of `kind` opened for this session (and `turn_id`), to be filled.
    pub(crate) fn audit_record(&self, kind: AuditKind, turn_id: Option<&str>) -> AuditRecord {
        let record = AuditRecord::new(kind, self.deps.clock.now_ms()).session(self.id.clone());
        match turn_id.filter(|t| !t.is_empty()) {
            Some(turn_id) => record.turn(turn_id),
            None => record,
        }
    }

    /// Records rows already filled ([`crate::calls::audit_rows`]).
    pub(crate) fn audit_rows(&self, rows: Vec<AuditRecord>) {
        if !self.deps.audit.is_enabled() || rows.is_empty() {
            return;
        }
        for row in rows {
            self.deps.audit.record(row);
        }
        self.report_audit_failure();
    }

    /// An audit append that failed (on the writer thread, a moment ago) becomes an `Error` the
    /// user sees, not only a log line. Sent without waiting: this runs inside sync code.
    pub(crate) fn report_audit_failure(&self) {
        if let Some(message) = self.deps.audit.take_failure() {
            let info = ErrorInfo { code: ErrorCode::AuditWriteFailed, message, retryable: false };
            if !self.events.try_send(Event::Error { session_id: self.id.clone(), info }) {
                tracing::error!("audit write failure could not be reported to the window");
            }
        }
    }

    pub(crate) async fn error(&self, code: ErrorCode, message: String, retryable: bool) {
        self.audit(AuditKind::Error, None, |r| {
            r.status(code.as_str()).payload(serde_json::json!({"message": message, "retryable": retryable}))
        });
        self.emit(Event::Error { session_id: self.id.clone(), info: ErrorInfo { code, message, retryable } }).await;
    }

    /// A copy of the history so far.
    pub(crate) async fn history_snapshot(&self) -> Vec<HistoryItem> {
        self.history.lock().await.clone()
    }

    /// The next model request: system prompt, the history as the model sees it (compacted),
    /// tools sorted by name.
    pub(crate) async fn request(&self) -> ModelRequest {
        let history = self.history.lock().await;
        self.current_view().apply(&self.brief.text, &history, self.calls().registry().definitions())
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
                self.error(ErrorCode::CompactFailed, message.into(), false).await;
            }
            return;
        };
        let history = self.history_snapshot().await;
        let tools = self.calls().registry().definitions();
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
            Err(e) => return self.error(ErrorCode::CompactFailed, e.to_string(), true).await,
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
                ErrorCode::StoreWriteFailed,
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
        let calls = self.calls();
        let gate = self.me.upgrade().map(|session| {
            Arc::new(super::hosts::SessionGate { session, turn_id: turn_id.to_string(), cancel: cancel.clone() })
        });
        let network = gate.clone().map(|gate| crate::network::CallNetwork {
            proxy: calls.permit().network().cloned(),
            gate: gate as Arc<dyn crate::network::Gate>,
        });
        ToolContext {
            network,
            effects: gate.map(|g| g as Arc<dyn crate::changes::EffectsDesk>),
            usage: self.usage.clone(),
            cancel,
            turn_id: turn_id.to_string(),
            files: Some(self.files.clone()),
            processes: Some(self.processes.clone()),
            ..ToolContext::new(
                self.id.clone(),
                call_id,
                self.calls().workspace().clone(),
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

/// The calls of a session, shared between its loop and its [`super::Engine`].
pub(crate) type SharedCalls = Arc<std::sync::RwLock<Calls>>;

/// How `bash` runs under `calls`, and why it is unconfined when it is (or what its sandbox does
/// not hold when confined).
pub(crate) fn sandbox_of(calls: &Calls) -> (&'static str, Option<String>) {
    let shell = &calls.workspace().shell;
    (shell.kind().as_str(), shell.unsandboxed_because().map(String::from).or_else(|| shell.gaps()))
}

/// The MCP servers ready now, by name.
fn ready_servers(deps: &EngineDeps) -> std::collections::BTreeSet<String> {
    let reports = deps.mcp.as_ref().map(|hub| hub.reports()).unwrap_or_default();
    reports.into_iter().filter(|r| r.status == bridle_protocol::McpStatus::Ready).map(|r| r.name).collect()
}

/// Whether the last assistant item has calls without a result yet.
fn has_open_calls(history: &[HistoryItem]) -> bool {
    let Some(at) = history.iter().rposition(|item| matches!(item, HistoryItem::Assistant { .. })) else {
        return false;
    };
    let HistoryItem::Assistant { tool_calls, .. } = &history[at] else { return false };
    let answered = history[at..].iter().filter(|item| matches!(item, HistoryItem::ToolResult { .. })).count();
    answered < tool_calls.len()
}
