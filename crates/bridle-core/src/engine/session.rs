//! One session's shared state: history, usage, and the ways a turn records and reports.

use std::sync::Arc;

use bridle_protocol::{ErrorInfo, Event, HistoryItem};
use tokio::sync::{mpsc, Mutex};
use tokio_util::sync::CancellationToken;

use super::{EngineConfig, EngineDeps};
use crate::pipeline::CallPipeline;
use crate::provider::ModelRequest;
use crate::tools::{ToolContext, UsageMeter, UsageSnapshot};

pub(crate) struct Session {
    pub id: String,
    pub config: EngineConfig,
    pub deps: EngineDeps,
    pub pipeline: CallPipeline,
    pub usage: UsageMeter,
    history: Mutex<Vec<HistoryItem>>,
    events: mpsc::Sender<Event>,
}

impl Session {
    pub(crate) fn new(
        id: String,
        config: EngineConfig,
        deps: EngineDeps,
        pipeline: CallPipeline,
        history: Vec<HistoryItem>,
        events: mpsc::Sender<Event>,
    ) -> Self {
        let usage = Arc::new(std::sync::Mutex::new(UsageSnapshot {
            context_window: config.context_window,
            ..UsageSnapshot::default()
        }));
        Self { id, config, deps, pipeline, usage, history: Mutex::new(history), events }
    }

    /// Sends an event; a consumer that went away is not an error of the session.
    pub(crate) async fn emit(&self, event: Event) {
        let _ = self.events.send(event).await;
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

    pub(crate) async fn error(&self, code: &str, message: String, retryable: bool) {
        self.emit(Event::Error {
            session_id: self.id.clone(),
            info: ErrorInfo { code: code.into(), message, retryable },
        })
        .await;
    }

    /// The next model request: system prompt, the whole history, tools sorted by name.
    pub(crate) async fn request(&self) -> ModelRequest {
        ModelRequest {
            system: self.config.system_prompt.clone(),
            history: self.history.lock().await.clone(),
            tools: self.pipeline.registry().definitions(),
        }
    }

    pub(crate) fn tool_context(&self, call_id: &str, cancel: CancellationToken) -> ToolContext {
        ToolContext {
            usage: self.usage.clone(),
            cancel,
            ..ToolContext::new(
                self.id.clone(),
                call_id,
                self.pipeline.workspace().clone(),
                self.config.data_dir.clone(),
                self.deps.clock.clone(),
                self.config.limits.tool_timeout(),
            )
        }
    }
}
