//! Tool calls as the engine sees them, their results, and the definitions offered to the model.
//!
//! A call's `id` is Bridle's own; the provider's id travels beside it only to be echoed back on
//! the wire, so nothing the model invents can name a file, bind an approval or key the audit.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;

use crate::ToolDetails;

/// One tool call the model asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ToolCall {
    /// Bridle's id for the call (a UUID).
    pub id: String,
    /// The id the provider gave the call; used only on the wire back to the provider.
    pub provider_id: String,
    /// The tool's name as the model wrote it.
    pub name: String,
    /// The raw JSON text of the arguments, kept raw so it can be repaired.
    pub arguments: String,
}

/// What a tool call produced; `output` is exactly what the model receives.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ToolResult {
    /// The [`ToolCall::id`] this result answers.
    pub tool_call_id: String,
    /// Text the model sees.
    pub output: String,
    /// Whether the call failed (unknown tool, invalid arguments, denial, timeout, tool error).
    pub is_error: bool,
    /// What a built-in tool did, typed; `null` when it says nothing more than its text.
    #[serde(default)]
    pub details: Option<ToolDetails>,
    /// An MCP server's own structured output (never set by a built-in tool).
    #[ts(type = "unknown")]
    pub data: Option<Value>,
    /// Unified diff of the file change the call made, if any.
    pub diff: Option<String>,
}

impl ToolResult {
    /// A successful result carrying only text.
    pub fn ok(tool_call_id: impl Into<String>, output: impl Into<String>) -> Self {
        Self {
            tool_call_id: tool_call_id.into(),
            output: output.into(),
            is_error: false,
            details: None,
            data: None,
            diff: None,
        }
    }

    /// A failed result whose message the model can act on.
    pub fn error(tool_call_id: impl Into<String>, output: impl Into<String>) -> Self {
        Self {
            tool_call_id: tool_call_id.into(),
            output: output.into(),
            is_error: true,
            details: None,
            data: None,
            diff: None,
        }
    }
}

/// A tool as offered to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ToolDefinition {
    /// Name matching `^[A-Za-z0-9_-]{1,64}$`.
    pub name: String,
    /// What the tool does, as the model reads it.
    pub description: String,
    /// JSON Schema of the arguments object, generated from the tool's argument type.
    #[ts(type = "Record<string, unknown>")]
    pub input_schema: Value,
}
