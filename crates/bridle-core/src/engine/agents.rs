//! A session's children (DESIGN §16.1): starting one for a `spawn_agent` call, following its
//! events, waiting for it, steering it, ending it, and opening it again with its parent.
//!
//! A child is a session of its own — its engine, history, approvals, audit rows and lease —
//! started from its parent's settings: the same workspace, kernel sandbox, network policy, rules
//! and grants, a mode never looser than the parent's, and the parent's tools or fewer. Its
//! events go on in the parent's stream (naming the child), so every front end that follows the
//! parent shows the child and its questions, and the parent's front end answers them.
//!
//! Rules: a child is refused at once past `[agents] max_children` or `max_depth`; a child's
//! crash fails only its own result; an interrupt or the parent's end ends every child and its
//! processes; a question nobody answers expires visibly (the parent's `wait_agent` says so);
//! the tokens a child spends count in its parent's totals.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};
use std::time::Duration;

use async_trait::async_trait;
use bridle_protocol::{
    AbortReason, AgentInfo, AgentState, ApprovalSubject, DecisionSource, Event, Mode, Op, TokenUsage,
};
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use super::session::Session;
use super::{Engine, EngineConfig, EngineDeps, SessionSpec};
use crate::config::Role;
use crate::provider::ModelProvider;
use crate::tools::{ToolError, AGENT_TOOLS};

/// What a child session knows of its parent.
#[derive(Debug, Clone)]
pub struct AgentOrigin {
    /// The child as its parent started it (parent, turn and call ids, task, role, model).
    pub info: AgentInfo,
    /// How deep it is: 1 for a child of a top session.
    pub depth: u32,
    /// It talks to its parent's model, whose context window the parent has already asked the
    /// server for: it starts with that one instead of asking again.
    pub parents_window: bool,
}

/// What a child is told before its task.
const CHILD_BRIEF: &str = "You are an agent another agent session started to do one task. Work on the task \
     you are given; you do not see the conversation that started you. Your last message is your answer: \
     make it complete and self-contained.";

/// The children of one session.
pub(crate) struct Children {
    parent: OnceLock<Weak<Session>>,
    live: Mutex<BTreeMap<String, Child>>,
    /// Bumped whenever a child changes; `wait_agent` watches it.
    changed: watch::Sender<u64>,
}

struct Child {
    /// Its engine while it is open (none once closed or failed to start).
    engine: Option<Engine>,
    info: AgentInfo,
    /// Its questions waiting, by request id: what each asks, in a few words.
    asking: HashMap<String, String>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Default for Children {
    fn default() -> Self {
        Self { parent: OnceLock::new(), live: Mutex::default(), changed: watch::channel(0).0 }
    }
}

/// The stricter of two modes (`Mode::ALL` runs strictest first).
pub(crate) fn stricter(a: Mode, b: Mode) -> Mode {
    let rank = |m: Mode| Mode::ALL.iter().position(|x| *x == m).unwrap_or(0);
    if rank(b) < rank(a) {
        b
    } else {
        a
    }
}

impl Children {
    /// Ties these children to their session (once, right after it is made).
    pub(crate) fn attach(&self, parent: &Arc<Session>) {
        let _ = self.parent.set(Arc::downgrade(parent));
    }

    fn parent(&self) -> Result<Arc<Session>, ToolError> {
        self.parent.get().and_then(Weak::upgrade).ok_or_else(|| ToolError::new("the session is closing"))
    }

    fn touch(&self) {
        self.changed.send_modify(|n| *n += 1);
    }

    /// The live child that asked request `approval_id`, if one did.
    pub(crate) fn asker(&self, approval_id: &str) -> Option<Engine> {
        lock(&self.live).values().find(|c| c.asking.contains_key(approval_id)).and_then(|c| c.engine.clone())
    }

    /// The child of this session (live or not) whose request `approval_id` is, from the store.
    pub(crate) fn owner(&self, approval_id: &str, store: &crate::store::Store) -> Option<String> {
        let parent = self.parent.get().and_then(Weak::upgrade)?;
        let stored = store.approval(approval_id).ok().flatten()?;
        let asker = store.session(&stored.request.session_id).ok()?;
        asker.agent.filter(|a| a.parent_id == parent.id).map(|_| asker.id)
    }

