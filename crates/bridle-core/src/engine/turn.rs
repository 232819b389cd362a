//! One turn: steps until the model answers without tool calls, or the turn is stopped.
//!
//! A turn starts from a user message, or resumes where an earlier process left it waiting on
//! approvals (its calls without results go first, then the steps go on). A turn whose calls wait
//! for another process (`defer`) is suspended: it ends with `TurnSuspended`, not a completion.

use std::collections::HashMap;
use std::sync::Arc;

use bridle_protocol::{AbortReason, ErrorCode, Event, HistoryItem, ToolCall, ToolResult};
use tokio_util::sync::CancellationToken;

use super::dispatch;
use super::session::Session;
use super::step::{self, StepError};
use crate::audit::AuditKind;
use crate::calls::LoopGuard;
use crate::store::{StoredApproval, TurnState};
use serde_json::json;

/// Where a turn begins.
pub(crate) enum TurnStart {
    /// A user message.
    Message(String),
    /// Calls an earlier process left waiting on approvals, with their latest requests.
    Resume { turn_id: String, calls: Vec<ToolCall>, approvals: HashMap<String, StoredApproval> },
}

/// How a turn ended.
enum End {
    Completed,
    Aborted(AbortReason),
    Suspended(Vec<String>),
}

impl TurnStart {
    /// The id of the turn this starts: a new one for a message, the suspended one's otherwise.
    pub(crate) fn turn_id(&self) -> String {
        match self {
            TurnStart::Message(_) => super::new_id(),
            TurnStart::Resume { turn_id, .. } => turn_id.clone(),
        }
    }
}

pub(crate) async fn run_turn(session: Arc<Session>, turn_id: String, start: TurnStart, cancel: CancellationToken) {
    session.emit(Event::TurnStarted { session_id: session.id.clone(), turn_id: turn_id.clone() }).await;
    set_turn_state(&session, TurnState::Working).await;
    // A skill narrows the calls of its own turn only: what a turn that failed left is undone
    // before this one, what this one sets is undone when it ends.
    if session.skills.end_turn() {
        session.narrow_tools(None);
    }
    let end = steps(&session, &turn_id, start, &cancel).await;
    if session.skills.end_turn() {
        session.narrow_tools(None);
    }
    session.report_audit_failure();
    set_turn_state(
        &session,
        match &end {
            End::Completed => TurnState::Completed,
            End::Aborted(AbortReason::Interrupted) => TurnState::Interrupted,
            End::Aborted(_) => TurnState::Failed,
            End::Suspended(_) => TurnState::Suspended,
        },
    )
    .await;
    let session_id = session.id.clone();
    session
        .emit(match end {
            End::Completed => Event::TurnCompleted { session_id, turn_id },
            End::Aborted(reason) => Event::TurnAborted { session_id, turn_id, reason },
            End::Suspended(approval_ids) => Event::TurnSuspended { session_id, turn_id, approval_ids },
        })
        .await;
}

/// Records how the turn stands, for the lists of sessions (a failure to is said, not fatal).
async fn set_turn_state(session: &Session, state: TurnState) {
    if let Err(e) = session.deps.store.set_turn_state(&session.id, state) {
        session.error(ErrorCode::StoreWriteFailed, format!("the turn's state could not be stored: {e}"), true).await;
    }
}

