//! What the engine reports, in order, on its event stream.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::{ApprovalAnswer, ApprovalRequest, DecisionSource, ErrorInfo, Mode, TokenUsage, ToolCall, ToolResult};

/// What a [`Event::Warning`] is about: a closed list, so every reader switches on it whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum WarningCode {
    /// The config promised a larger context window than the server serves.
    ContextWindowCorrected,
    /// The server counted far fewer prompt tokens than Bridle sent, so it cut the prompt.
    PromptTruncated,
    /// An MCP server stopped during the session; its tools fail until it is restarted.
    McpServerStopped,
}

impl WarningCode {
    /// The code as it is written (the audit row's status, the CLI's `warning [code]`).
    pub fn as_str(self) -> &'static str {
        match self {
            WarningCode::ContextWindowCorrected => "context_window_corrected",
            WarningCode::PromptTruncated => "prompt_truncated",
            WarningCode::McpServerStopped => "mcp_server_stopped",
        }
    }
}

impl std::fmt::Display for WarningCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a turn ended without the model's final answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum AbortReason {
    /// The user interrupted it.
    Interrupted,
    /// It reached `max_steps` model requests.
    MaxSteps,
    /// The model repeated the same call too often.
    LoopGuard,
    /// The provider failed for good.
    Error,
}

/// How a tool call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum ToolStatus {
    /// Ran and succeeded.
    Ok,
    /// Ran and failed, or could not run (unknown tool, invalid arguments, timeout).
    Error,
    /// The guard or a human refused it.
    Denied,
    /// Stopped by an interrupt.
    Interrupted,
}

/// An event as the desktop shell forwards it: numbered from 1 in the order its session sent
/// it, so the window can skip what a snapshot (`SessionSnapshot.seq`) already holds. In
/// TypeScript: `Event & { seq: number }` (see [`crate::bindings`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SequencedEvent {
    /// The event's number in its session's stream.
    pub seq: u64,
    /// The event.
    #[serde(flatten)]
    pub event: Event,
}