    /// The engine of live child `id`.
    pub(crate) fn engine(&self, id: &str) -> Option<Engine> {
        lock(&self.live).get(id).and_then(|c| c.engine.clone())
    }

    /// Every child this session knows now.
    pub(crate) fn list(&self) -> Vec<AgentInfo> {
        lock(&self.live).values().map(|c| c.info.clone()).collect()
    }

    /// Ends every child (an interrupt, or the parent's end), each within its shutdown: its turn
    /// interrupted, its processes stopped. A child whose engine has already ended but which is
    /// not yet recorded as closed is closed too: an interrupt's close may still be on its way
    /// when the parent ends (and the process with it).
    pub(crate) async fn close_all(&self) {
        let open: Vec<(String, Option<Engine>)> = lock(&self.live)
            .iter()
            .filter(|(_, c)| c.engine.is_some() || !matches!(c.info.state, AgentState::Closed | AgentState::Failed))
            .map(|(id, c)| (id.clone(), c.engine.clone()))
            .collect();
        futures::future::join_all(open.iter().filter_map(|(_, e)| e.as_ref()).map(Engine::shutdown)).await;
        for (id, _) in open {
            self.closed(&id).await;
        }
    }

    /// A mode change of the parent reaches its children: none stays looser than the parent.
    pub(crate) async fn narrow_to(&self, mode: Mode) {
        let engines: Vec<Engine> = lock(&self.live).values().filter_map(|c| c.engine.clone()).collect();
        for engine in engines {
            if stricter(engine.mode(), mode) != engine.mode() {
                let _ = engine.submit(Op::SetMode { mode }).await;
            }
        }
    }

    /// Records `id` as closed (unless it had already failed) and tells the parent.
    async fn closed(&self, id: &str) {
        // Held before the mark: a close that sees it moves on (and may end the parent).
        let _parent = self.parent().ok();
        let info = {
            let mut live = lock(&self.live);
            let Some(child) = live.get_mut(id) else { return };
            if child.info.state == AgentState::Closed {
                return; // closed by another close (an interrupt's, then the parent's end)
            }
            child.engine = None;
            child.asking.clear();
            if child.info.state != AgentState::Failed {
                child.info.state = AgentState::Closed;
            }
            child.info.clone()
        };
        self.changed_to(info).await;
    }

    /// Stores child `info.id` as it is now, tells the parent's stream and wakes the waits.
    async fn changed_to(&self, info: AgentInfo) {
        if let Ok(parent) = self.parent() {
            // The child as it is when written (under the lock: the last write is the newest), not
            // `info`: a change made before the parent was told (a child's last event) may be
            // written after its close, and must not undo it.
            let info = {
                let live = lock(&self.live);
                let now = live.get(&info.id).map_or(info, |c| c.info.clone());
                if let Err(e) = parent.deps.store.set_agent(&now) {
                    tracing::warn!("agent {}: its record was not stored: {e}", now.id);
                }
                now
            };
            parent.emit(Event::AgentUpdated { session_id: parent.id.clone(), agent: info }).await;
        }
        self.touch();
    }