/// Runs the steps of a turn.
async fn steps(session: &Arc<Session>, turn_id: &str, start: TurnStart, cancel: &CancellationToken) -> End {
    let mut loop_guard = LoopGuard::default();
    match start {
        TurnStart::Message(text) => {
            withdraw_suspended(session).await;
            let text = match run_skill_command(session, turn_id, text).await {
                Ok(text) => text,
                Err(end) => return end,
            };
            session.audit(AuditKind::UserMessage, Some(turn_id), |r| r.payload(json!({ "text": text })));
            // Hunks rejected since the last message are told first, once (§10.1).
            session.tell_rejections().await;
            session.record(turn_id, HistoryItem::User { text }).await;
            session.refresh_tools(cancel).await;
        }
        TurnStart::Resume { turn_id: _, calls, mut approvals } => {
            session.refresh_tools(cancel).await;
            let outcome = dispatch::run_calls(session, turn_id, &calls, &mut approvals, &mut loop_guard, cancel).await;
            if let Some(end) = record_outcome(session, turn_id, outcome).await {
                return end;
            }
        }
    }
    for _ in 0..session.config.limits.max_steps {
        if cancel.is_cancelled() {
            return End::Aborted(AbortReason::Interrupted);
        }
        let mut request = session.request().await;
        if session.needs_compaction(&request) {
            session.compact(Some(turn_id), false).await;
            request = session.request().await;
        }
        let started = std::time::Instant::now();
        let streamed = step::stream_answer(session, turn_id, &request, cancel).await;
        audit_request(session, turn_id, &request, &streamed, started.elapsed());
        let answer = match streamed {
            Ok(answer) => answer,
            Err(StepError::Interrupted(partial)) => {
                if !partial.is_empty() {
                    finish_message(session, turn_id, partial, Vec::new()).await;
                }
                return End::Aborted(AbortReason::Interrupted);
            }
            Err(StepError::Provider { error, attempts, partial }) => {
                // What the user read before the stream broke is what the session keeps.
                if !partial.is_empty() {
                    let item = HistoryItem::Assistant { text: partial, tool_calls: Vec::new(), cut_off: true };
                    session.record(turn_id, item).await;
                }
                let info = error.to_info(attempts);
                session.emit(Event::Error { session_id: session.id.clone(), info }).await;
                return End::Aborted(AbortReason::Error);
            }
        };
        report_usage(session, turn_id, &request, &answer).await;
        // Bridle's own ids: the provider's are kept only to be echoed back on the wire.
        let calls: Vec<ToolCall> = answer
            .calls
            .into_iter()
            .map(|(provider_id, name, arguments)| ToolCall { id: super::new_id(), provider_id, name, arguments })
            .collect();
        finish_message(session, turn_id, answer.text, calls.clone()).await;
        if calls.is_empty() {
            return End::Completed;
        }
        let outcome = dispatch::run_calls(session, turn_id, &calls, &mut HashMap::new(), &mut loop_guard, cancel).await;
        if let Some(end) = record_outcome(session, turn_id, outcome).await {
            return end;
        }
        if let Some(narrowing) = session.skills.narrowing(turn_id) {
            session.narrow_tools(Some(&narrowing));
        }
    }
    if cancel.is_cancelled() {
        return End::Aborted(AbortReason::Interrupted);
    }
    End::Aborted(AbortReason::MaxSteps)
}

/// A message that runs a skill (`/name args`, DESIGN §13.1): the skill is loaded (and its load
/// recorded) and the message the model reads carries its instructions after what the user typed;
/// any other message goes as it is. A skill that cannot be loaded ends the turn, saying why.
async fn run_skill_command(session: &Session, turn_id: &str, text: String) -> Result<String, End> {
    let Some(crate::skills::SlashCommand::Skill { name, .. }) =
        crate::skills::parse_command(&text, session.skills.skills())
    else {
        return Ok(text);
    };
    match session.skills.load(&name, turn_id, None) {
        Ok(loaded) => {
            if let Some(narrowing) = session.skills.narrowing(turn_id) {
                session.narrow_tools(Some(&narrowing));
            }
            Ok(format!(
                "{}\n\n<skill name=\"{name}\">\nThe user ran the skill `{name}`; follow its instructions for the request above.\n\n{}</skill>",
                text.trim_end(),
                loaded.text()
            ))
        }
        Err(why) => {
            session.error(ErrorCode::SkillNotLoaded, format!("/{name}: {why}"), false).await;
            Err(End::Aborted(AbortReason::Error))
        }
    }
}

/// One `model_request` row: what was sent (sizes, not the history again) and what came back.
fn audit_request(
    session: &Session,
    turn_id: &str,
    request: &crate::provider::ModelRequest,
    streamed: &Result<step::Answer, StepError>,
    took: std::time::Duration,
) {
    session.audit(AuditKind::ModelRequest, Some(turn_id), |r| {
        let r = r.latency_ms(took.as_millis() as i64);
        let sent = json!({"historyItems": request.history.len(), "tools": request.tools.len()});
        match streamed {
            Ok(answer) => r.status("ok").payload(json!({
                "request": sent,
                "model": session.deps.provider.model(),
                "text": answer.text,
                "toolCalls": answer.calls.iter().map(|(_, name, _)| name.as_str()).collect::<Vec<_>>(),
                "usage": answer.usage,
            })),
            Err(StepError::Interrupted(partial)) => {
                r.status("interrupted").payload(json!({"request": sent, "text": partial}))
            }
            Err(StepError::Provider { error, attempts, .. }) => r.status("error").payload(json!({
                "request": sent,
                "error": error.to_info(*attempts).message,
                "attempts": attempts,
            })),
        }
    });
}

