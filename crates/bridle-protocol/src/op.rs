//! What the UI or the CLI submits to the engine.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::{ApprovalAnswer, Mode};

/// One submission to the engine's queue.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum Op {
    /// The user's message; starts a turn (or waits for the running one to end).
    UserMessage {
        /// The message text.
        text: String,
    },
    /// Stop the running turn: streaming, processes and pending approvals.
    Interrupt,
    /// A human's answer to an approval request.
    ResolveApproval {
        /// The request answered.
        approval_id: String,
        /// The answer.
        decision: ApprovalAnswer,
        /// Words for the model when denying.
        feedback: Option<String>,
        /// Replacement arguments (JSON text), judged again before anything runs.
        edited_arguments: Option<String>,
        /// The request's call hash; when given, an answer whose hash differs is refused, so an
        /// answer meant for one call can never run another.
        #[serde(default)]
        #[ts(optional)]
        call_hash: Option<String>,
    },
    /// Switch the session's approval mode from the next tool call on (`plan` also makes the
    /// shell sandbox read-only).
    SetMode {
        /// The new mode.
        mode: Mode,
    },
    /// Summarise older history to free context.
    Compact,
    /// Restore files from a checkpoint, all of them or the given paths.
    Undo {
        /// The checkpoint to restore.
        checkpoint_id: String,
        /// Workspace-relative paths; all when absent.
        paths: Option<Vec<String>>,
    },
}