    /// The settings and dependencies a child of `parent` starts with, given as `role` and
    /// talking through `provider`.
    fn setup(
        parent: &Session,
        info: &AgentInfo,
        role: Option<&Role>,
        provider: Arc<dyn ModelProvider>,
        depth: u32,
    ) -> (EngineConfig, EngineDeps) {
        let limits = &parent.config.agents;
        let calls = parent.calls();
        let mode = stricter(calls.permit().mode(), role.and_then(|r| r.mode).unwrap_or(Mode::Bypass));
        // The parent's tools as offered now (its MCP servers' included), or the role's share of
        // them; no agent tools past the depth limit.
        let registry = calls.registry();
        let deepest = depth >= limits.max_depth;
        let mut allowed: Vec<String> = registry
            .names()
            .into_iter()
            .filter(|name| role.and_then(|r| r.tools.as_ref()).is_none_or(|tools| tools.iter().any(|t| t == name)))
            .filter(|name| !(deepest && AGENT_TOOLS.contains(name)))
            .map(str::to_string)
            .collect();
        allowed.sort();
        let mut why = Vec::new();
        if let (Some(name), Some(_)) = (&info.role, role.and_then(|r| r.tools.as_ref())) {
            why.push(format!("the role `{name}` allows only these"));
        }
        if deepest {
            why.push(format!(
                "an agent at depth {depth} cannot start agents (`[agents] max_depth = {}`)",
                limits.max_depth
            ));
        }
        let tools =
            if why.is_empty() { registry.as_ref().clone() } else { registry.narrowed(&allowed, &why.join("; ")) };
        let same_model = provider.model() == parent.deps.provider.model();
        let mut config = parent.config.clone();
        config.mode = mode;
        config.defer_approvals = false;
        config.agent = Some(AgentOrigin { info: info.clone(), depth, parents_window: same_model });
        if same_model {
            config.context_window = parent.context_window().or(config.context_window);
        }
        config.system_prompt = match role.map(|r| r.instructions.trim()).filter(|i| !i.is_empty()) {
            Some(instructions) => format!("{}\n\n{CHILD_BRIEF}\n\n{instructions}", config.system_prompt),
            None => format!("{}\n\n{CHILD_BRIEF}", config.system_prompt),
        };
        let deps = EngineDeps { provider, tools: Arc::new(tools), mcp: None, ..parent.deps.clone() };
        (config, deps)
    }

    /// Starts child `info` (new or resumed), given as `role` and talking through `provider`, and
    /// follows its events.
    fn open(
        self: &Arc<Self>,
        parent: &Session,
        info: AgentInfo,
        role: Option<&Role>,
        provider: Arc<dyn ModelProvider>,
        spec: SessionSpec,
    ) -> Result<Engine, ToolError> {
        let depth = parent.config.agent.as_ref().map_or(0, |o| o.depth) + 1;
        let (config, deps) = Self::setup(parent, &info, role, provider, depth);
        let (engine, events) =
            Engine::spawn(config, deps, spec).map_err(|e| ToolError::new(format!("the agent could not start: {e}")))?;
        lock(&self.live).insert(
            info.id.clone(),
            Child { engine: Some(engine.clone()), info: info.clone(), asking: HashMap::new() },
        );
        tokio::spawn(follow(self.clone(), info.id.clone(), events));
        Ok(engine)
    }

    /// Opens again the children a parent left waiting or idle when its process ended; one that
    /// was mid-turn then is recorded as failed (its turn died with the process).
    pub(crate) async fn resume(self: &Arc<Self>, parent: &Session) {
        let stored = match parent.deps.store.agents(&parent.id) {
            Ok(stored) => stored,
            Err(e) => return tracing::warn!("session {}: its agents were not read: {e}", parent.id),
        };
        let (roles, _) = super::roles::roles_in(&parent.config.agents, &parent.config.workspace);
        for mut info in stored {
            let failed = match info.state {
                AgentState::NeedsYou | AgentState::Idle => {
                    let opened = role_of(&roles, info.role.as_deref()).and_then(|role| {
                        let provider = provider_for(parent, info.model.as_deref())?;
                        self.open(parent, info.clone(), role, provider, SessionSpec::Resume(info.id.clone()))
                    });
                    opened.err().map(|e| e.to_string())
                }
                AgentState::Working => Some("the process running it ended mid-turn".to_string()),
                AgentState::Failed | AgentState::Closed => {
                    lock(&self.live).insert(info.id.clone(), Child { engine: None, info, asking: HashMap::new() });
                    continue;
                }
            };
            if let Some(why) = failed {
                info.state = AgentState::Failed;
                info.error = Some(why);
                lock(&self.live)
                    .insert(info.id.clone(), Child { engine: None, info: info.clone(), asking: HashMap::new() });
                self.changed_to(info).await;
            }
        }
    }

