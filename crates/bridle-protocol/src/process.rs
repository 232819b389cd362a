//! Background processes (DESIGN §4.4), as the window and the CLI show them.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Where a background process stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum ProcessState {
    /// Still running.
    Running,
    /// It ended by itself.
    Exited,
    /// It was stopped (by `process_stop`, the user, or its session ending).
    Stopped,
}

impl ProcessState {
    /// The name in the store, the audit and `data-state`.
    pub fn as_str(self) -> &'static str {
        match self {
            ProcessState::Running => "running",
            ProcessState::Exited => "exited",
            ProcessState::Stopped => "stopped",
        }
    }
}

/// One background process of a session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ProcessInfo {
    /// Its id in the session (`p1`, `p2`, ...).
    pub id: String,
    /// The session that started it.
    pub session_id: String,
    /// The command line.
    pub command: String,
    /// Where it stands.
    pub state: ProcessState,
    /// When it started (ms since the epoch).
    #[ts(type = "number")]
    pub started_at: i64,
    /// When it ended (ms since the epoch).
    #[ts(type = "number | null")]
    pub ended_at: Option<i64>,
    /// Its exit code, once it exited with one.
    pub exit_code: Option<i32>,
    /// The end of its output (at most a few KiB; empty when not known here).
    pub tail: String,
    /// Workspace files it changed, listed when it ended (not undoable).
    pub changed: Vec<String>,
}
