//! One turn: steps until the model answers without tool calls, or the turn is stopped.

use std::sync::Arc;

use bridle_protocol::{AbortReason, Event, HistoryItem, ToolCall};
use tokio_util::sync::CancellationToken;

use super::dispatch;
use super::loop_guard::LoopGuard;
use super::session::Session;
use super::step::{self, StepError};

pub(crate) async fn run_turn(session: Arc<Session>, text: String, cancel: CancellationToken) {
    let turn_id = super::new_id();
    session.emit(Event::TurnStarted { session_id: session.id.clone(), turn_id: turn_id.clone() }).await;
    let end = steps(&session, &turn_id, text, &cancel).await;
    let session_id = session.id.clone();
    session
        .emit(match end {
            None => Event::TurnCompleted { session_id, turn_id },
            Some(reason) => Event::TurnAborted { session_id, turn_id, reason },
        })
        .await;
}

/// Runs the steps; `None` when the model gave its final answer.
async fn steps(session: &Session, turn_id: &str, text: String, cancel: &CancellationToken) -> Option<AbortReason> {
    session.record(turn_id, HistoryItem::User { text }).await;
    let mut loop_guard = LoopGuard::default();
    for _ in 0..session.config.limits.max_steps {
        if cancel.is_cancelled() {
            return Some(AbortReason::Interrupted);
        }
        let request = session.request().await;
        let answer = match step::stream_answer(session, turn_id, &request, cancel).await {
            Ok(answer) => answer,
            Err(StepError::Interrupted(partial)) => {
                if !partial.is_empty() {
                    finish_message(session, turn_id, partial, Vec::new()).await;
                }
                return Some(AbortReason::Interrupted);
            }
            Err(StepError::Provider { error, attempts }) => {
                let info = error.to_info(attempts);
                session.emit(Event::Error { session_id: session.id.clone(), info }).await;
                return Some(AbortReason::Error);
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
            return None;
        }
        let outcome = dispatch::run_calls(session, turn_id, &calls, &mut loop_guard, cancel).await;
        for result in outcome.results {
            session.record(turn_id, HistoryItem::ToolResult { result }).await;
        }
        if outcome.loop_stopped {
            return Some(AbortReason::LoopGuard);
        }
    }
    if cancel.is_cancelled() {
        return Some(AbortReason::Interrupted);
    }
    Some(AbortReason::MaxSteps)
}

async fn finish_message(session: &Session, turn_id: &str, text: String, tool_calls: Vec<ToolCall>) {
    if !text.is_empty() || !tool_calls.is_empty() {
        session.record(turn_id, HistoryItem::Assistant { text: text.clone(), tool_calls }).await;
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
    let usage = answer.usage.unwrap_or_else(|| step::estimate_usage(request, answer));
    let (total, context_used, context_window) = {
        let Ok(mut meter) = session.usage.lock() else { return };
        meter.total.add(&usage);
        meter.context_used = usage.input_tokens + usage.output_tokens;
        (meter.total, meter.context_used, meter.context_window)
    };
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
}