    /// A new session in a worktree of the parent's main checkout, for a child whose role asks
    /// for isolation; answers its id.
    async fn worktree_for(&self, parent: &Session, now: i64) -> Result<String, ToolError> {
        let origin =
            parent.config.worktree.as_ref().map_or_else(|| parent.config.workspace.clone(), |w| w.origin.clone());
        let (store, audit, data_dir) =
            (parent.deps.store.clone(), parent.deps.audit.clone(), parent.config.data_dir.clone());
        let made = tokio::task::spawn_blocking(move || {
            crate::desk::new_session(&store, &audit, &data_dir, &origin, None, None, now).map(|(id, _)| id)
        })
        .await;
        match made {
            Ok(Ok(id)) => Ok(id),
            Ok(Err(e)) => Err(ToolError::new(format!("the agent's worktree could not be made: {e}"))),
            Err(e) => Err(ToolError::new(format!("the agent's worktree could not be made: {e}"))),
        }
    }

    /// What child `id`'s event changes of it, if anything.
    fn observe(&self, id: &str, event: &Event) -> Option<AgentInfo> {
        let mut live = lock(&self.live);
        let child = live.get_mut(id)?;
        let before = child.info.clone();
        let info = &mut child.info;
        match event {
            Event::TurnStarted { .. } => {
                info.state = AgentState::Working;
                info.error = None;
            }
            Event::AssistantMessage { text, .. } if !text.trim().is_empty() => info.last_message = Some(text.clone()),
            Event::ApprovalRequested { request, .. } => {
                child.asking.insert(request.id.clone(), asked(request));
                info.state = AgentState::NeedsYou;
            }
            Event::TurnSuspended { .. } => info.state = AgentState::NeedsYou,
            Event::ApprovalResolved { approval_id, source, .. } => {
                let question = child.asking.remove(approval_id);
                if *source == DecisionSource::Timeout {
                    info.expired.push(question.unwrap_or_else(|| approval_id.clone()));
                }
                if child.asking.is_empty() && info.state == AgentState::NeedsYou {
                    info.state = AgentState::Working;
                }
            }
            Event::TokenUsage { usage, .. } => info.usage.add(usage),
            // The last error said; a turn that ends well clears it.
            Event::Error { info: error, .. } => info.error = Some(error.message.clone()),
            Event::TurnCompleted { .. } => {
                info.state = AgentState::Idle;
                info.error = None;
            }
            Event::TurnAborted { reason, .. } => {
                // Interrupted (from its own view, say) it waits for more, like a finished turn.
                info.state = match reason {
                    AbortReason::Interrupted => AgentState::Idle,
                    _ => AgentState::Failed,
                };
                if info.state == AgentState::Failed && info.error.is_none() {
                    info.error = Some(format!("its turn ended early ({reason:?})"));
                }
            }
            _ => {}
        }
        // Closed is final: the end of the turn its close interrupted may come after it.
        if before.state == AgentState::Closed {
            info.state = AgentState::Closed;
        }
        // Usage alone is told with the parent's own usage event.
        let told = |i: &AgentInfo| (i.state, i.last_message.clone(), i.error.clone(), i.expired.len());
        (told(info) != told(&before)).then(|| info.clone())
    }

    /// Child `id`'s event stream ended: its engine is gone.
    async fn ended(&self, id: &str) {
        let info = {
            let mut live = lock(&self.live);
            let Some(child) = live.get_mut(id) else { return };
            child.engine = None;
            if child.info.state.settled() {
                None
            } else {
                child.info.state = AgentState::Failed;
                child.info.error.get_or_insert_with(|| "its session ended unexpectedly".into());
                Some(child.info.clone())
            }
        };
        match info {
            Some(info) => self.changed_to(info).await,
            None => self.touch(),
        }
    }
}

/// Role `name` of `roles`, or why there is none by that name.
fn role_of<'a>(roles: &'a BTreeMap<String, Role>, name: Option<&str>) -> Result<Option<&'a Role>, ToolError> {
    let Some(name) = name else { return Ok(None) };
    roles.get(name).map(Some).ok_or_else(|| {
        let known: Vec<&str> = roles.keys().map(String::as_str).collect();
        ToolError::new(format!(
            "no role `{name}` (roles: {}); configure one in [agents.roles.NAME] or .agents/roles/NAME.md",
            if known.is_empty() { "none".to_string() } else { known.join(", ") }
        ))
    })
}

