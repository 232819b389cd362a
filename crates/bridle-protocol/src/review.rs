//! Reviewing a turn hunk by hunk (DESIGN §10.1): the hunks of a turn's changes, each with where
//! it came from and its state, and the decisions a person makes on them.
//!
//! Rule: a hunk's id names it for every front end (the window, `bridle sessions review`); its
//! range is where its lines stand in the file as the turn left it, 1-based.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Where a hunk stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum HunkState {
    /// Not decided yet.
    Pending,
    /// Kept: reviewed, left as the turn made it.
    Kept,
    /// Rejected: its lines hold what they held before the turn.
    Rejected,
    /// Not decided, and its lines changed since the turn (by the user, a command or a later
    /// turn): it can only be kept, a reject fails naming the lines.
    Conflict,
}

/// What a hunk changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum HunkKind {
    /// Some lines of a text file.
    Text,
    /// The file was created (rejecting it removes the file).
    Created,
    /// The file was deleted (rejecting it restores the file).
    Deleted,
    /// A binary file changed (one hunk for the whole file).
    Binary,
    /// Only the file's permissions changed.
    Mode,
}

/// A span of lines, 1-based; `lines` is 0 for a point between two lines (then `start` is the
/// line after it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct LineRange {
    /// The first line.
    #[ts(type = "number")]
    pub start: u64,
    /// How many lines.
    #[ts(type = "number")]
    pub lines: u64,
}

/// The call that made a hunk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct HunkCall {
    /// Bridle's id of the call.
    pub call_id: String,
    /// The tool (`edit_file`, `bash`, ...).
    pub tool: String,
    /// For `bash`, the command it ran.
    pub command: Option<String>,
}

/// One hunk of a turn's changes to one file, against the file's content before the turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Hunk {
    /// Its id, the same in every front end.
    pub id: String,
    /// The turn.
    pub turn_id: String,
    /// Workspace-relative POSIX path.
    pub path: String,
    /// What it changes.
    pub kind: HunkKind,
    /// Its lines in the file as the turn left it.
    pub range: LineRange,
    /// The lines it replaced, in the file before the turn.
    pub base_range: LineRange,
    /// Where it stands.
    pub state: HunkState,
    /// The text before the turn (empty for a created, binary or mode hunk).
    pub old_text: String,
    /// The text the turn wrote (empty for a deleted, binary or mode hunk).
    pub new_text: String,
    /// The call that made it.
    pub call: HunkCall,
}

/// A turn's hunks, file by file in path order, and how far its review got.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct TurnReview {
    /// The session.
    pub session_id: String,
    /// The turn.
    pub turn_id: String,
    /// Every hunk.
    pub hunks: Vec<Hunk>,
    /// Hunks decided (kept or rejected).
    #[ts(type = "number")]
    pub decided: u64,
}

/// What a person decides on hunks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum ReviewDecision {
    /// Reviewed and kept.
    Keep,
    /// Its lines go back to what they held before the turn.
    Reject,
    /// A rejected hunk comes back as the turn made it.
    Unreject,
}

impl ReviewDecision {
    /// The decision as the audit records it (`keep`, `reject`, `unreject`).
    pub fn as_str(self) -> &'static str {
        match self {
            ReviewDecision::Keep => "keep",
            ReviewDecision::Reject => "reject",
            ReviewDecision::Unreject => "unreject",
        }
    }
}
