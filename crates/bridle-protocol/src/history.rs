//! The conversation as stored: what the model saw, in order.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::{ToolCall, ToolResult};

/// One item of a session's history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum HistoryItem {
    /// A message the user sent.
    User {
        /// Its text.
        text: String,
    },
    /// One model answer: text and the tool calls it asked for.
    Assistant {
        /// Its text (may be empty when it only calls tools).
        text: String,
        /// The calls, in the order the model gave them.
        tool_calls: Vec<ToolCall>,
    },
    /// The result of one call of the preceding assistant item.
    ToolResult {
        /// The result.
        result: ToolResult,
    },
}

/// A stored session, as listed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SessionInfo {
    /// Session id.
    pub id: String,
    /// The workspace folder.
    pub workspace: String,
    /// The first user message, shortened.
    pub title: String,
    /// Creation time (ms since the epoch).
    #[ts(type = "number")]
    pub created_at: i64,
    /// Last change (ms since the epoch).
    #[ts(type = "number")]
    pub updated_at: i64,
}