/// The parent's provider, or the same server and key asking `model` when it names another.
fn provider_for(parent: &Session, model: Option<&str>) -> Result<Arc<dyn ModelProvider>, ToolError> {
    match model {
        Some(model) if model != parent.deps.provider.model() => parent
            .deps
            .provider
            .with_model(model)
            .ok_or_else(|| ToolError::new(format!("this session's provider cannot switch to the model `{model}`"))),
        _ => Ok(parent.deps.provider.clone()),
    }
}

/// What a request asks, in a few words, for the parent's `wait_agent`.
fn asked(request: &bridle_protocol::ApprovalRequest) -> String {
    match &request.subject {
        ApprovalSubject::Call { tool, .. } => {
            let preview = request.preview.as_deref().map(crate::tools::quoted).unwrap_or_default();
            format!("`{tool}` {preview}").trim_end().to_string()
        }
        ApprovalSubject::Host { host, port, .. } => format!("a connection to {host}:{port}"),
        ApprovalSubject::Changes { .. } => "a command's held changes".to_string(),
    }
}

/// Follows child `id`'s events: each goes on in the parent's stream, its usage counts in the
/// parent's, and a change of the child is told as [`Event::AgentUpdated`].
async fn follow(children: Arc<Children>, id: String, mut events: mpsc::Receiver<Event>) {
    while let Some(event) = events.recv().await {
        let update = children.observe(&id, &event);
        let Ok(parent) = children.parent() else { continue };
        if let Event::TokenUsage { usage, .. } = &event {
            let turn = lock(&children.live).get(&id).map(|c| c.info.turn_id.clone()).unwrap_or_default();
            parent.add_child_usage(&turn, usage).await;
        }
        parent.emit(event).await;
        drop(parent);
        if let Some(info) = update {
            children.changed_to(info).await;
        }
    }
    children.ended(&id).await;
}

#[async_trait]
impl crate::tools::Agents for Arc<Children> {
    async fn spawn(
        &self,
        (turn_id, call_id): (&str, &str),
        task: &str,
        role: Option<&str>,
        model: Option<&str>,
    ) -> Result<AgentInfo, ToolError> {
        let parent = self.parent()?;
        let limits = &parent.config.agents;
        let depth = parent.config.agent.as_ref().map_or(0, |o| o.depth);
        if depth >= limits.max_depth {
            return Err(ToolError::new(format!(
                "refused: this session is an agent at depth {depth} and `[agents] max_depth = {}` lets it start none",
                limits.max_depth
            )));
        }
        let open =
            lock(&self.live).values().filter(|c| !c.info.state.settled() || c.info.state == AgentState::Idle).count();
        if open >= limits.max_children {
            return Err(ToolError::new(format!(
                "refused: this session already has {open} agents open (`[agents] max_children = {}`); \
                 wait for one and end it with close_agent before starting another",
                limits.max_children
            )));
        }
        // Both checked before the child's row exists: a refused role or model leaves nothing
        // behind.
        let (roles, _) = super::roles::roles_in(limits, &parent.config.workspace);
        let given = role_of(&roles, role)?;
        let provider = provider_for(&parent, model.or_else(|| given.and_then(|r| r.model.as_deref())))?;
        let isolated = given.and_then(|r| r.isolation) == Some(crate::config::Isolation::Worktree);
        let mut info = AgentInfo {
            id: super::new_id(),
            parent_id: parent.id.clone(),
            turn_id: turn_id.to_string(),
            call_id: call_id.to_string(),
            task: task.to_string(),
            role: role.map(str::to_string),
            model: Some(provider.model().to_string()).filter(|m| !m.is_empty()),
            state: AgentState::Working,
            last_message: None,
            error: None,
            expired: Vec::new(),
            usage: TokenUsage::default(),
        };
        let store = &parent.deps.store;
        let now = parent.deps.clock.now_ms();
        let made = if isolated {
            // Its own worktree of the main checkout (DESIGN §16): its session row comes with it.
            info.id = self.worktree_for(&parent, now).await?;
            Ok(())
        } else {
            store.create_session(&info.id, &parent.config.workspace.display().to_string(), now)
        };
        let recorded = made
            .and_then(|()| store.set_agent(&info))
            // What the parent's person approved for the session holds for the child too.
            .and_then(|()| store.grants_with_prefix(&parent.id, ""))
            .and_then(|keys| keys.iter().try_for_each(|key| store.add_grant(&info.id, key, now)));
        recorded.map_err(|e| ToolError::new(format!("the agent's session could not be stored: {e}")))?;
        let engine = self.open(&parent, info.clone(), given, provider, SessionSpec::Resume(info.id.clone()))?;
        engine
            .submit(Op::UserMessage { text: task.to_string() })
            .await
            .map_err(|e| ToolError::new(format!("the agent did not take its task: {e}")))?;
        self.changed_to(info.clone()).await;
        Ok(info)
    }

