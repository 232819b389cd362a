//! The engine: a queue pair around one session.
//!
//! [`Engine::submit`] takes [`Op`]s; the receiver returned by [`Engine::spawn`] yields
//! [`Event`]s in order. One spawned loop owns the session: it starts a turn per user message
//! (queueing messages that arrive while a turn runs), gives each turn its own cancellation
//! token, and interrupts by cancelling it. Rules kept here: every tool call in the history has
//! a result before the next model request; failures reach the model as tool results or the
//! user as `Error` events, never as a panic; the session is persisted as it goes.

mod dispatch;
mod loop_guard;
mod prompt;
mod session;
mod step;
mod turn;

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Arc;

use bridle_protocol::{ErrorInfo, Event, Mode, Op};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::clock::Clock;
use crate::config::{Config, Limits};
use crate::guard::Guard;
use crate::pipeline::CallPipeline;
use crate::provider::{ModelProvider, RetryPolicy};
use crate::store::{Store, StoreError};
use crate::tools::ToolRegistry;
use crate::workspace::Workspace;

pub use prompt::DEFAULT_SYSTEM_PROMPT;
use session::Session;

/// How a session behaves.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// The workspace root.
    pub workspace: PathBuf,
    /// Bridle's data directory (tool outputs, blobs).
    pub data_dir: PathBuf,
    /// Approval mode.
    pub mode: Mode,
    /// Turn limits.
    pub limits: Limits,
    /// Provider retry policy.
    pub retry: RetryPolicy,
    /// The system prompt.
    pub system_prompt: String,
    /// The model's context window, when known.
    pub context_window: Option<u64>,
    /// The user's home folder, for `~` in paths (passed in: the core reads no environment).
    pub home: Option<PathBuf>,
    /// Paths the user protects beyond the built-in list.
    pub extra_sensitive: Vec<PathBuf>,
}

impl Default for EngineConfig {
    fn default() -> Self {
        Self {
            workspace: PathBuf::from("."),
            data_dir: PathBuf::from("."),
            mode: Mode::default(),
            limits: Limits::default(),
            retry: RetryPolicy::default(),
            system_prompt: DEFAULT_SYSTEM_PROMPT.to_string(),
            context_window: None,
            home: None,
            extra_sensitive: Vec::new(),
        }
    }
}

impl EngineConfig {
    /// The engine settings of a user config, for `workspace` and `data_dir`.
    pub fn from_config(config: &Config, workspace: PathBuf, data_dir: PathBuf) -> Self {
        Self {
            workspace,
            data_dir,
            mode: config.mode,
            limits: config.limits.clone(),
            retry: RetryPolicy { max_retries: config.limits.max_retries, ..RetryPolicy::default() },
            system_prompt: config.system_prompt.clone().unwrap_or_else(|| DEFAULT_SYSTEM_PROMPT.to_string()),
            context_window: config.provider.as_ref().and_then(|p| p.context_window),
            home: None,
            extra_sensitive: config.sensitive_paths.clone(),
        }
    }
}

/// What the engine needs from outside: passed in, never global.
#[derive(Clone)]
pub struct EngineDeps {
    /// The model.
    pub provider: Arc<dyn ModelProvider>,
    /// The tools offered.
    pub tools: Arc<ToolRegistry>,
    /// The conversation store.
    pub store: Arc<Store>,
    /// The clock.
    pub clock: Arc<dyn Clock>,
}

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
}

/// The submitting half of the queue pair.
#[derive(Clone)]
pub struct Engine {
    ops: mpsc::Sender<Op>,
    session_id: String,
}

impl Engine {
    /// Starts the session's loop on the current tokio runtime.
    pub fn spawn(
        config: EngineConfig,
        deps: EngineDeps,
        spec: SessionSpec,
    ) -> Result<(Engine, mpsc::Receiver<Event>), EngineError> {
        let now = deps.clock.now_ms();
        let (session_id, history) = match spec {
            SessionSpec::New => {
                let id = new_id();
                deps.store.create_session(&id, &config.workspace.display().to_string(), now)?;
                (id, Vec::new())
            }
            SessionSpec::Resume(id) => {
                let history = deps.store.history(&id, now)?;
                (id, history)
            }
        };
        let workspace =
            Workspace::open(&config.workspace, config.home.clone(), &config.data_dir, &config.extra_sensitive)
                .map_err(|source| EngineError::Workspace { path: config.workspace.display().to_string(), source })?;
        let (event_tx, event_rx) = mpsc::channel(1024);
        let (op_tx, op_rx) = mpsc::channel(64);
        let guard = Arc::new(Guard::new(config.mode));
        let pipeline = CallPipeline::new(deps.tools.clone(), guard, Arc::new(workspace), config.limits.tool_timeout());
        let session = Arc::new(Session::new(session_id.clone(), config, deps, pipeline, history, event_tx));
        tokio::spawn(run_loop(session, op_rx));
        Ok((Engine { ops: op_tx, session_id }, event_rx))
    }

    /// Queues an op.
    pub async fn submit(&self, op: Op) -> Result<(), EngineError> {
        self.ops.send(op).await.map_err(|_| EngineError::Closed)
    }

    /// The session's id.
    pub fn session_id(&self) -> &str {
        &self.session_id
    }
}

/// A fresh id (UUID v4) for sessions, turns and calls.
pub fn new_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

struct RunningTurn {
    handle: JoinHandle<()>,
    cancel: CancellationToken,
}

fn start_turn(session: &Arc<Session>, text: String) -> RunningTurn {
    let cancel = CancellationToken::new();
    let handle = tokio::spawn(turn::run_turn(session.clone(), text, cancel.clone()));
    RunningTurn { handle, cancel }
}

async fn finished(running: &mut Option<RunningTurn>) {
    match running {
        Some(turn) => {
            // A panicking turn must not take the session down; its history is already stored.
            if let Err(e) = (&mut turn.handle).await {
                tracing::error!("turn task failed: {e}");
            }
        }
        None => std::future::pending().await,
    }
}

/// Owns the session: turns one at a time, interrupts, and the ops later versions handle.
/// Ends when every `Engine` handle is dropped and the last turn has finished.
async fn run_loop(session: Arc<Session>, mut ops: mpsc::Receiver<Op>) {
    let mut queue: VecDeque<String> = VecDeque::new();
    let mut running: Option<RunningTurn> = None;
    let mut open = true;
    loop {
        tokio::select! {
            op = ops.recv(), if open => match op {
                None => open = false,
                Some(Op::UserMessage { text }) => match running {
                    Some(_) => queue.push_back(text),
                    None => running = Some(start_turn(&session, text)),
                },
                Some(Op::Interrupt) => {
                    if let Some(turn) = &running {
                        turn.cancel.cancel();
                    }
                }
                Some(op @ (Op::ResolveApproval { .. } | Op::Compact | Op::Undo { .. })) => {
                    let what = match op {
                        Op::ResolveApproval { .. } => "approvals",
                        Op::Compact => "compaction",
                        _ => "undo",
                    };
                    session
                        .emit(Event::Error {
                            session_id: session.id.clone(),
                            info: ErrorInfo {
                                code: "unsupported_op".into(),
                                message: format!("{what} is not available in this version of Bridle"),
                                retryable: false,
                            },
                        })
                        .await;
                }
            },
            _ = finished(&mut running) => {
                running = queue.pop_front().map(|text| start_turn(&session, text));
            }
        }
        if !open && running.is_none() {
            return;
        }
    }
}
