//! One step: stream the model's answer, retrying what the provider may recover from.
//!
//! Deltas are emitted as they arrive. A retried attempt starts its text over, announced by
//! `StreamRestarted` before its wait, so the deltas after the last restart are exactly the
//! `AssistantMessage` that closes the step; a failed attempt's tool calls never run; when the
//! retries run out, the text the user saw is handed back to be kept, marked cut off.

use bridle_protocol::{Event, TokenUsage};
use futures::StreamExt;
use tokio_util::sync::CancellationToken;

use super::session::Session;
use crate::provider::{ModelEvent, ModelRequest, ProviderError};

/// A whole answer.
#[derive(Debug, Default)]
pub(crate) struct Answer {
    pub text: String,
    /// `(provider id, name, raw arguments)` in the order the model gave them.
    pub calls: Vec<(String, String, String)>,
    pub usage: Option<TokenUsage>,
}

pub(crate) enum StepError {
    /// Cancelled; the text streamed so far.
    Interrupted(String),
    /// The provider failed for good; the text the last attempt streamed before it broke.
    Provider { error: ProviderError, attempts: u32, partial: String },
}

enum AttemptError {
    Interrupted(String),
    /// The provider failed; the text streamed before it did.
    Provider(ProviderError, String),
}

pub(crate) async fn stream_answer(
    session: &Session,
    turn_id: &str,
    request: &ModelRequest,
    cancel: &CancellationToken,
) -> Result<Answer, StepError> {
    let mut retry = 0;
    // The text the user last read: a retry that fails before streaming anything leaves it.
    let mut read = String::new();
    loop {
        match attempt(session, turn_id, request, cancel).await {
            Ok(answer) => return Ok(answer),
            Err(AttemptError::Interrupted(text)) => return Err(StepError::Interrupted(text)),
            Err(AttemptError::Provider(error, partial)) => match session.config.retry.delay(&error, retry) {
                None => {
                    let partial = if partial.is_empty() { read } else { partial };
                    return Err(StepError::Provider { error, attempts: retry + 1, partial });
                }
                Some(delay) => {
                    tracing::warn!("model request failed ({error}); retrying in {delay:?}");
                    if !partial.is_empty() {
                        read = partial;
                    }
                    retry += 1;
                    // Said before the wait: the window drops the partial text at once and says
                    // it is reconnecting; the text streamed after it is the whole answer.
                    session
                        .emit(Event::StreamRestarted {
                            session_id: session.id.clone(),
                            turn_id: turn_id.to_string(),
                            attempt: retry + 1,
                            max_attempts: session.config.retry.max_retries + 1,
                            reason: error.to_string(),
                        })
                        .await;
                    tokio::select! {
                        biased;
                        _ = cancel.cancelled() => return Err(StepError::Interrupted(String::new())),
                        _ = tokio::time::sleep(delay) => {}
                    }
                }
            },
        }
    }
}

async fn attempt(
    session: &Session,
    turn_id: &str,
    request: &ModelRequest,
    cancel: &CancellationToken,
) -> Result<Answer, AttemptError> {
    let mut stream = tokio::select! {
        biased;
        _ = cancel.cancelled() => return Err(AttemptError::Interrupted(String::new())),
        stream = session.deps.provider.stream(request) => stream.map_err(|e| AttemptError::Provider(e, String::new()))?,
    };
    let mut answer = Answer::default();
    loop {
        let next = tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(AttemptError::Interrupted(answer.text)),
            next = stream.next() => next,
        };
        match next {
            Some(Ok(ModelEvent::TextDelta(text))) => {
                answer.text.push_str(&text);
                session
                    .emit(Event::AssistantDelta { session_id: session.id.clone(), turn_id: turn_id.to_string(), text })
                    .await;
            }
            Some(Ok(ModelEvent::ToolCall { provider_id, name, arguments })) => {
                answer.calls.push((provider_id, name, arguments))
            }
            Some(Ok(ModelEvent::Usage(usage))) => answer.usage = Some(usage),
            Some(Ok(ModelEvent::Finished)) | None => return Ok(answer),
            // Its tool calls die with it: a call from an unfinished stream never runs.
            Some(Err(error)) => return Err(AttemptError::Provider(error, answer.text)),
        }
    }
}

/// A rough count (four characters a token) for providers that report no usage.
pub(crate) fn estimate_usage(request: &ModelRequest, answer: &Answer) -> TokenUsage {
    let history_chars: usize =
        request.history.iter().map(|item| serde_json::to_string(item).map(|s| s.len()).unwrap_or(0)).sum();
    let tools_chars = serde_json::to_string(&request.tools).map(|s| s.len()).unwrap_or(0);
    let input = (request.system.len() + history_chars + tools_chars) / 4;
    let output = (answer.text.len() + answer.calls.iter().map(|(_, n, a)| n.len() + a.len()).sum::<usize>()) / 4;
    TokenUsage { input_tokens: input as u64, cached_input_tokens: 0, output_tokens: output.max(1) as u64 }
}
