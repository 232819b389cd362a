//! Keeping a long session inside the model's window: what the model sees of the history.
//!
//! Rules: the stored history is never rewritten — a compaction is a [`View`] over it (older
//! items replaced by a summary, older tool outputs masked), stored beside it, so the user still
//! sees every original item, marked. The view always starts at a user message and keeps the
//! most recent user messages and everything after them word for word, so the latest request
//! arrives verbatim and every tool call keeps its result. Masking comes first (middle-out:
//! the outputs farthest from both ends go first); the model summarises only when masking is
//! not enough; a summary request that would itself overflow drops more and retries.

mod estimate;
mod summary;

use std::collections::BTreeSet;

use bridle_protocol::{HistoryItem, ToolResult};
use serde::{Deserialize, Serialize};

pub use estimate::{count_text_tokens, count_tokens, Estimator};
pub use summary::{summarise, SummaryError, SUMMARY_SYSTEM_PROMPT};

use crate::provider::ModelRequest;

/// How the model sees a session's history; stored after each compaction.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct View {
    /// Items before this index are replaced by `summary`.
    pub summarized: usize,
    /// The summary of those items (in the system prompt).
    pub summary: Option<String>,
    /// Indexes of tool results whose output the model no longer sees.
    pub masked: BTreeSet<usize>,
}

/// The whole session as a window shows it again (or `bridle sessions show --json`): the store's
/// snapshot with each item marked as the latest compaction left it, and that compaction's summary.
pub fn snapshot(
    store: &crate::store::Store,
    session_id: &str,
    now_ms: i64,
) -> Result<bridle_protocol::SessionSnapshot, crate::store::StoreError> {
    let mut snapshot = store.unmarked_snapshot(session_id, now_ms)?;
    let view: View = store.view(session_id)?.and_then(|v| serde_json::from_str(&v).ok()).unwrap_or_default();
    for (i, item) in snapshot.items.iter_mut().enumerate() {
        item.compacted = view.mark(i).map(|m| match m {
            Marked::Summarized => "summarized".to_string(),
            Marked::Masked => "masked".to_string(),
        });
    }
    snapshot.summary = view.summary;
    Ok(snapshot)
}

/// What a compaction marks an item as (`bridle sessions show --json`, the app).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Marked {
    /// Replaced by the summary.
    Summarized,
    /// Its output is hidden from the model.
    Masked,
}

impl View {
    /// How item `index` is shown to the model now.
    pub fn mark(&self, index: usize) -> Option<Marked> {
        if index < self.summarized {
            Some(Marked::Summarized)
        } else if self.masked.contains(&index) {
            Some(Marked::Masked)
        } else {
            None
        }
    }

    /// The request the model receives for `history`: the summary joins the system prompt, the
    /// summarised items go, masked outputs are replaced by a note.
    pub fn apply(
        &self,
        system: &str,
        history: &[HistoryItem],
        tools: Vec<bridle_protocol::ToolDefinition>,
    ) -> ModelRequest {
        let system = match &self.summary {
            Some(summary) => format!(
                "{system}\n\n<earlier-conversation-summary>\nThe start of this conversation was compacted to fit the context window. What it covered:\n{summary}\n</earlier-conversation-summary>"
            ),
            None => system.to_string(),
        };
        let start = self.summarized.min(history.len());
        let history = history[start..]
            .iter()
            .enumerate()
            .map(|(i, item)| match item {
                HistoryItem::ToolResult { result } if self.masked.contains(&(start + i)) => {
                    HistoryItem::ToolResult { result: masked(result) }
                }
                other => other.clone(),
            })
            .collect();
        ModelRequest { system, history, tools }
    }
}

fn masked(result: &ToolResult) -> ToolResult {
    ToolResult {
        output: format!(
            "[output hidden to save context: {} characters; run the call again if you need it]",
            result.output.chars().count()
        ),
        data: None,
        diff: None,
        ..result.clone()
    }
}

/// Where the kept part of `history` starts: at the `keep`-th last user message (never inside
/// a batch of tool results), or `None` when there are not more user messages than that.
pub fn keep_from(history: &[HistoryItem], keep: usize) -> Option<usize> {
    let users: Vec<usize> =
        history.iter().enumerate().filter(|(_, i)| matches!(i, HistoryItem::User { .. })).map(|(i, _)| i).collect();
    let keep = keep.max(1);
    (users.len() > keep).then(|| users[users.len() - keep])
}

/// Tool results `view` could still mask, middle-out: of the results after the summary and
/// before the last batch (the model is acting on that one), the one farthest from both ends
/// first.
pub fn mask_candidates(history: &[HistoryItem], view: &View) -> Vec<usize> {
    let last_batch =
        history.iter().rposition(|i| matches!(i, HistoryItem::Assistant { tool_calls, .. } if !tool_calls.is_empty()));
    let end = last_batch.unwrap_or(history.len());
    let mut candidates: Vec<usize> = (view.summarized..end)
        .filter(|&i| !view.masked.contains(&i))
        .filter(|&i| matches!(&history[i], HistoryItem::ToolResult { result } if result.output.len() > 200))
        .collect();
    let (lo, hi) = (view.summarized as f64, end as f64);
    let middle = (lo + hi) / 2.0;
    candidates.sort_by(|a, b| {
        let (da, db) = ((*a as f64 - middle).abs(), (*b as f64 - middle).abs());
        da.total_cmp(&db)
    });
    candidates
}

