//! One ACP session: an engine, and the task that tells the client what it does.
//!
//! Rules: a prompt is one turn, answered with how it stopped; every event of the turn reaches the
//! client in order, as an update, before the prompt's answer; an approval request is asked with
//! `session/request_permission` on a task of its own (a cancel or the approval timeout can
//! settle it first) and answered with the request's call hash, so the answer runs only the call
//! it was given for; at most [`PENDING_QUESTIONS`] prompts are open at once, and a request past
//! that is denied without a prompt, saying so; a file a call changed is sent as a diff of its
//! whole text before and after, both known without opening any path a call names: the engine
//! tells what changed (its diff, after the guard judged the call and the sandbox its paths), the
//! text after is read through `fs/` beneath the workspace (regular files only, never waiting, at
//! most [`DIFF_TEXT_LIMIT`]), and the text before is the diff taken back from it.

use std::collections::HashMap;
use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use agent_client_protocol::v1::schema::{
    ContentBlock, RequestPermissionOutcome, SessionMode, SessionModeId, SessionModeState, SessionNotification,
    SessionUpdate, StopReason,
};
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::Client;
use bridle_core::audit::AuditSink;
use bridle_core::calls::PENDING_QUESTIONS;
use bridle_core::engine::{Engine, SessionSpec};
use bridle_core::mcp::McpHub;
use bridle_core::store::Store;
use bridle_core::wiring::Wiring;
use bridle_protocol::{ApprovalRequest, Event, HistoryItem, Mode, Op, ToolCall};
use tokio::sync::{mpsc, oneshot};

use super::translate::{self, Changed};
use crate::cli::{DriveArgs, ProviderArgs};
use crate::drive;

/// The largest file an editor is sent whole, as a diff's two sides; a larger one is told as text.
const DIFF_TEXT_LIMIT: u64 = 4 << 20;

/// One open session.
pub struct AcpSession {
    pub id: String,
    engine: Engine,
    audit: AuditSink,
    hub: Arc<McpHub>,
    store: Arc<Store>,
    root: PathBuf,
    cx: ConnectionTo<Client>,
    /// The session's wiring: its telemetry is flushed when it closes.
    setup: Wiring,
    /// Told how the running turn stopped.
    turn: Mutex<Option<oneshot::Sender<Result<StopReason, String>>>>,
}

/// The modes a client may pick, the one in force marked.
pub fn modes(current: Mode, allowed: &[Mode]) -> SessionModeState {
    let available = allowed.iter().map(|m| SessionMode::new(SessionModeId::new(m.as_str()), m.as_str())).collect();
    SessionModeState::new(SessionModeId::new(current.as_str()), available)
}

impl AcpSession {
    /// Starts the engine for `spec` and the task that forwards its events.
    pub async fn start(mut setup: Wiring, spec: SessionSpec, cx: ConnectionTo<Client>) -> anyhow::Result<Arc<Self>> {
        let drive_args = DriveArgs { json: false, on_ask: Some(crate::cli::OnAsk::Prompt), max_steps: None };
        let (engine, events, audit, hub) =
            drive::start_as("acp", &mut setup, &ProviderArgs::default(), &drive_args, spec).await?;
        let session = Arc::new(Self {
            id: engine.session_id().to_string(),
            engine,
            audit,
            hub,
            store: setup.store()?,
            root: setup.workspace.clone(),
            cx,
            setup,
            turn: Mutex::new(None),
        });
        tokio::spawn(pump(Arc::downgrade(&session), events));
        Ok(session)
    }

    /// The mode in force and the modes a client may pick.
    pub fn modes(&self) -> SessionModeState {
        modes(self.engine.mode(), &self.engine.allowed_modes())
    }

    /// The worktree the session works in, as `session/new`'s `_meta` tells the client
    /// (`{"worktree": {"path", "branch", "base"}}`); `None` when it works in its `cwd`.
    pub fn worktree(&self) -> Option<serde_json::Map<String, serde_json::Value>> {
        let w = self.store.worktree(&self.id).ok()??.worktree;
        let made = serde_json::json!({ "path": w.path, "branch": w.branch, "base": w.base });
        Some(serde_json::Map::from_iter([("worktree".to_string(), made)]))
    }

    fn send(&self, update: SessionUpdate) {
        let notification = SessionNotification::new(self.id.clone(), update);
        if let Err(e) = self.cx.send_notification(notification) {
            tracing::warn!("session {}: an update did not reach the client: {e}", self.id);
        }
    }

    /// Tells the client the slash commands it may offer (`available_commands_update`): the
    /// built-ins and the session's user-invocable skills; `/name` in a prompt runs one.
    pub fn advertise_commands(&self) {
        self.send(translate::available_commands(&self.engine.commands()));
    }

