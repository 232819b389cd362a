//! What callers hand to the audit log: an [`AuditRecord`] (one event, before sanitising and
//! chaining) and its [`AuditKind`].
//!
//! Rule: a kind's text form (`tool_call`, `guard_decision`, …) is what is stored and hashed, so
//! the names never change once written; decisions and sources are stored in their wire form.

use std::fmt;
use std::str::FromStr;

use bridle_protocol::{Decision, DecisionSource};
use serde_json::Value;

/// What happened, one word per row (DESIGN §7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AuditKind {
    /// A session was created or resumed.
    SessionStarted,
    /// The user sent a message.
    UserMessage,
    /// A request went to the model.
    ModelRequest,
    /// The model asked for a tool call.
    ToolCall,
    /// The guard decided on a call.
    GuardDecision,
    /// A call waits for a human answer.
    ApprovalRequested,
    /// A human (or a timeout) answered.
    ApprovalResolved,
    /// A tool began running.
    ToolStarted,
    /// A tool finished.
    ToolCompleted,
    /// A tool failed.
    ToolFailed,
    /// A file in the workspace changed.
    FileChanged,
    /// History was compacted.
    Compaction,
    /// Something went wrong outside a tool.
    Error,
    /// Something the user should know, which stopped nothing.
    Warning,
    /// The session's mode changed.
    ModeChanged,
    /// An undo put a file back (or removed one a turn created).
    Undone,
    /// A command's connection through the network proxy.
    Network,
    /// A process that outlives its call started, stopped or exited.
    Process,
    /// A skill was loaded (by the model's `skill` call or a user's `/name`).
    Skill,
    /// A person kept, rejected or unrejected a hunk of a turn's changes (§10.1).
    Review,
    /// A session's worktree was made, archived, restored, or handed back to the main checkout
    /// (applied or merged) (§16).
    Worktree,
}

impl AuditKind {
    /// Every kind, in DESIGN order.
    pub const ALL: [AuditKind; 21] = [
        AuditKind::SessionStarted,
        AuditKind::UserMessage,
        AuditKind::ModelRequest,
        AuditKind::ToolCall,
        AuditKind::GuardDecision,
        AuditKind::ApprovalRequested,
        AuditKind::ApprovalResolved,
        AuditKind::ToolStarted,
        AuditKind::ToolCompleted,
        AuditKind::ToolFailed,
        AuditKind::FileChanged,
        AuditKind::Compaction,
        AuditKind::Error,
        AuditKind::Warning,
        AuditKind::ModeChanged,
        AuditKind::Undone,
        AuditKind::Network,
        AuditKind::Process,
        AuditKind::Skill,
        AuditKind::Review,
        AuditKind::Worktree,
    ];

    /// The stored name, snake_case (`tool_call`).
    pub fn as_str(self) -> &'static str {
        match self {
            AuditKind::SessionStarted => "session_started",
            AuditKind::UserMessage => "user_message",
            AuditKind::ModelRequest => "model_request",
            AuditKind::ToolCall => "tool_call",
            AuditKind::GuardDecision => "guard_decision",
            AuditKind::ApprovalRequested => "approval_requested",
            AuditKind::ApprovalResolved => "approval_resolved",
            AuditKind::ToolStarted => "tool_started",
            AuditKind::ToolCompleted => "tool_completed",
            AuditKind::ToolFailed => "tool_failed",
            AuditKind::FileChanged => "file_changed",
            AuditKind::Compaction => "compaction",
            AuditKind::Error => "error",
            AuditKind::Warning => "warning",
            AuditKind::ModeChanged => "mode_changed",
            AuditKind::Undone => "undone",
            AuditKind::Network => "network",
            AuditKind::Process => "process",
            AuditKind::Skill => "skill",
            AuditKind::Review => "review",
            AuditKind::Worktree => "worktree",
        }
    }
}

impl fmt::Display for AuditKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for AuditKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        AuditKind::ALL.into_iter().find(|k| k.as_str() == s).ok_or_else(|| {
            let names: Vec<&str> = AuditKind::ALL.iter().map(|k| k.as_str()).collect();
            format!("unknown audit kind `{s}` (expected one of {})", names.join(", "))
        })
    }
}