/// What a compaction is asked to fit.
pub struct Fit<'a> {
    /// The system prompt.
    pub system: &'a str,
    /// The whole stored history.
    pub history: &'a [HistoryItem],
    /// The tools offered (their definitions take room too).
    pub tools: &'a [bridle_protocol::ToolDefinition],
    /// The model's window in tokens.
    pub window: u64,
    /// Compact at this share of the window.
    pub at: f64,
    /// Recent user messages kept word for word.
    pub keep_user_messages: usize,
}

/// A compaction that changed the view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Compacted {
    /// The new view.
    pub view: View,
    /// Estimated tokens of the request before.
    pub tokens_before: u64,
    /// Estimated tokens of the request after.
    pub tokens_after: u64,
    /// Tool outputs newly masked.
    pub masked: usize,
    /// Whether older items were summarised.
    pub summarized: bool,
}

/// Share of the window a compaction aims for (well below the threshold, so the next few steps
/// do not compact again at once).
const TARGET_SHARE: f64 = 0.5;

/// The estimated request size past which a compaction starts.
pub fn threshold(window: u64, at: f64) -> u64 {
    (window as f64 * at) as u64
}

/// Brings the request for `fit` under its threshold: masks older tool outputs, then has
/// `provider` summarise the older conversation. `force` compacts even below the threshold
/// (`bridle sessions compact`, the app's button). `None` when nothing needed or could change.
pub async fn fit(
    view: &View,
    estimator: &Estimator,
    provider: &dyn crate::provider::ModelProvider,
    fit: &Fit<'_>,
    force: bool,
) -> Result<Option<Compacted>, SummaryError> {
    let tokens = |v: &View| estimator.tokens(&v.apply(fit.system, fit.history, fit.tools.to_vec()));
    let before = tokens(view);
    if !force && before <= threshold(fit.window, fit.at) {
        return Ok(None);
    }
    let target = (fit.window as f64 * TARGET_SHARE.min(fit.at * 0.75)) as u64;
    let mut next = view.clone();
    let mut masked = 0;
    let mut chars = estimate::request_chars(&next.apply(fit.system, fit.history, fit.tools.to_vec()));
    for index in mask_candidates(fit.history, &next) {
        if estimator.tokens_of_chars(chars) <= target {
            break;
        }
        if let HistoryItem::ToolResult { result } = &fit.history[index] {
            chars = chars.saturating_sub(result.output.len().saturating_sub(80));
        }
        next.masked.insert(index);
        masked += 1;
    }
    let mut summarized = false;
    if force || tokens(&next) > target {
        if let Some(cut) = keep_from(fit.history, fit.keep_user_messages).filter(|cut| *cut > next.summarized) {
            // The summary request gets what the target leaves after the system prompt.
            let room = estimator.chars_of_tokens(target).saturating_sub(fit.system.len());
            let summary =
                summarise(provider, next.summary.as_deref(), &fit.history[next.summarized..cut], room).await?;
            next.summary = Some(summary);
            next.summarized = cut;
            next.masked.retain(|i| *i >= cut);
            summarized = true;
        }
    }
    if next == *view {
        return Ok(None);
    }
    Ok(Some(Compacted { tokens_after: tokens(&next), view: next, tokens_before: before, masked, summarized }))
}

/// What a stored session is compacted with from outside a running engine.
pub struct Stored<'a> {
    /// The store.
    pub store: &'a crate::store::Store,
    /// Bridle's data dir (for the session's lease).
    pub data_dir: &'a std::path::Path,
    /// The model that writes the summary.
    pub provider: &'a dyn crate::provider::ModelProvider,
    /// The system prompt and tools the session's requests carry.
    pub system: &'a str,
    /// The tools offered.
    pub tools: &'a [bridle_protocol::ToolDefinition],
    /// The model's window.
    pub window: u64,
    /// The user's settings.
    pub config: &'a crate::config::CompactionConfig,
}

/// Compacts a stored session now (`bridle sessions compact`), under its lease so a running
/// engine is never compacted under its feet; the new view is stored. `None`: nothing to do.
pub async fn compact_stored(s: &Stored<'_>, session_id: &str, now_ms: i64) -> Result<Option<Compacted>, String> {
    let _lease = crate::store::SessionLease::try_acquire(s.data_dir, session_id)
        .map_err(|e| format!("cannot take the session's lease: {e}"))?
        .ok_or("the session is open in another process (the app?); compact it there")?;
    let history = s.store.history(session_id, now_ms).map_err(|e| e.to_string())?;
    let view: View = s
        .store
        .view(session_id)
        .map_err(|e| e.to_string())?
        .and_then(|v| serde_json::from_str(&v).ok())
        .unwrap_or_default();
    let fit_input = Fit {
        system: s.system,
        history: &history,
        tools: s.tools,
        window: s.window,
        at: s.config.at,
        keep_user_messages: s.config.keep_user_messages,
    };
    let compacted = fit(&view, &Estimator::default(), s.provider, &fit_input, true).await.map_err(|e| e.to_string())?;
    if let Some(c) = &compacted {
        let json = serde_json::to_string(&c.view).map_err(|e| e.to_string())?;
        s.store.save_view(session_id, &json, c.tokens_before, c.tokens_after, now_ms).map_err(|e| e.to_string())?;
    }
    Ok(compacted)
}

#[cfg(test)]
mod tests;