    /// The `tool_call` announcing `call`, described by its tool.
    fn announce(&self, call: &ToolCall) {
        let described = self.engine.describe(&call.name, &call.arguments);
        self.send(translate::tool_call(call, &described, &self.root));
    }

    /// Sends the stored history as updates (`session/load`).
    pub fn replay(&self) {
        let history = self.store.history(&self.id, 0).unwrap_or_default();
        for item in history {
            match item {
                HistoryItem::User { text } => self.send(translate::user_text(&text)),
                HistoryItem::Assistant { text, tool_calls, .. } => {
                    if !text.is_empty() {
                        self.send(translate::agent_text(&text));
                    }
                    for call in &tool_calls {
                        self.announce(call);
                    }
                }
                HistoryItem::ToolResult { result } => {
                    let status = if result.is_error {
                        bridle_protocol::ToolStatus::Error
                    } else {
                        bridle_protocol::ToolStatus::Ok
                    };
                    self.send(translate::tool_end(&result, status, &[], &self.root));
                }
            }
        }
    }

    /// Runs one turn for `prompt`; answers how it stopped.
    pub async fn prompt(&self, prompt: &[ContentBlock]) -> Result<StopReason, String> {
        let (tx, rx) = oneshot::channel();
        {
            let mut turn = self.turn.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            if turn.is_some() {
                return Err("a prompt of this session is still running; cancel it first".into());
            }
            *turn = Some(tx);
        }
        let text = translate::prompt_text(prompt);
        if let Err(e) = self.engine.submit(Op::UserMessage { text }).await {
            self.turn.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take();
            return Err(e.to_string());
        }
        rx.await.unwrap_or_else(|_| Err("the session closed before the turn ended".into()))
    }

    /// Interrupts the running turn (`session/cancel`).
    pub async fn cancel(&self) {
        let _ = self.engine.submit(Op::Interrupt).await;
    }

    /// Switches to the mode `id` names.
    pub async fn set_mode(&self, id: &str) -> Result<(), String> {
        let mode: Mode = id.parse()?;
        self.engine.check_mode(mode)?;
        self.engine.submit(Op::SetMode { mode }).await.map_err(|e| e.to_string())
    }

    /// Closes the session as the window closing does: its turn is interrupted, its processes
    /// end, pending approvals stay stored.
    pub async fn close(&self) {
        drive::finish(&self.engine, &self.audit).await;
        self.setup.close_telemetry(&self.audit);
        self.hub.shutdown().await;
    }

    fn finish_turn(&self, stop: Result<StopReason, String>) {
        if let Some(tx) = self.turn.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take() {
            let _ = tx.send(stop);
        }
    }

    /// Asks the client about `request` and answers the engine (a deny when the client cancels or
    /// fails to answer; the approval timeout denies without it).
    async fn ask(self: Arc<Self>, request: ApprovalRequest) {
        let described = translate::subject(&request, |tool, arguments| self.engine.describe(tool, arguments));
        let ask = translate::permission(&self.id, &request, &described, &self.root);
        let answer = match self.cx.send_request(ask).block_task().await {
            Ok(response) => {
                let option = match response.outcome {
                    RequestPermissionOutcome::Selected(selected) => Some(selected.option_id.0.to_string()),
                    _ => None,
                };
                let why = match option {
                    Some(_) => "rejected in the editor",
                    None => "the editor withdrew the question",
                };
                (translate::answer(option.as_deref()), why)
            }
            Err(e) => {
                tracing::warn!("session {}: the permission request failed: {e}", self.id);
                (bridle_protocol::ApprovalAnswer::Deny, "the editor did not answer")
            }
        };
        let (answer, why) = answer;
        self.answer(&request, answer, why).await;
    }

    /// Denies `request` without a prompt: the editor has [`PENDING_QUESTIONS`] open already.
    async fn refuse(self: Arc<Self>, request: ApprovalRequest) {
        let why = format!(
            "not asked: {PENDING_QUESTIONS} permission prompts are already open in the editor, the most one session may"
        );
        self.answer(&request, bridle_protocol::ApprovalAnswer::Deny, &why).await;
    }

    /// Tells the engine the answer to `request` (with `why` when it is a deny).
    async fn answer(&self, request: &ApprovalRequest, answer: bridle_protocol::ApprovalAnswer, why: &str) {
        let feedback = (answer == bridle_protocol::ApprovalAnswer::Deny).then(|| why.to_string());
        let op = Op::ResolveApproval {
            approval_id: request.id.clone(),
            decision: answer,
            feedback,
            edited_arguments: None,
            call_hash: Some(request.call_hash.clone()),
        };
        let _ = self.engine.submit(op).await;
    }
}

