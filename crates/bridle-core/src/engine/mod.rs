//! The engine: a queue pair around one session.
//!
//! [`Engine::submit`] takes [`Op`]s; the receiver returned by [`Engine::spawn`] yields
//! [`Event`]s in order. One spawned loop owns the session: it starts a turn per user message
//! (queueing messages that arrive while a turn runs), gives each turn its own cancellation
//! token, and interrupts by cancelling it. Rules kept here: every tool call in the history has
//! a result before the next model request; failures reach the model as tool results or the
//! user as `Error` events, never as a panic; the session is persisted as it goes; a turn left
//! waiting on approvals by an earlier process resumes as soon as the session is opened again,
//! and so do its children (`agents.rs`: a child is a session of its own whose events go on in
//! its parent's stream, ended by the parent's interrupt or end).

mod agents;
mod commands;
mod config;
mod dispatch;
mod events;
mod history;
mod processes;
mod review;
mod roles;
mod session;
mod step;
mod turn;
mod undo;

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use bridle_protocol::{ApprovalSubject, ErrorCode, Event, HistoryItem, Mode, Op, ToolCall};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::audit::AuditKind;
use crate::calls::{Answer, Calls};
use crate::guard::{RuleError, ShellRuleError};
use crate::store::{SessionLease, StoreError, StoredApproval};

pub use agents::AgentOrigin;
pub use config::{EngineConfig, EngineDeps};
pub use events::EventCount;
pub use review::records as review_records;
use session::Session;

/// Which session to run.
#[derive(Debug, Clone)]
pub enum SessionSpec {
    /// A new session.
    New,
    /// An existing session, its history loaded from the store.
    Resume(String),
}

