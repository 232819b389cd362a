//! One row of the audit log, as shown and exported.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;

use crate::{Decision, DecisionSource};

/// An audit row; `payload` is sanitised before it is stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AuditEvent {
    /// Row id, increasing.
    #[ts(type = "number")]
    pub id: i64,
    /// When (ms since the epoch).
    #[ts(type = "number")]
    pub at: i64,
    /// Session id.
    pub session_id: Option<String>,
    /// Turn id.
    pub turn_id: Option<String>,
    /// Tool call id.
    pub call_id: Option<String>,
    /// Tool name.
    pub tool: Option<String>,
    /// Event kind, e.g. `tool_call`, `guard_decision`.
    pub kind: String,
    /// Guard decision, for decision rows.
    pub decision: Option<Decision>,
    /// Who decided.
    pub source: Option<DecisionSource>,
    /// Free status word, e.g. `ok`, `error`.
    pub status: Option<String>,
    /// Duration, where one applies.
    #[ts(type = "number | null")]
    pub latency_ms: Option<i64>,
    /// Sanitised details.
    #[ts(type = "unknown")]
    pub payload: Value,
    /// Hash of the previous row.
    pub prev_hash: String,
    /// Hash of this row.
    pub hash: String,
}

/// What the Audit view asks for; empty fields match everything. Newest rows first.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", default)]
pub struct AuditQuery {
    /// Only this session.
    pub session_id: Option<String>,
    /// Only this tool.
    pub tool: Option<String>,
    /// Only this kind, e.g. `guard_decision`.
    pub kind: Option<String>,
    /// Only rows with this decision.
    pub decision: Option<Decision>,
    /// Only rows at or after this time (ms since the epoch).
    #[ts(type = "number | null")]
    pub since: Option<i64>,
    /// Only rows before this time (ms since the epoch).
    #[ts(type = "number | null")]
    pub until: Option<i64>,
    /// Only rows whose payload contains this text.
    pub text: Option<String>,
    /// At most this many rows.
    pub limit: Option<u32>,
    /// Only rows older than this one (the last row of the page before): the next page.
    #[ts(type = "number | null")]
    #[serde(default)]
    pub before_id: Option<i64>,
}