/// Records a step's results; how the turn ends if it cannot go on.
async fn record_outcome(session: &Session, _turn_id: &str, outcome: dispatch::Dispatched) -> Option<End> {
    // Each was stored as its call ended; the in-memory history takes them in call order.
    session.remember_results(outcome.results).await;
    if !outcome.deferred.is_empty() {
        return Some(End::Suspended(outcome.deferred));
    }
    outcome.loop_stopped.then_some(End::Aborted(AbortReason::LoopGuard))
}

/// A turn that failed (its task panicked) ends as aborted, and what it left open is closed so
/// the session stays usable: its pending requests are withdrawn and every call without a
/// result gets one.
pub(crate) async fn abort_failed(session: &Session, turn_id: &str, why: String) {
    tracing::error!(session = %session.id, turn = %turn_id, "turn failed: {why}");
    if let Err(e) = session.approvals.deny_pending(&session.id, "the turn failed") {
        session.error(ErrorCode::StoreWriteFailed, e.to_string(), true).await;
    }
    let open = super::unanswered_calls(&session.history_snapshot().await);
    for call in open {
        let result = ToolResult::error(&call.id, "Not run: the turn failed inside Bridle before this call finished.");
        session.record(turn_id, HistoryItem::ToolResult { result }).await;
    }
    session.error(ErrorCode::TurnFailed, format!("the turn failed inside Bridle: {why}"), false).await;
    let (session_id, turn_id) = (session.id.clone(), turn_id.to_string());
    session.emit(Event::TurnAborted { session_id, turn_id, reason: AbortReason::Error }).await;
}

/// A new message while an earlier turn waits on approvals: those requests are withdrawn
/// (denied) and their calls closed, so the conversation stays valid for the provider.
async fn withdraw_suspended(session: &Session) {
    // Most turns have nothing held: ask the store before copying the history.
    let held = match session.deps.store.held_approvals(&session.id) {
        Ok(held) if !held.is_empty() => held,
        _ => return,
    };
    let history = session.history_snapshot().await;
    let Some(TurnStart::Resume { turn_id, calls, .. }) = super::suspended_turn(held, &history) else {
        return;
    };
    if let Err(e) = session.approvals.deny_pending(&session.id, "the user sent a new message instead of answering") {
        session.error(ErrorCode::StoreWriteFailed, e.to_string(), true).await;
    }
    for call in calls {
        let result = ToolResult::error(
            &call.id,
            "Not run: the user sent a new message instead of answering its approval request.",
        );
        session.record(&turn_id, HistoryItem::ToolResult { result }).await;
    }
}

async fn finish_message(session: &Session, turn_id: &str, text: String, tool_calls: Vec<ToolCall>) {
    if !text.is_empty() || !tool_calls.is_empty() {
        session.record(turn_id, HistoryItem::Assistant { text: text.clone(), tool_calls, cut_off: false }).await;
    }
    if !text.is_empty() {
        session
            .emit(Event::AssistantMessage { session_id: session.id.clone(), turn_id: turn_id.to_string(), text })
            .await;
    }
}

async fn report_usage(
    session: &Session,
    turn_id: &str,
    request: &crate::provider::ModelRequest,
    answer: &step::Answer,
) {
    if let Some(counted) = &answer.usage {
        session.observe_usage(request, counted.input_tokens);
    }
    let usage = answer.usage.unwrap_or_else(|| step::estimate_usage(request, answer));
    let (total, context_used, context_window) = {
        let Ok(mut meter) = session.usage.lock() else { return };
        meter.total.add(&usage);
        meter.context_used = usage.input_tokens + usage.output_tokens;
        (meter.total, meter.context_used, meter.context_window)
    };
    if let Err(e) = session.deps.store.set_usage(&session.id, turn_id, &usage, &total, context_used) {
        tracing::warn!("session {}: token totals not stored: {e}", session.id);
    }
    session
        .emit(Event::TokenUsage {
            session_id: session.id.clone(),
            turn_id: turn_id.to_string(),
            usage,
            total,
            context_used,
            context_window,
        })
        .await;
    // After the usage it is about: a server that counted far less than was sent cut the prompt.
    if let Some(counted) = &answer.usage {
        session.check_truncation(request, counted.input_tokens).await;
    }
}