/// Why the engine could not start or accept an op.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The workspace could not be opened.
    #[error("cannot open the workspace {path}: {source}")]
    Workspace {
        /// The folder.
        path: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// The engine's loop has ended.
    #[error("the engine has stopped")]
    Closed,
    /// A user rule in the config is not valid.
    #[error(transparent)]
    Rules(#[from] RuleError),
    /// The shell rule file shipped with Bridle is broken (a build defect; nothing may run).
    #[error(transparent)]
    ShellRules(#[from] ShellRuleError),
    /// A hook in the config is not valid.
    #[error(transparent)]
    Hook(#[from] crate::hooks::HookError),
    /// `[sandbox.network]` or the names pinned for the proxy cannot be read.
    #[error("{0}")]
    Network(String),
    /// Another process has the session open.
    #[error("session {0} is open in another Bridle process")]
    SessionBusy(String),
    /// The session's worktree is archived, or its folder is gone.
    #[error(
        "session {id} works in the worktree {path}, which is {why}: `bridle sessions restore {id}` brings it back \
         (or archive the session)"
    )]
    WorktreeAway {
        /// The session.
        id: String,
        /// The worktree's folder.
        path: String,
        /// `archived` or `gone`.
        why: &'static str,
    },
    /// The session's lease file could not be taken.
    #[error("cannot lock session {id}: {source}")]
    Lease {
        /// The session.
        id: String,
        /// The OS error.
        source: std::io::Error,
    },
}

/// The submitting half of the queue pair.
#[derive(Clone)]
pub struct Engine {
    ops: mpsc::Sender<Op>,
    session_id: String,
    resumed_turn: Option<String>,
    calls: session::SharedCalls,
    events_sent: EventCount,
    closing: CancellationToken,
    instruction_files: Vec<(String, u64)>,
    processes: Arc<crate::processes::SessionProcesses>,
    skills: Arc<crate::skills::SessionSkills>,
    review: Arc<review::ReviewDesk>,
    managed: Option<crate::config::Managed>,
    children: Arc<agents::Children>,
}

impl Engine {
    /// Starts the session's loop on the current tokio runtime.
    pub fn spawn(
        mut config: EngineConfig,
        deps: EngineDeps,
        spec: SessionSpec,
    ) -> Result<(Engine, mpsc::Receiver<Event>), EngineError> {
        let (tools_seen, tools) = session::offered_tools(&deps);
        let now = deps.clock.now_ms();
        let session_id = match &spec {
            SessionSpec::New => new_id(),
            SessionSpec::Resume(id) => id.clone(),
        };
        // A session Bridle made a worktree for works there, whichever folder the front end was
        // started in, with the git folders its record names.
        if let Some(record) = deps.store.worktree(&session_id)? {
            let path = record.worktree.path.display().to_string();
            let away = |why| EngineError::WorktreeAway { id: session_id.clone(), path: path.clone(), why };
            if record.archived.is_some() {
                return Err(away("archived"));
            }
            if record.worktree.path.symlink_metadata().is_err() {
                return Err(away("gone"));
            }
            config.workspace = record.worktree.path.clone();
            config.worktree = Some(record.worktree);
        }
        let phase = crate::clock::Phase::start("guard and shell sandbox (probes)");
        let permit = config.permit()?.with_grants(deps.store.clone(), session_id.clone());
        let calls = Arc::new(std::sync::RwLock::new(config.calls(tools, Arc::new(permit))?));
        drop(phase);
        let lease = match SessionLease::try_acquire(&config.data_dir, &session_id) {
            Ok(Some(lease)) => lease,
            Ok(None) => return Err(EngineError::SessionBusy(session_id)),
            Err(source) => return Err(EngineError::Lease { id: session_id, source }),
        };
        let phase = crate::clock::Phase::start("session row and history");
        let resumed = matches!(spec, SessionSpec::Resume(_));
        let history = match spec {
            SessionSpec::New => {
                deps.store.create_session(&session_id, &config.workspace.display().to_string(), now)?;
                Vec::new()
            }
            SessionSpec::Resume(_) => deps.store.history(&session_id, now)?,
        };
        // A question about a host or a command's changes left by a process that ended: what
        // asked is gone.
        let queue = crate::calls::ApprovalQueue::new(deps.store.clone(), deps.clock.clone());
        for stored in deps.store.pending_approvals(Some(&session_id))? {
            let why = match stored.request.subject {
                ApprovalSubject::Call { .. } => continue,
                ApprovalSubject::Host { .. } => "the connection that asked ended with its process",
                // A held change lived in its command's layer, gone with the process.
                ApprovalSubject::Changes { .. } => "the command's changes were discarded when its process ended",
            };
            queue.withdraw(&stored.request.id, why)?;
        }
        let suspended = suspended_turn(deps.store.held_approvals(&session_id)?, &history);
        drop(phase);
        let (event_tx, event_rx) = mpsc::channel(1024);
        let (event_tx, events_sent) = events::EventSender::new(event_tx);
        let (op_tx, op_rx) = mpsc::channel(64);
        let resumed_turn = match &suspended {
            Some(turn::TurnStart::Resume { turn_id, .. }) => Some(turn_id.clone()),
            _ => None,
        };
        let phase = crate::clock::Phase::start("session state (skills, brief, processes)");
        let session = Arc::new(Session::new(
            session_id.clone(),
            config,
            deps,
            (tools_seen, calls.clone()),
            history,
            event_tx,
            lease,
        ));
        let instruction_files = session.brief.files.iter().map(|f| (f.path.clone(), f.tokens)).collect();
        let processes = session.processes.clone();
        let skills = session.skills.clone();
        let review = Arc::new(review::ReviewDesk::of(&session));
        let managed = session.config.managed.clone();
        let children = session.children.clone();
        children.attach(&session);
        drop(phase);
        let phase = crate::clock::Phase::start("watching and the session-started audit row");
        session.start_watching();
        session.audit(AuditKind::SessionStarted, None, |r| {
            r.payload(serde_json::json!({
                "workspace": session.config.workspace.display().to_string(),
                "mode": session.calls().permit().mode().as_str(),
                "resumed": resumed_turn.is_some(),
                "sandbox": session.sandbox().0,
                "frontEnd": session.config.front_end,
            }))
        });
        drop(phase);
        let closing = CancellationToken::new();
        tokio::spawn(run_loop(session, op_rx, suspended, resumed, closing.clone()));
        let engine = Engine {
            ops: op_tx,
            session_id,
            resumed_turn,
            calls,
            events_sent,
            closing,
            instruction_files,
            processes,
            skills,
            review,
            managed,
            children,
        };
        Ok((engine, event_rx))
    }

    /// Queues an op.
    pub async fn submit(&self, op: Op) -> Result<(), EngineError> {
        self.ops.send(op).await.map_err(|_| EngineError::Closed)
    }

    /// The session's id.
    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// How `bash` runs in this session now (`bwrap`, `landlock` or `none`), and why it is
    /// unconfined when it is (or what its sandbox does not hold).
    pub fn sandbox(&self) -> (&'static str, Option<String>) {
        session::sandbox_of(&self.current_calls())
    }

    /// What of the home folder this session's commands see, when the sandbox hides it.
    pub fn sandbox_home(&self) -> Option<String> {
        self.current_calls().workspace().shell.home_shown()
    }

    /// The hosts a person allowed for this session (`host:port`).
    pub fn session_hosts(&self) -> Vec<String> {
        self.current_calls().permit().network().map(|proxy| proxy.session_hosts()).unwrap_or_default()
    }

    /// The session's background processes, oldest first.
    pub fn processes(&self) -> Vec<bridle_protocol::ProcessInfo> {
        self.processes.list()
    }

    /// Stops background process `id` of this session (its group: SIGTERM, then SIGKILL) and
    /// returns how it ended.
    pub async fn stop_process(&self, id: &str) -> Result<bridle_protocol::ProcessInfo, crate::processes::ProcessError> {
        self.processes.stop(id).await
    }

    /// The hunks of one turn of this session (its last turn with changes when `None`), §10.1.
    pub async fn review_turn(
        &self,
        turn_id: Option<String>,
    ) -> Result<bridle_protocol::TurnReview, crate::changes::ReviewError> {
        self.review.turn(self.current_calls().workspace().clone(), turn_id).await
    }

    /// Keeps, rejects or unrejects hunks of this session (all or none), audited as the front
    /// end's; the model hears of the rejects before the next user message.
    pub async fn review_decide(
        &self,
        decision: bridle_protocol::ReviewDecision,
        ids: &[String],
    ) -> Result<bridle_protocol::TurnReview, crate::changes::ReviewError> {
        self.review.decide(self.current_calls().workspace().clone(), decision, ids).await
    }

    /// How a client shows a call of `tool` with `arguments`, as the session's tool describes it
    /// (its kind, a title, the paths it touches).
    pub fn describe(&self, tool: &str, arguments: &str) -> crate::tools::CallDescription {
        self.current_calls().registry().describe(tool, arguments)
    }

    /// The skills found when the session opened (offered or not, with their errors).
    pub fn skills(&self) -> Vec<bridle_protocol::SkillInfo> {
        self.skills.skills().iter().map(crate::skills::Skill::info).collect()
    }

    /// The slash commands a user may type in this session: the built-ins, then its
    /// user-invocable skills.
    pub fn commands(&self) -> Vec<bridle_protocol::SlashCommandInfo> {
        crate::skills::available_commands(self.skills.skills())
    }

    /// The children this session started, as they stand (DESIGN §16.1).
    pub fn agents(&self) -> Vec<bridle_protocol::AgentInfo> {
        self.children.list()
    }

    /// The engine of this session's live child `id` (a front end shows it, and steers it).
    pub fn agent(&self, id: &str) -> Option<Engine> {
        self.children.engine(id)
    }

    /// The mode in force now (a `SetMode` takes effect between turns).
    pub fn mode(&self) -> Mode {
        self.current_calls().permit().mode()
    }

    /// Refuses `mode` when the managed policy does not allow it (a `SetMode` to it is refused
    /// too; this lets a front end answer its client at once).
    pub fn check_mode(&self, mode: Mode) -> Result<(), String> {
        self.managed.as_ref().map_or(Ok(()), |m| m.check_mode(mode))
    }

    /// The modes a session may be in under the managed policy.
    pub fn allowed_modes(&self) -> Vec<Mode> {
        Mode::ALL.into_iter().filter(|m| self.check_mode(*m).is_ok()).collect()
    }

    fn current_calls(&self) -> Calls {
        self.calls.read().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    /// The turn an earlier process left waiting on approvals, which this engine resumed at once
    /// (its events come before those of any new message).
    pub fn resumed_turn(&self) -> Option<&str> {
        self.resumed_turn.as_deref()
    }

    /// The project instruction files in the session's brief, with their token cost.
    pub fn instruction_files(&self) -> &[(String, u64)] {
        &self.instruction_files
    }

    /// How many events the session has sent: the `seq` of the last one (events are numbered
    /// from 1 in the order the receiver gets them).
    pub fn events_sent(&self) -> u64 {
        self.events_sent.get()
    }

    /// Closes the session: a running turn is interrupted (its history stays consistent), ops
    /// queued after this are refused, and this returns once the loop has ended and the session's
    /// lease is released — another engine may open the session at once.
    pub async fn shutdown(&self) {
        self.closing.cancel();
        self.ops.closed().await;
    }
}

pub use crate::store::new_id;

struct RunningTurn {
    handle: JoinHandle<()>,
    cancel: CancellationToken,
    turn_id: String,
}

fn start_turn(session: &Arc<Session>, start: turn::TurnStart) -> RunningTurn {
    let cancel = CancellationToken::new();
    let turn_id = start.turn_id();
    let handle = tokio::spawn(turn::run_turn(session.clone(), turn_id.clone(), start, cancel.clone()));
    RunningTurn { handle, cancel, turn_id }
}

/// Waits for the running turn to end; a turn whose task failed (a panic in a tool, say) is
/// reported with its id. Never resolves while no turn runs.
async fn finished(running: &mut Option<RunningTurn>) -> Option<(String, String)> {
    match running {
        Some(turn) => match (&mut turn.handle).await {
            Ok(()) => None,
            Err(e) => {
                let why = match e.try_into_panic() {
                    Ok(payload) => panic_message(payload.as_ref()),
                    Err(e) => e.to_string(),
                };
                Some((turn.turn_id.clone(), why))
            }
        },
        None => std::future::pending().await,
    }
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    match (payload.downcast_ref::<&str>(), payload.downcast_ref::<String>()) {
        (Some(s), _) => format!("panic: {s}"),
        (_, Some(s)) => format!("panic: {s}"),
        _ => "panic".to_string(),
    }
}

/// The calls in `history` without a result, in call order.
fn unanswered_calls(history: &[HistoryItem]) -> Vec<ToolCall> {
    let answered: std::collections::HashSet<&str> = history
        .iter()
        .filter_map(|i| match i {
            HistoryItem::ToolResult { result } => Some(result.tool_call_id.as_str()),
            _ => None,
        })
        .collect();
    history
        .iter()
        .flat_map(|i| match i {
            HistoryItem::Assistant { tool_calls, .. } => tool_calls.clone(),
            _ => Vec::new(),
        })
        .filter(|c| !answered.contains(c.id.as_str()))
        .collect()
}

/// The turn an earlier process left waiting on approvals: of the calls `held` by a request,
/// those without a result in `history`, in call order, each with its latest request.
fn suspended_turn(mut held: HashMap<String, StoredApproval>, history: &[HistoryItem]) -> Option<turn::TurnStart> {
    if held.is_empty() {
        return None;
    }
    let calls: Vec<ToolCall> = unanswered_calls(history).into_iter().filter(|c| held.contains_key(&c.id)).collect();
    let turn_id = calls.first().and_then(|c| held.get(&c.id)).map(|s| s.turn_id.clone())?;
    held.retain(|id, _| calls.iter().any(|c| &c.id == id));
    Some(turn::TurnStart::Resume { turn_id, calls, approvals: held })
}

/// Owns the session: turns one at a time, interrupts, approvals, and the ops later versions
/// handle. Ends when every `Engine` handle is dropped and the last turn has finished.
async fn run_loop(
    session: Arc<Session>,
    mut ops: mpsc::Receiver<Op>,
    suspended: Option<turn::TurnStart>,
    resumed: bool,
    closing: CancellationToken,
) {
    // Its children left waiting or idle are opened again with it, before any turn of its own
    // (a `wait_agent` finds them).
    if resumed {
        session.children.resume(&session).await;
    }
    // Before the first request: the window the server really serves (2 s at most); a child on
    // its parent's model has it from the parent.
    if !session.config.agent.as_ref().is_some_and(|o| o.parents_window) {
        session.discover_window().await;
    }
    session.fit_tools_to_window();
    session.tell_ended_processes().await;
    let mut queue: VecDeque<String> = VecDeque::new();
    let mut running: Option<RunningTurn> = suspended.map(|start| start_turn(&session, start));
    let mut open = true;
    // A mode change asked for while a turn runs takes effect when it ends.
    let mut next_mode: Option<bridle_protocol::Mode> = None;
    loop {
        tokio::select! {
            () = closing.cancelled(), if open => {
                open = false;
                if let Some(turn) = &running {
                    turn.cancel.cancel();
                }
                queue.clear();
            }
            op = ops.recv(), if open => match op {
                None => open = false,
                Some(Op::UserMessage { text }) => match commands::builtin(&session, text, running.is_some()).await {
                    // A built-in slash command ran; anything else is a message.
                    None => {}
                    Some(text) => match running {
                        Some(_) => {
                            // The user moved on: what waits for an answer is denied, so the running
                            // turn can finish and this message follows it.
                            if let Err(e) = session.approvals.deny_pending(&session.id, "the user sent a new message instead of answering") {
                                session.error(ErrorCode::StoreWriteFailed, e.to_string(), true).await;
                            }
                            queue.push_back(text);
                        }
                        None => running = Some(start_turn(&session, turn::TurnStart::Message(text))),
                    },
                },
                Some(Op::Interrupt) => {
                    if let Some(turn) = &running {
                        turn.cancel.cancel();
                    }
                    // An interrupt ends the children too, and what they run.
                    let children = session.children.clone();
                    tokio::spawn(async move { children.close_all().await });
                }
                Some(Op::ResolveApproval { approval_id, decision, feedback, edited_arguments, call_hash }) => {
                    // A child's question is answered by the child, which is waiting on it.
                    if let Some(child) = session.children.asker(&approval_id) {
                        let op = Op::ResolveApproval { approval_id, decision, feedback, edited_arguments, call_hash };
                        if child.submit(op).await.is_err() {
                            session.error(ErrorCode::ApprovalRefused, "the agent that asked has ended".into(), false).await;
                        }
                        continue;
                    }
                    let answer = Answer { approval_id, decision, feedback, edited_arguments, call_hash };
                    let answered = match session.approvals.answer(&answer, Some(&session.id)) {
                        // A child opened again with this session may not have asked here yet: its
                        // question waits in the store, where the child finds the answer.
                        Err(crate::calls::AnswerError::WrongSession(_)) => match session.children.owner(&answer.approval_id, &session.deps.store) {
                            Some(child) => session.approvals.answer(&answer, Some(&child)),
                            None => session.approvals.answer(&answer, Some(&session.id)),
                        },
                        other => other,
                    };
                    if let Err(e) = answered {
                        session.error(ErrorCode::ApprovalRefused, e.to_string(), false).await;
                    }
                }
                Some(Op::SetMode { mode }) => match running {
                    Some(_) => next_mode = Some(mode),
                    None => session.set_mode(mode).await,
                },
                Some(Op::Undo { checkpoint_id, paths }) => match running {
                    Some(_) => {
                        let message = "a turn is running; undo when it has ended (or interrupt it first)".to_string();
                        session.error(ErrorCode::UndoBusy, message, true).await;
                    }
                    None => {
                        let turn = Some(checkpoint_id.as_str()).filter(|t| !t.is_empty());
                        session.undo(turn, &paths.unwrap_or_default()).await;
                    }
                },
                Some(Op::Compact) => match running {
                    Some(_) => {
                        let message = "a turn is running; compact when it has ended".to_string();
                        session.error(ErrorCode::CompactBusy, message, true).await;
                    }
                    None => {
                        session.compact(None, true).await;
                    }
                },
            },
            failed = finished(&mut running) => {
                // A failed turn must not take the session down: its history is stored, what it
                // left open is closed, and the window hears that it ended.
                if let Some((turn_id, why)) = failed {
                    turn::abort_failed(&session, &turn_id, why).await;
                }
                if let Some(mode) = next_mode.take() {
                    session.set_mode(mode).await;
                }
                running = queue.pop_front().map(|text| start_turn(&session, turn::TurnStart::Message(text)));
            }
        }
        if !open && running.is_none() {
            break;
        }
    }
    // Nothing the session started outlives it: its children, its processes.
    session.children.close_all().await;
    session.processes.stop_all().await;
    // The session (and its lease) goes before the op queue closes: whoever waits in
    // `Engine::shutdown` may open the session again right away.
    drop(session);
    drop(ops);
}