/// One engine event; every event names its session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum Event {
    /// A turn began.
    TurnStarted {
        /// Session id.
        session_id: String,
        /// Turn id.
        turn_id: String,
    },
    /// The model set its plan (`update_plan`): the whole checklist as it stands.
    PlanUpdated {
        /// Session id.
        session_id: String,
        /// Turn id.
        turn_id: String,
        /// Every step with its status.
        items: Vec<crate::PlanItem>,
    },
    /// A piece of the assistant's text as it streams.
    AssistantDelta {
        /// Session id.
        session_id: String,
        /// Turn id.
        turn_id: String,
        /// The new text.
        text: String,
    },
    /// The assistant's whole text for one step; replaces the deltas seen before it.
    AssistantMessage {
        /// Session id.
        session_id: String,
        /// Turn id.
        turn_id: String,
        /// The full text.
        text: String,
    },
    /// A tool call is about to be judged and run.
    ToolCallBegin {
        /// Session id.
        session_id: String,
        /// Turn id.
        turn_id: String,
        /// The call.
        call: ToolCall,
    },
    /// A tool call ended; its result is what the model receives.
    ToolCallEnd {
        /// Session id.
        session_id: String,
        /// Turn id.
        turn_id: String,
        /// How it ended.
        status: ToolStatus,
        /// Time from start of execution to result.
        #[ts(type = "number")]
        duration_ms: u64,
        /// The result.
        result: ToolResult,
    },
    /// A call waits for a human.
    ApprovalRequested {
        /// Session id.
        session_id: String,
        /// The request.
        request: ApprovalRequest,
    },
    /// A request was answered (or expired, or was interrupted).
    ApprovalResolved {
        /// Session id.
        session_id: String,
        /// The request.
        approval_id: String,
        /// The answer.
        decision: ApprovalAnswer,
        /// Who answered.
        source: DecisionSource,
    },
    /// A file tool changed a file.
    FileChanged {
        /// Session id.
        session_id: String,
        /// Turn id.
        turn_id: String,
        /// The call that changed it.
        call_id: String,
        /// Workspace-relative POSIX path.
        path: String,
        /// Unified diff.
        diff: String,
    },
    /// Tokens spent by the last model request, and the session's totals.
    TokenUsage {
        /// Session id.
        session_id: String,
        /// Turn id.
        turn_id: String,
        /// This request.
        usage: TokenUsage,
        /// The whole session.
        total: TokenUsage,
        /// Tokens the last request put in the context window.
        #[ts(type = "number")]
        context_used: u64,
        /// The model's context window, when known.
        #[ts(type = "number | null")]
        context_window: Option<u64>,
    },
    /// Older history was summarised.
    Compacted {
        /// Session id.
        session_id: String,
        /// Estimated tokens before.
        #[ts(type = "number")]
        tokens_before: u64,
        /// Estimated tokens after.
        #[ts(type = "number")]
        tokens_after: u64,
    },
    /// The model gave its final answer.
    TurnCompleted {
        /// Session id.
        session_id: String,
        /// Turn id.
        turn_id: String,
    },
    /// The turn ended early.
    TurnAborted {
        /// Session id.
        session_id: String,
        /// Turn id.
        turn_id: String,
        /// Why.
        reason: AbortReason,
    },
    /// The turn waits for approvals nobody in this process will answer (`bridle run --on-ask
    /// defer`); the requests stay pending in the store and the turn resumes when they are answered.
    TurnSuspended {
        /// Session id.
        session_id: String,
        /// Turn id.
        turn_id: String,
        /// The pending requests.
        approval_ids: Vec<String>,
    },
    /// Files the session read or wrote changed on disk behind its back (the user, an editor,
    /// another program): their next edit is refused until the agent reads them again.
    FilesChangedOnDisk {
        /// Session id.
        session_id: String,
        /// Workspace-relative POSIX paths.
        paths: Vec<String>,
    },
    /// Something the user should know that stops nothing ([`WarningCode`] says what).
    Warning {
        /// Session id.
        session_id: String,
        /// What it is about.
        code: WarningCode,
        /// What happened and what to do, for the user.
        message: String,
    },
    /// The model's stream broke and the step starts over: drop the step's partial text; until
    /// the next delta the window says "reconnecting (attempt/maxAttempts)".
    StreamRestarted {
        /// Session id.
        session_id: String,
        /// Turn id.
        turn_id: String,
        /// The attempt about to start (2 for the first retry).
        attempt: u32,
        /// Attempts in all.
        max_attempts: u32,
        /// Why the last one failed.
        reason: String,
    },
    /// An `undo` ended: the files put back, the files the turn had created and that were
    /// removed, and those left alone because they changed again since.
    Undone {
        /// Session id.
        session_id: String,
        /// The turn undone.
        turn_id: String,
        /// Restored to their content before the turn (recreated when it had deleted them).
        restored: Vec<String>,
        /// Created by the turn, removed.
        removed: Vec<String>,
        /// Left alone, with the reason.
        refused: Vec<UndoRefusal>,
    },
    /// The session's mode is now `mode`, and shell commands run as `sandbox` says (after every
    /// `setMode`; the session summary says the same at start).
    ModeChanged {
        /// Session id.
        session_id: String,
        /// The mode in force.
        mode: Mode,
        /// How `bash` runs: `bwrap`, `landlock` or `none`.
        sandbox: String,
        /// Why `bash` runs unconfined, when it does; when confined, what its sandbox does not hold
        /// (Landlock's gaps), if anything.
        unsandboxed_because: Option<String>,
        /// What of the home folder commands see, when the sandbox hides it.
        #[serde(default)]
        sandbox_home: Option<String>,
    },
    /// A background process started or ended (DESIGN §4.4); the window lists the session's
    /// processes again.
    ProcessChanged {
        /// Session id.
        session_id: String,
        /// The process as it stands now.
        process: crate::ProcessInfo,
    },
    /// A slash command built into Bridle ran (`/compact`, `/mode plan`, `/skills`, ...): what it
    /// says; it starts no turn.
    CommandDone {
        /// Session id.
        session_id: String,
        /// The command as typed.
        command: String,
        /// What it did or found, for the user.
        output: String,
        /// Whether it did what was asked.
        ok: bool,
    },
    /// A child session this session's call started changed: its state, last message, usage
    /// (DESIGN §16.1). The child's own events follow in this stream too, naming the child.
    AgentUpdated {
        /// Session id (the parent's).
        session_id: String,
        /// The child as it stands now.
        agent: crate::AgentInfo,
    },
    /// Something the user must see.
    Error {
        /// Session id.
        session_id: String,
        /// What happened.
        info: ErrorInfo,
    },
}

impl Event {
    /// The session every event names.
    pub fn session_id(&self) -> &str {
        match self {
            Event::TurnStarted { session_id, .. }
            | Event::AssistantDelta { session_id, .. }
            | Event::AssistantMessage { session_id, .. }
            | Event::ToolCallBegin { session_id, .. }
            | Event::ToolCallEnd { session_id, .. }
            | Event::ApprovalRequested { session_id, .. }
            | Event::ApprovalResolved { session_id, .. }
            | Event::FileChanged { session_id, .. }
            | Event::TokenUsage { session_id, .. }
            | Event::Compacted { session_id, .. }
            | Event::TurnCompleted { session_id, .. }
            | Event::TurnAborted { session_id, .. }
            | Event::TurnSuspended { session_id, .. }
            | Event::Undone { session_id, .. }
            | Event::StreamRestarted { session_id, .. }
            | Event::Warning { session_id, .. }
            | Event::PlanUpdated { session_id, .. }
            | Event::FilesChangedOnDisk { session_id, .. }
            | Event::ModeChanged { session_id, .. }
            | Event::ProcessChanged { session_id, .. }
            | Event::CommandDone { session_id, .. }
            | Event::AgentUpdated { session_id, .. }
            | Event::Error { session_id, .. } => session_id,
        }
    }
}

/// A file an undo left alone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct UndoRefusal {
    /// Workspace-relative POSIX path.
    pub path: String,
    /// Why it was left alone.
    pub reason: String,
}
