//! Subagents (DESIGN §16.1): a child session a parent's call started, as the parent's turn, a
//! list and a client show it.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::TokenUsage;

/// Where a child stands.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum AgentState {
    /// Its turn runs.
    #[default]
    Working,
    /// A question of it waits for a person.
    NeedsYou,
    /// Its turn ended with an answer; it waits for more input (`send_agent`) or to be closed.
    Idle,
    /// Its turn ended in an error, or it could not start.
    Failed,
    /// It was closed (by the parent, an interrupt, or the parent's end).
    Closed,
}

impl AgentState {
    /// The word a list prints (the same as the JSON's).
    pub fn as_str(self) -> &'static str {
        match self {
            AgentState::Working => "working",
            AgentState::NeedsYou => "needs-you",
            AgentState::Idle => "idle",
            AgentState::Failed => "failed",
            AgentState::Closed => "closed",
        }
    }

    /// Whether the child has stopped working on its own (a wait for it is over).
    pub fn settled(self) -> bool {
        !matches!(self, AgentState::Working | AgentState::NeedsYou)
    }
}

/// A child session, as its parent knows it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AgentInfo {
    /// The child's session id.
    pub id: String,
    /// The parent's session id.
    pub parent_id: String,
    /// The parent's turn that started it.
    pub turn_id: String,
    /// The parent's `spawn_agent` call that started it.
    pub call_id: String,
    /// What it was asked to do.
    pub task: String,
    /// Its role, when one was given.
    pub role: Option<String>,
    /// The model it talks to.
    pub model: Option<String>,
    /// Where it stands.
    pub state: AgentState,
    /// Its last message (its final answer once idle).
    pub last_message: Option<String>,
    /// Why it failed, when it did.
    pub error: Option<String>,
    /// Questions of it that nobody answered in time (each denied by the clock, not a person).
    #[serde(default)]
    pub expired: Vec<String>,
    /// The tokens it spent (already counted in its parent's totals).
    #[serde(default)]
    pub usage: TokenUsage,
}

impl AgentInfo {
    /// A short name for lists and prompts: its role, or `agent`, and the first 8 characters of
    /// its id.
    pub fn label(&self) -> String {
        let short: String = self.id.chars().take(8).collect();
        format!("{} {short}", self.role.as_deref().unwrap_or("agent"))
    }
}
