//! Asking the model for a summary of the older conversation.
//!
//! Rule: the summary request must fit the window itself — the transcript is built from the
//! newest item back until its budget is spent (each item shortened first), and a request the
//! provider still refuses is retried with half the budget, twice; nothing is shown to the user
//! while it streams.

use bridle_protocol::HistoryItem;
use futures::StreamExt;

use crate::provider::{ModelEvent, ModelProvider, ModelRequest, ProviderError};

/// The instructions of a summary request.
pub const SUMMARY_SYSTEM_PROMPT: &str = "You compact a coding agent's conversation so it can go on within its context window. \
Write a summary of the transcript you are given for the agent itself to read: the user's goals and every request they made, \
decisions taken and why, files read and changed (with what changed), commands run and what they showed, errors met and \
whether they were fixed, and what remains to do. Keep names, paths, numbers and identifiers exact. Plain text, no preamble.";

/// Longest text kept of one item in the transcript.
const ITEM_CHARS: usize = 2_000;
/// Longest tool output kept in the transcript.
const OUTPUT_CHARS: usize = 600;
/// Retries with a halved budget after a refused request.
const RETRIES: usize = 2;

/// Why no summary came back.
#[derive(Debug, thiserror::Error)]
pub enum SummaryError {
    /// The provider refused every attempt.
    #[error("the model could not summarise the conversation ({0})")]
    Provider(#[from] ProviderError),
    /// The model answered with no text.
    #[error("the model answered the summary request with no text")]
    Empty,
}

/// A summary of `items` (following `previous`, the summary of what came before them), in a
/// request of at most `budget_chars` characters of transcript.
pub async fn summarise(
    provider: &dyn ModelProvider,
    previous: Option<&str>,
    items: &[HistoryItem],
    budget_chars: usize,
) -> Result<String, SummaryError> {
    let mut budget = budget_chars.max(2_000);
    let mut last_error = None;
    for _ in 0..=RETRIES {
        let request = ModelRequest {
            system: SUMMARY_SYSTEM_PROMPT.to_string(),
            history: vec![HistoryItem::User { text: transcript(previous, items, budget) }],
            tools: Vec::new(),
        };
        match collect(provider, &request).await {
            Ok(text) if text.trim().is_empty() => return Err(SummaryError::Empty),
            Ok(text) => return Ok(text.trim().to_string()),
            Err(e) => {
                tracing::warn!("summary request of {budget} characters refused ({e}); retrying with less");
                last_error = Some(e);
                budget /= 2;
            }
        }
    }
    Err(SummaryError::Provider(last_error.unwrap_or_else(|| ProviderError::Setup("no attempt was made".into()))))
}

async fn collect(provider: &dyn ModelProvider, request: &ModelRequest) -> Result<String, ProviderError> {
    let mut stream = provider.stream(request).await?;
    let mut text = String::new();
    while let Some(event) = stream.next().await {
        match event? {
            ModelEvent::TextDelta(delta) => text.push_str(&delta),
            ModelEvent::Finished => break,
            _ => {}
        }
    }
    Ok(text)
}

/// The transcript the model summarises: the newest items that fit `budget`, each shortened.
pub(crate) fn transcript(previous: Option<&str>, items: &[HistoryItem], budget: usize) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut used = previous.map_or(0, str::len);
    let mut dropped = 0;
    for (i, item) in items.iter().enumerate().rev() {
        let line = render(item);
        if used + line.len() > budget {
            // Everything older goes too: the transcript stays one unbroken stretch.
            dropped = i + 1;
            break;
        }
        used += line.len();
        parts.push(line);
    }
    parts.reverse();
    let mut out = String::from("Summarise this conversation.\n\n");
    if let Some(previous) = previous {
        out.push_str(&format!("Summary of what came before it:\n{}\n\n", cut(previous, budget / 2)));
    }
    if dropped > 0 {
        out.push_str(&format!("[{dropped} older items did not fit and are left out]\n\n"));
    }
    out.push_str(&parts.join("\n"));
    out
}

fn render(item: &HistoryItem) -> String {
    match item {
        HistoryItem::User { text } => format!("USER: {}\n", cut(text, ITEM_CHARS)),
        HistoryItem::Assistant { text, tool_calls, .. } => {
            let mut line = format!("ASSISTANT: {}\n", cut(text, ITEM_CHARS));
            for call in tool_calls {
                line.push_str(&format!("  called {} {}\n", call.name, cut(&call.arguments, 300)));
            }
            line
        }
        HistoryItem::ToolResult { result } => {
            let tag = if result.is_error { "TOOL ERROR" } else { "TOOL RESULT" };
            format!("{tag}: {}\n", cut(&result.output, OUTPUT_CHARS))
        }
    }
}

/// `text` shortened to about `max` characters, head and tail kept.
fn cut(text: &str, max: usize) -> String {
    let count = text.chars().count();
    if count <= max {
        return text.to_string();
    }
    let half = max / 2;
    let head: String = text.chars().take(half).collect();
    let tail: String = text.chars().skip(count - half).collect();
    format!("{head} […{} characters…] {tail}", count - 2 * half)
}