    async fn wait(
        &self,
        ids: &[String],
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> Result<Vec<AgentInfo>, ToolError> {
        let mut changes = self.changed.subscribe();
        let ids: Vec<String> = match ids {
            [] => lock(&self.live)
                .iter()
                .filter(|(_, c)| c.info.state != AgentState::Closed)
                .map(|(id, _)| id.clone())
                .collect(),
            ids => ids.to_vec(),
        };
        if ids.is_empty() {
            return Err(ToolError::new("this session has no agent to wait for"));
        }
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let now: Vec<AgentInfo> = {
                let live = lock(&self.live);
                ids.iter()
                    .map(|id| {
                        live.get(id)
                            .map(|c| c.info.clone())
                            .ok_or_else(|| ToolError::new(format!("no agent `{id}` in this session")))
                    })
                    .collect::<Result<_, _>>()?
            };
            if now.iter().all(|a| a.state.settled()) {
                return Ok(now);
            }
            tokio::select! {
                changed = changes.changed() => if changed.is_err() { return Ok(now) },
                () = tokio::time::sleep_until(deadline) => return Ok(now),
                () = cancel.cancelled() => return Err(ToolError::new("the wait was interrupted")),
            }
        }
    }

    async fn send(&self, id: &str, message: &str) -> Result<AgentInfo, ToolError> {
        let (engine, info) = {
            let live = lock(&self.live);
            let child = live.get(id).ok_or_else(|| ToolError::new(format!("no agent `{id}` in this session")))?;
            match (&child.engine, child.info.state) {
                (Some(engine), AgentState::Idle | AgentState::Failed) => (engine.clone(), child.info.clone()),
                (Some(_), state) => {
                    return Err(ToolError::new(format!("agent `{id}` is {}; wait_agent for it first", state.as_str())))
                }
                (None, state) => {
                    return Err(ToolError::new(format!(
                        "agent `{id}` is {}: it takes no more messages",
                        state.as_str()
                    )))
                }
            }
        };
        engine
            .submit(Op::UserMessage { text: message.to_string() })
            .await
            .map_err(|_| ToolError::new(format!("agent `{id}` has stopped")))?;
        let info = AgentInfo { state: AgentState::Working, error: None, ..info };
        if let Some(child) = lock(&self.live).get_mut(id) {
            child.info.state = AgentState::Working;
        }
        self.changed_to(info.clone()).await;
        Ok(info)
    }

    async fn close(&self, id: &str) -> Result<AgentInfo, ToolError> {
        let engine = {
            let live = lock(&self.live);
            let child = live.get(id).ok_or_else(|| ToolError::new(format!("no agent `{id}` in this session")))?;
            child.engine.clone()
        };
        if let Some(engine) = engine {
            engine.shutdown().await;
        }
        self.closed(id).await;
        lock(&self.live).get(id).map(|c| c.info.clone()).ok_or_else(|| ToolError::new(format!("no agent `{id}`")))
    }
}

#[cfg(test)]
#[path = "agents_tests.rs"]
mod tests;