/// A changed file's two sides, or `None` when they cannot be shown whole (too large, not text, or
/// changed again since).
fn changed_file(fs: &bridle_core::fs::WorkspaceFs, path: String, diff: &str) -> Option<Changed> {
    let after = match fs.read_at_most(std::path::Path::new(&path), DIFF_TEXT_LIMIT) {
        Ok(Some(bytes)) => Some(String::from_utf8(bytes).ok()?),
        Ok(None) => None,
        Err(_) => return None,
    };
    let created = diff.starts_with("--- /dev/null");
    let before = bridle_core::changes::text_before(after.as_deref(), diff);
    if before.is_none() && !created {
        return None;
    }
    Some(Changed { path, before, after })
}

/// Asks the editor about `request`, or refuses it unasked when [`PENDING_QUESTIONS`] prompts
/// (`prompted`) are open already.
fn ask_or_refuse(s: &Arc<AcpSession>, request: ApprovalRequest, prompted: &mut HashSet<String>) {
    if prompted.len() < PENDING_QUESTIONS {
        prompted.insert(request.id.clone());
        tokio::spawn(s.clone().ask(request));
    } else {
        tokio::spawn(s.clone().refuse(request));
    }
}

/// Forwards a session's events to its client until the engine stops (or the session is gone).
async fn pump(session: std::sync::Weak<AcpSession>, mut events: mpsc::Receiver<Event>) {
    // The diffs of each call's changed files, told before its end.
    let mut diffs: HashMap<String, Vec<(String, String)>> = HashMap::new();
    let fs = session.upgrade().and_then(|s| bridle_core::fs::WorkspaceFs::open(&s.root).ok());
    let mut last_error: Option<String> = None;
    // Approval ids to the calls they are for: an approved call is then running.
    let mut asked: HashMap<String, String> = HashMap::new();
    // The requests prompted for in the editor and not yet settled (by the editor, the approval
    // timeout or a cancel).
    let mut prompted: HashSet<String> = HashSet::new();
    while let Some(event) = events.recv().await {
        let Some(s) = session.upgrade() else { return };
        // A child's events (DESIGN §16.1): its questions are asked in the editor like the
        // session's own; the rest shows as the progress of its `spawn_agent` call.
        if event.session_id() != s.id {
            if let Event::ApprovalRequested { request, .. } = event {
                ask_or_refuse(&s, request, &mut prompted);
            } else if let Event::ApprovalResolved { approval_id, .. } = event {
                prompted.remove(&approval_id);
            }
            continue;
        }
        match event {
            Event::AgentUpdated { agent, .. } => s.send(translate::agent_progress(&agent)),
            Event::AssistantDelta { text, .. } => s.send(translate::agent_text(&text)),
            Event::ToolCallBegin { call, .. } => s.announce(&call),
            Event::FileChanged { call_id, path, diff, .. } => diffs.entry(call_id).or_default().push((path, diff)),
            Event::ApprovalRequested { request, .. } => {
                asked.insert(request.id.clone(), request.call_id.clone());
                ask_or_refuse(&s, request, &mut prompted);
            }
            Event::ApprovalResolved { approval_id, decision, .. } => {
                prompted.remove(&approval_id);
                let call = asked.remove(&approval_id);
                if let Some(call) = call.filter(|_| decision != bridle_protocol::ApprovalAnswer::Deny) {
                    s.send(translate::in_progress(&call));
                }
            }
            Event::ToolCallEnd { status, result, .. } => {
                let changed = diffs.remove(&result.tool_call_id).unwrap_or_default();
                let files: Vec<Changed> =
                    changed.into_iter().filter_map(|(path, diff)| changed_file(fs.as_ref()?, path, &diff)).collect();
                s.send(translate::tool_end(&result, status, &files, &s.root));
            }
            Event::PlanUpdated { items, .. } => s.send(translate::plan(&items)),
            Event::ModeChanged { mode, .. } => s.send(translate::current_mode(mode)),
            Event::Error { info, .. } => last_error = Some(info.message),
            // A built-in slash command ran instead of a turn: what it says is the answer.
            Event::CommandDone { output, ok, .. } => {
                s.send(translate::agent_text(&output));
                s.finish_turn(if ok { Ok(translate::stop_reason(None)) } else { Err(output) });
            }
            Event::TurnCompleted { .. } => s.finish_turn(Ok(translate::stop_reason(None))),
            Event::TurnAborted { reason, .. } => match (reason, last_error.take()) {
                (bridle_protocol::AbortReason::Error, Some(message)) => s.finish_turn(Err(message)),
                (reason, _) => s.finish_turn(Ok(translate::stop_reason(Some(reason)))),
            },
            _ => {}
        }
    }
    if let Some(s) = session.upgrade() {
        s.finish_turn(Err("the session's engine stopped".into()));
    }
}
