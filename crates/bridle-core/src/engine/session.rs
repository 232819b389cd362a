//! One session's shared state — its config, the calls in force, usage, approvals, files and
//! processes — and the ways a turn reports: events, audit rows, errors and warnings. The
//! conversation is `history.rs`'s, the files' watch and undo `undo.rs`'s, the background
//! processes' record `processes.rs`'s.
//!
//! Rule: one place says each thing to the window and the audit; what fails to be recorded is
//! reported, never dropped silently.

use std::sync::Arc;

use bridle_protocol::{ErrorCode, ErrorInfo, Event, HistoryItem};
use tokio_util::sync::CancellationToken;

use super::{EngineConfig, EngineDeps};
use crate::audit::{AuditKind, AuditRecord};
use crate::calls::{ApprovalQueue, Calls, Desk};
use crate::changes::SessionFiles;
use crate::store::SessionLease;
use crate::tools::{Tool as _, ToolContext, UsageMeter, UsageSnapshot};

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
    /// The workspace watch that reports files changed behind the session's back.
    pub(super) watch: std::sync::Mutex<Option<crate::changes::WorkspaceWatch>>,
    /// The conversation, and the view the model has of it.
    pub(super) history: super::history::History,
    /// The brief: Bridle's instructions, the environment, the project's instructions, the
    /// skills' catalog.
    pub(crate) brief: crate::brief::Brief,
    /// The skills found when the session opened, and those it loaded.
    pub(crate) skills: Arc<crate::skills::SessionSkills>,
    pub(super) events: super::events::EventSender,
    /// Held while the session is open here, so another process answering one of its approvals
    /// leaves the running to this one.
    _lease: SessionLease,
    /// Its background processes, and the loopback its commands share.
    pub processes: Arc<crate::processes::SessionProcesses>,
    /// The questions about what calls do (hosts, held changes) each turn has waiting.
    questions: Arc<crate::calls::Waiting>,
    /// The child sessions its calls started.
    pub(crate) children: Arc<super::agents::Children>,
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
        let skills = {
            let found = crate::skills::discover(&config.skill_places(), Some(&deps.store));
            let skills = crate::skills::SessionSkills::new(
                found,
                &config.workspace,
                &id,
                deps.audit.clone(),
                deps.clock.clone(),
            );
            skills.restore(&history);
            Arc::new(skills)
        };
        // Only the tools this session offers ([`unoffered`]: their schemas cost tokens).
        {
            let current = calls.read().unwrap_or_else(std::sync::PoisonError::into_inner).clone();
            let tools = Arc::new(unoffered(current.registry(), &skills, &config, config.context_window));
            *calls.write().unwrap_or_else(std::sync::PoisonError::into_inner) = current.with_registry(tools);
        }
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
            .with_skills(crate::skills::catalog(skills.skills(), crate::skills::CATALOG_BUDGET))
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
            watch: std::sync::Mutex::new(None),
            history: super::history::History::new(history, view),
            brief,
            skills,
            events,
            _lease: lease,
            processes,
            questions: Arc::default(),
            children: Arc::default(),
        }
    }

    /// A warning for the window (and the audit), which stops nothing.
    pub(crate) async fn warn(&self, code: bridle_protocol::WarningCode, message: String) {
        self.audit(AuditKind::Warning, None, |r| {
            r.status(code.as_str()).payload(serde_json::json!({"message": message}))
        });
        self.emit(Event::Warning { session_id: self.id.clone(), code, message }).await;
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
            waiting: self.questions.clone(),
        }
    }

    /// Sends `event` from code that cannot wait: at once if there is room, else not at all.
    pub(crate) fn try_emit(&self, event: Event) {
        self.events.try_send(event);
    }

    /// Switches to `mode`: the permit's mode changes, and the calls are built again the one way
    /// ([`super::EngineConfig::calls`]) for the shell sandbox of that mode, under the same
    /// permit (so its rules, an "always" rule added meanwhile included, and its grants hold).
    /// Called only between turns, so no call straddles two.
    pub(crate) async fn set_mode(&self, mode: bridle_protocol::Mode) {
        if let Some(Err(refused)) = self.config.managed.as_ref().map(|m| m.check_mode(mode)) {
            return self.error(ErrorCode::ModeChangeFailed, refused, false).await;
        }
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
        self.children.narrow_to(mode).await;
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
        let (generation, tools) = self.offered_tools();
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

    /// Offers only the tools `narrowing` allows (a loaded skill's `allowed-tools`: the others
    /// are refused as unknown, whatever the mode), or, with `None`, every tool again. Called
    /// between the calls of a turn, never during them.
    pub(crate) fn narrow_tools(&self, narrowing: Option<&crate::skills::Narrowing>) {
        let (_, tools) = self.offered_tools();
        let tools = match narrowing {
            Some(n) => Arc::new(tools.narrowed(&n.allowed(), &n.why())),
            None => tools,
        };
        let next = self.calls().with_registry(tools);
        *self.calls.write().unwrap_or_else(std::sync::PoisonError::into_inner) = next;
    }

    /// The tools this session offers: [`offered_tools`], without `skill` when the model has no
    /// skill to load.
    fn offered_tools(&self) -> (u64, Arc<crate::tools::ToolRegistry>) {
        let (generation, tools) = offered_tools(&self.deps);
        (generation, Arc::new(unoffered(&tools, &self.skills, &self.config, self.context_window())))
    }

    /// Once the window in force is known: a window too small for children leaves the agent
    /// tools out of what is offered.
    pub(crate) fn fit_tools_to_window(&self) {
        let current = self.calls();
        let tools = unoffered(current.registry(), &self.skills, &self.config, self.context_window());
        *self.calls.write().unwrap_or_else(std::sync::PoisonError::into_inner) = current.with_registry(Arc::new(tools));
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

    /// Counts tokens a child spent in this session's totals, under the turn that started it, and
    /// tells the window the new totals.
    pub(crate) async fn add_child_usage(&self, turn_id: &str, step: &bridle_protocol::TokenUsage) {
        let (total, context_used, context_window) = {
            let mut meter = self.usage.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            meter.total.add(step);
            (meter.total, meter.context_used, meter.context_window)
        };
        if let Err(e) = self.deps.store.set_usage(&self.id, turn_id, step, &total, context_used) {
            tracing::warn!("session {}: an agent's tokens were not stored: {e}", self.id);
        }
        let turn_id = turn_id.to_string();
        self.emit(Event::TokenUsage {
            session_id: self.id.clone(),
            turn_id,
            usage: *step,
            total,
            context_used,
            context_window,
        })
        .await;
    }

    /// Sends an event; a consumer that went away is not an error of the session.
    pub(crate) async fn emit(&self, event: Event) {
        self.events.send(event).await;
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
        for mut row in rows {
            // A child's rows carry its parent's session, turn and call (DESIGN §16.1).
            if let (Some(origin), Some(payload)) = (&self.config.agent, row.payload.as_object_mut()) {
                let parent = &origin.info;
                payload.insert(
                    "parent".into(),
                    serde_json::json!({"sessionId": parent.parent_id, "turnId": parent.turn_id, "callId": parent.call_id}),
                );
            }
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

    pub(crate) fn tool_context(&self, turn_id: &str, call_id: &str, cancel: CancellationToken) -> ToolContext {
        ToolContext {
            usage: self.usage.clone(),
            cancel,
            session: Some(crate::tools::InSession {
                turn_id: turn_id.to_string(),
                files: self.files.clone(),
                processes: self.processes.clone(),
                skills: self.skills.clone(),
                agents: Some(Arc::new(self.children.clone())),
            }),
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

/// The smallest context window a session is offered the agent tools in: a child needs a window
/// of its own, and their schemas take some 450 tokens of every request.
const AGENTS_MIN_WINDOW: u64 = 16_384;

/// `tools` without those this session does not offer: `skill` with no skill for the model, the
/// agent tools when it may start no child or its `window` is too small for them.
fn unoffered(
    tools: &crate::tools::ToolRegistry,
    skills: &crate::skills::SessionSkills,
    config: &EngineConfig,
    window: Option<u64>,
) -> crate::tools::ToolRegistry {
    let mut tools = tools.clone();
    if !skills.offers_model_skills() {
        tools = tools.without(crate::tools::LoadSkill::NAME);
    }
    if config.agents.max_children == 0 || window.is_some_and(|w| w < AGENTS_MIN_WINDOW) {
        for name in crate::tools::AGENT_TOOLS {
            tools = tools.without(name);
        }
    }
    tools
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
