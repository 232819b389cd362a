//! History: the conversation a session holds — its items, Bridle's notes waiting for a batch's
//! results, the view the model sees after compactions, and what the session learnt of its token
//! counts — and the session's ways of adding to it and compacting it.
//!
//! Rules: an item is stored before it is kept (a store that fails is reported once and the
//! conversation goes on in memory); a call's result is stored the moment the call ends, and the
//! batch joins the history in call order; a note never comes between calls and their results;
//! a compaction changes only the view, never the items.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};

use bridle_protocol::{ErrorCode, Event, HistoryItem};

use super::session::Session;
use crate::audit::AuditKind;
use crate::compaction::{self, Estimator, Fit, View};
use crate::provider::ModelRequest;

/// A session's conversation, in memory.
pub(crate) struct History {
    /// Every item, as stored.
    items: tokio::sync::Mutex<Vec<HistoryItem>>,
    /// Bridle's notes (an undo's) made while calls waited for their results: they join the
    /// history after those results, where the store's reader puts them too.
    notes: Mutex<Vec<HistoryItem>>,
    /// What the model sees of the items (after compactions).
    view: Mutex<View>,
    /// This session's tokens-per-character, learnt from the provider's counts.
    estimator: Mutex<Estimator>,
    /// Whether the prompt-truncation warning was given (once per session).
    warned_truncation: AtomicBool,
}

impl History {
    /// `items` as stored, seen through `view`.
    pub(crate) fn new(items: Vec<HistoryItem>, view: View) -> Self {
        Self {
            items: tokio::sync::Mutex::new(items),
            notes: Mutex::new(Vec::new()),
            view: Mutex::new(view),
            estimator: Mutex::new(Estimator::default()),
            warned_truncation: AtomicBool::new(false),
        }
    }
}