/// One event to record. Build it with [`AuditRecord::new`] and the setters, or fill the
/// public fields; the payload is sanitised when it is appended, not here.
///
/// ```
/// use bridle_core::audit::{AuditKind, AuditRecord};
/// let record = AuditRecord::new(AuditKind::ToolCall, 1_700_000_000_000)
///     .session("s1")
///     .call("c1")
///     .tool("bash")
///     .payload(serde_json::json!({"command": "ls"}));
/// assert_eq!(record.tool.as_deref(), Some("bash"));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct AuditRecord {
    /// When (ms since the epoch).
    pub at: i64,
    /// Session id.
    pub session_id: Option<String>,
    /// Turn id.
    pub turn_id: Option<String>,
    /// Tool call id.
    pub call_id: Option<String>,
    /// Tool name.
    pub tool: Option<String>,
    /// What happened.
    pub kind: AuditKind,
    /// The guard's (or the human's) decision, for decision rows.
    pub decision: Option<Decision>,
    /// Who decided.
    pub source: Option<DecisionSource>,
    /// Free status word, e.g. `ok`, `error`.
    pub status: Option<String>,
    /// Duration, where one applies.
    pub latency_ms: Option<i64>,
    /// Details; sanitised before storing.
    pub payload: Value,
}

impl AuditRecord {
    /// A record of `kind` at `at` (ms since the epoch) with every other field empty and an
    /// empty object as payload.
    pub fn new(kind: AuditKind, at: i64) -> AuditRecord {
        AuditRecord {
            at,
            session_id: None,
            turn_id: None,
            call_id: None,
            tool: None,
            kind,
            decision: None,
            source: None,
            status: None,
            latency_ms: None,
            payload: Value::Object(serde_json::Map::new()),
        }
    }

    /// Sets the session id.
    pub fn session(mut self, id: impl Into<String>) -> Self {
        self.session_id = Some(id.into());
        self
    }

    /// Sets the turn id.
    pub fn turn(mut self, id: impl Into<String>) -> Self {
        self.turn_id = Some(id.into());
        self
    }

    /// Sets the tool call id.
    pub fn call(mut self, id: impl Into<String>) -> Self {
        self.call_id = Some(id.into());
        self
    }

    /// Sets the tool name.
    pub fn tool(mut self, name: impl Into<String>) -> Self {
        self.tool = Some(name.into());
        self
    }

    /// Sets the decision and who made it.
    pub fn decision(mut self, decision: Decision, source: DecisionSource) -> Self {
        self.decision = Some(decision);
        self.source = Some(source);
        self
    }

    /// Sets the status word.
    pub fn status(mut self, status: impl Into<String>) -> Self {
        self.status = Some(status.into());
        self
    }

    /// Sets the duration.
    pub fn latency_ms(mut self, ms: i64) -> Self {
        self.latency_ms = Some(ms);
        self
    }

    /// Sets the payload.
    pub fn payload(mut self, payload: Value) -> Self {
        self.payload = payload;
        self
    }
}

/// The stored form of a decision (its wire name).
pub(crate) fn decision_str(decision: Decision) -> &'static str {
    match decision {
        Decision::Allow => "allow",
        Decision::Ask => "ask",
        Decision::Deny => "deny",
    }
}

/// Reads a stored decision back.
pub(crate) fn parse_decision(s: &str) -> Option<Decision> {
    [Decision::Allow, Decision::Ask, Decision::Deny].into_iter().find(|d| decision_str(*d) == s)
}

const SOURCES: [DecisionSource; 8] = [
    DecisionSource::Mode,
    DecisionSource::Rule,
    DecisionSource::Guard,
    DecisionSource::Sandbox,
    DecisionSource::User,
    DecisionSource::Timeout,
    DecisionSource::Validation,
    DecisionSource::Hook,
];

/// The stored form of a decision source (its wire name).
pub(crate) fn source_str(source: DecisionSource) -> &'static str {
    match source {
        DecisionSource::Mode => "mode",
        DecisionSource::Rule => "rule",
        DecisionSource::Guard => "guard",
        DecisionSource::Sandbox => "sandbox",
        DecisionSource::User => "user",
        DecisionSource::Timeout => "timeout",
        DecisionSource::Validation => "validation",
        DecisionSource::Hook => "hook",
    }
}

/// Reads a stored decision source back.
pub(crate) fn parse_source(s: &str) -> Option<DecisionSource> {
    SOURCES.into_iter().find(|d| source_str(*d) == s)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn kinds_round_trip_through_their_names() {
        for kind in AuditKind::ALL {
            assert_eq!(kind.as_str().parse::<AuditKind>().unwrap(), kind);
        }
        assert!("toolcall".parse::<AuditKind>().is_err());
    }

    #[test]
    fn stored_names_match_the_wire_names() {
        for d in [Decision::Allow, Decision::Ask, Decision::Deny] {
            assert_eq!(serde_json::to_value(d).unwrap(), decision_str(d));
            assert_eq!(parse_decision(decision_str(d)), Some(d));
        }
        for s in SOURCES {
            assert_eq!(serde_json::to_value(s).unwrap(), source_str(s));
            assert_eq!(parse_source(source_str(s)), Some(s));
        }
    }
}
