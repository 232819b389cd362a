//! How each session stands (DESIGN §16): its last turn as the engine recorded it, the questions
//! it waits on, and whether a live process runs it.
//!
//! Rule: a state is derived, never trusted from one source: a pending question makes a session
//! `needs-you` whoever holds it; a turn recorded `working` whose lease nobody holds died with its
//! process and is `failed`, until a process resumes it.

use std::collections::HashMap;

use bridle_protocol::{ApprovalSubject, SessionInfo, SessionState, WaitingFor};
use rusqlite::params;

use super::{SessionLease, Store, StoreError, StoredApproval};

/// How a turn stands, as the engine records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TurnState {
    /// A turn runs.
    Working,
    /// The last turn completed.
    Completed,
    /// The last turn ended in an error.
    Failed,
    /// The last turn was interrupted.
    Interrupted,
    /// The last turn waits on a question left to another process.
    Suspended,
}

impl TurnState {
    fn as_str(self) -> &'static str {
        match self {
            TurnState::Working => "working",
            TurnState::Completed => "completed",
            TurnState::Failed => "failed",
            TurnState::Interrupted => "interrupted",
            TurnState::Suspended => "suspended",
        }
    }
}

impl Store {
    /// Records how the session's turn stands.
    pub fn set_turn_state(&self, session_id: &str, state: TurnState) -> Result<(), StoreError> {
        self.conn()?
            .execute("UPDATE sessions SET turn_state = ?2 WHERE id = ?1", params![session_id, state.as_str()])?;
        Ok(())
    }

    /// The questions of every session (or of `session_id`) a person can still answer, oldest
    /// first: a call's approval always (a later process resumes its turn), a host or held changes
    /// only while a process runs the session (the command that asked dies with its process).
    pub fn inbox(&self, session_id: Option<&str>) -> Result<Vec<StoredApproval>, StoreError> {
        let mut held: HashMap<String, bool> = HashMap::new();
        let mut out = self.pending_approvals(session_id)?;
        out.retain(|stored| match stored.request.subject {
            ApprovalSubject::Call { .. } => true,
            ApprovalSubject::Host { .. } | ApprovalSubject::Changes { .. } => {
                let id = &stored.request.session_id;
                *held.entry(id.clone()).or_insert_with(|| self.held(id))
            }
        });
        Ok(out)
    }

    /// Fills in each session's state, what it waits for, and the branch its workspace is on;
    /// `only` names the one session listed, whose questions alone are read.
    pub(super) fn with_states(
        &self,
        mut sessions: Vec<(SessionInfo, String)>,
        only: Option<&str>,
    ) -> Result<Vec<SessionInfo>, StoreError> {
        let mut waiting: HashMap<String, (u32, WaitingFor)> = HashMap::new();
        for stored in self.inbox(only)? {
            let kind = match stored.request.subject {
                ApprovalSubject::Call { .. } => WaitingFor::Approval,
                ApprovalSubject::Host { .. } => WaitingFor::Host,
                ApprovalSubject::Changes { .. } => WaitingFor::Changes,
            };
            // Oldest first: the kind named is the one asked first.
            waiting.entry(stored.request.session_id.clone()).or_insert((0, kind)).0 += 1;
        }
        let mut worktrees: HashMap<String, super::WorktreeRecord> = match only {
            Some(id) => self.worktree(id)?.into_iter().map(|r| (r.session_id.clone(), r)).collect(),
            None => self.worktrees()?.into_iter().map(|r| (r.session_id.clone(), r)).collect(),
        };
        Ok(sessions
            .drain(..)
            .map(|(mut info, turn)| {
                info.state = match (waiting.get(&info.id), turn.as_str()) {
                    (Some(&(count, kind)), _) => {
                        info.waiting = count;
                        info.waiting_for = Some(kind);
                        SessionState::NeedsYou
                    }
                    (None, "working") if self.held(&info.id) => SessionState::Working,
                    (None, "working" | "failed") => SessionState::Failed,
                    (None, _) => SessionState::Idle,
                };
                info.branch = crate::worktrees::head(std::path::Path::new(&info.workspace));
                if let Some(record) = worktrees.remove(&info.id) {
                    let w = &record.worktree;
                    let archived = record.archived.is_some();
                    if archived {
                        info.state = SessionState::Archived;
                    }
                    info.branch = info.branch.take().or_else(|| Some(w.branch.clone()));
                    info.worktree = Some(bridle_protocol::SessionWorktree {
                        path: w.path.display().to_string(),
                        origin: w.origin.display().to_string(),
                        branch: w.branch.clone(),
                        base: w.base.clone(),
                        archived,
                        missing: !archived && w.path.symlink_metadata().is_err(),
                    });
                }
                info
            })
            .collect())
    }

    /// Whether a process holds the session's lease; a store with no data dir (in memory) has
    /// no leases, and its sessions count as held.
    fn held(&self, session_id: &str) -> bool {
        match self.dir.as_deref() {
            Some(dir) => SessionLease::is_held(dir, session_id).unwrap_or(false),
            None => true,
        }
    }
}
