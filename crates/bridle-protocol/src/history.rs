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
        /// The stream broke and no retry got through: this is the text the user saw before it
        /// stopped (never with tool calls: a call from an unfinished stream never runs).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        #[ts(as = "Option<bool>", optional)]
        cut_off: bool,
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
    /// Tokens the session used, input and output together.
    #[ts(type = "number")]
    #[serde(default)]
    pub total_tokens: u64,
    /// What the session is doing now (DESIGN §16).
    #[serde(default)]
    pub state: SessionState,
    /// What a `needs-you` session waits for: the kind of its oldest pending question.
    #[serde(default)]
    pub waiting_for: Option<WaitingFor>,
    /// How many questions of the session wait for an answer.
    #[serde(default)]
    pub waiting: u32,
    /// The branch its workspace is on now (`detached at <hash>` on none; `None`: no checkout).
    #[serde(default)]
    pub branch: Option<String>,
    /// The git worktree Bridle made for it, when it works in one.
    #[serde(default)]
    pub worktree: Option<SessionWorktree>,
    /// What it is as a child of another session (DESIGN §16.1), when it is one.
    #[serde(default)]
    pub agent: Option<crate::AgentInfo>,
}

/// A session's own git worktree (DESIGN §16).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SessionWorktree {
    /// Its folder, under the data dir's `worktrees/`.
    pub path: String,
    /// The main checkout it was made from.
    pub origin: String,
    /// Its branch (`bridle/<name>`).
    pub branch: String,
    /// The commit it was cut from.
    pub base: String,
    /// Put away under `refs/bridle/archive/<id>`; its folder is gone until restored.
    pub archived: bool,
    /// Not archived, yet its folder is gone (removed by hand): writes are refused until it is
    /// restored or archived.
    pub missing: bool,
}

/// What a session is doing, as one word a list can show.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum SessionState {
    /// A turn runs in a live process.
    Working,
    /// A question of it waits for an answer.
    NeedsYou,
    /// No turn runs and nothing waits.
    #[default]
    Idle,
    /// Its last turn ended in an error, or the process running it died mid-turn.
    Failed,
    /// Put away: nothing of it runs until it is restored.
    Archived,
}

impl SessionState {
    /// The word a list prints.
    pub fn as_str(self) -> &'static str {
        match self {
            SessionState::Working => "working",
            SessionState::NeedsYou => "needs-you",
            SessionState::Idle => "idle",
            SessionState::Failed => "failed",
            SessionState::Archived => "archived",
        }
    }
}

/// The kind of question a session waits on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum WaitingFor {
    /// A tool call waits for approval.
    Approval,
    /// A command asked to reach a host.
    Host,
    /// A command's held changes wait to land.
    Changes,
}

/// One item of a session snapshot: the item as stored, its turn, and whether a compaction
/// hides it from the model now.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SnapshotItem {
    /// Its turn (empty for items the store added itself).
    pub turn_id: String,
    /// `summarized` (replaced by the summary) or `masked` (its output hidden), when compacted.
    pub compacted: Option<String>,
    /// The item, as the user saw it.
    pub item: HistoryItem,
}

/// One file a turn changed, as its checkpoint keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct CheckpointChange {
    /// The turn.
    pub turn_id: String,
    /// The call.
    pub call_id: String,
    /// Workspace-relative POSIX path.
    pub path: String,
    /// `created`, `modified` or `deleted`.
    pub kind: String,
    /// Whether an undo put it back.
    pub undone: bool,
}

/// Everything a window needs to show a session again after a restart (`session_snapshot`,
/// `bridle sessions show ID --json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SessionSnapshot {
    /// The session.
    pub session: SessionInfo,
    /// The whole history, compacted items marked.
    pub items: Vec<SnapshotItem>,
    /// The summary the model sees in place of the summarised items.
    pub summary: Option<String>,
    /// Approval requests still waiting for an answer.
    pub pending_approvals: Vec<crate::ApprovalRequest>,
    /// The session's token totals.
    pub usage: crate::TokenUsage,
    /// Tokens the last request put in the window.
    #[ts(type = "number")]
    pub context_used: u64,
    /// Each turn's tokens, in the order the turns ran.
    pub turn_usage: Vec<TurnUsage>,
    /// Every file change the session made, oldest first.
    pub changes: Vec<CheckpointChange>,
    /// The session's plan as the model last set it (`update_plan`), empty when none.
    #[serde(default)]
    pub plan: Vec<PlanItem>,
    /// The children its calls started, oldest first (DESIGN §16.1).
    #[serde(default)]
    pub agents: Vec<crate::AgentInfo>,
    /// The `seq` of the last event this snapshot already reflects (0 outside the app); later
    /// events apply on top.
    #[ts(type = "number")]
    #[serde(default)]
    pub seq: u64,
}

/// One turn's tokens (all its model requests together).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct TurnUsage {
    /// The turn.
    pub turn_id: String,
    /// Its tokens.
    pub usage: crate::TokenUsage,
}

/// Where a step of the plan is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum PlanStatus {
    /// Not started.
    Pending,
    /// Being worked on (one at a time).
    InProgress,
    /// Finished.
    Done,
}

/// One step of the model's plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PlanItem {
    /// What the step does.
    pub step: String,
    /// Where it is.
    pub status: PlanStatus,
}