impl Session {
    /// The context window in force, when known: the usage meter's, which starts from the
    /// config and is corrected by what the server serves ([`Self::discover_window`]).
    pub(crate) fn context_window(&self) -> Option<u64> {
        self.usage.lock().unwrap_or_else(PoisonError::into_inner).context_window
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
        self.usage.lock().unwrap_or_else(PoisonError::into_inner).context_window = window;
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

    /// The server counted `reported` prompt tokens for `request`: far fewer than Bridle's own
    /// count of what it sent means the server cut the prompt (a context smaller than the
    /// request, or a chat template that drops the tools). Said once per session.
    pub(crate) async fn check_truncation(&self, request: &ModelRequest, reported: u64) {
        if reported == 0 || self.history.warned_truncation.load(Ordering::Relaxed) {
            return;
        }
        let sent = crate::compaction::count_tokens(request);
        if (reported as f64) >= 0.7 * sent as f64 {
            return;
        }
        self.history.warned_truncation.store(true, Ordering::Relaxed);
        let message = format!(
            "The server counted {reported} prompt tokens for a request of about {sent}: it cut the prompt, so the model may no longer see its instructions, its tools or the start of the conversation. Raise the server's context (for Ollama, use kind = \"ollama\", which sends num_ctx), or use a chat template that renders tools"
        );
        self.warn(bridle_protocol::WarningCode::PromptTruncated, message).await;
    }

    /// Appends to the history and the store. A store failure is reported to the user once
    /// per item and the turn goes on: the in-memory history stays whole.
    pub(crate) async fn record(&self, turn_id: &str, item: HistoryItem) {
        let now = self.deps.clock.now_ms();
        if let Err(e) = self.deps.store.append(&self.id, turn_id, &item, now) {
            self.error(ErrorCode::StoreWriteFailed, format!("{e}; the conversation continues in memory"), true).await;
        }
        let mut history = self.history.items.lock().await;
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
        let mut history = self.history.items.lock().await;
        history.extend(results.into_iter().map(|result| HistoryItem::ToolResult { result }));
        self.flush_notes(&mut history);
    }

    /// Appends a note from Bridle (an undo's) to the store and to the history the model sees
    /// next; while calls wait for their results, after those results.
    pub(super) async fn record_note(&self, item: HistoryItem) {
        let now = self.deps.clock.now_ms();
        if let Err(e) = self.deps.store.append(&self.id, "", &item, now) {
            self.error(ErrorCode::StoreWriteFailed, format!("{e}; the conversation continues in memory"), true).await;
        }
        let mut history = self.history.items.lock().await;
        self.history.notes.lock().unwrap_or_else(PoisonError::into_inner).push(item);
        self.flush_notes(&mut history);
    }

    /// Moves the waiting notes into `history` once no call there waits for a result.
    fn flush_notes(&self, history: &mut Vec<HistoryItem>) {
        let mut notes = self.history.notes.lock().unwrap_or_else(PoisonError::into_inner);
        if !notes.is_empty() && !has_open_calls(history) {
            history.append(&mut notes);
        }
    }

    /// A copy of the history so far.
    pub(crate) async fn history_snapshot(&self) -> Vec<HistoryItem> {
        self.history.items.lock().await.clone()
    }

    /// The next model request: system prompt, the history as the model sees it (compacted),
    /// tools sorted by name.
    pub(crate) async fn request(&self) -> ModelRequest {
        let history = self.history.items.lock().await;
        let view = self.current_view();
        let compacted = view.summarized > 0 || !view.masked.is_empty();
        view.apply(&self.system_text(compacted), &history, self.calls().registry().definitions())
    }

    /// The system prompt: the brief, and once a compaction has summarised or masked anything
    /// (`compacted`), the instructions of every skill the session loaded — a loaded skill stays
    /// in force whatever the compaction left of its load.
    fn system_text(&self, compacted: bool) -> String {
        let loaded = self.skills.loaded();
        if loaded.is_empty() || !compacted {
            return self.brief.text.clone();
        }
        let mut text = self.brief.text.trim_end().to_string();
        text.push_str(
            "\n\n# Skills loaded in this session\nThese skills were loaded earlier in this conversation; their \
             instructions still hold.\n",
        );
        for skill in &loaded {
            text.push_str(&format!("\n## {}\n\n{}\n", skill.name, skill.body));
        }
        text
    }

    fn current_view(&self) -> View {
        self.history.view.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// The provider counted `input_tokens` for `request`: the estimates learn from it.
    pub(crate) fn observe_usage(&self, request: &ModelRequest, input_tokens: u64) {
        self.history.estimator.lock().unwrap_or_else(PoisonError::into_inner).observe(request, input_tokens);
    }

    /// Whether `request` (the next one, as built) passes the compaction threshold: the cheap
    /// check made before every step, on the request already in hand.
    pub(crate) fn needs_compaction(&self, request: &ModelRequest) -> bool {
        let Some(window) = self.context_window() else { return false };
        let estimator = self.history.estimator.lock().unwrap_or_else(PoisonError::into_inner);
        estimator.tokens(request) > compaction::threshold(window, self.config.compaction.at)
    }

    /// Compacts when the next request would pass the threshold (always when `force`): the new
    /// view is stored, audited (`compaction`) and announced (`Compacted`). A summary the model
    /// cannot give is an error event; the request then goes as it is.
    /// Returns the tokens before and after, when it compacted.
    pub(crate) async fn compact(&self, turn_id: Option<&str>, force: bool) -> Option<(u64, u64)> {
        let Some(window) = self.context_window() else {
            if force {
                let message =
                    "the model's context window is not known ([provider] context_window); nothing to compact against";
                self.error(ErrorCode::CompactFailed, message.into(), false).await;
            }
            return None;
        };
        let history = self.history_snapshot().await;
        let tools = self.calls().registry().definitions();
        // Room is made for the loaded skills' instructions, which a compaction keeps.
        let system = self.system_text(true);
        let fit = Fit {
            system: &system,
            history: &history,
            tools: &tools,
            window,
            at: self.config.compaction.at,
            keep_user_messages: self.config.compaction.keep_user_messages,
        };
        let (view, estimator) =
            (self.current_view(), self.history.estimator.lock().unwrap_or_else(PoisonError::into_inner).clone());
        let compacted = match compaction::fit(&view, &estimator, self.deps.provider.as_ref(), &fit, force).await {
            Ok(Some(compacted)) => compacted,
            Ok(None) => return None,
            Err(e) => {
                self.error(ErrorCode::CompactFailed, e.to_string(), true).await;
                return None;
            }
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
        *self.history.view.lock().unwrap_or_else(PoisonError::into_inner) = compacted.view.clone();
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
        Some((compacted.tokens_before, compacted.tokens_after))
    }
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
