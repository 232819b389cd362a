//! The host's sessions: what the shown one holds (its pending requests, its stored snapshot), the
//! stored list, and showing another one.
//!
//! Rule: deleting a live session closes it first; deleting the shown one shows another live
//! one, or a new one, so the window always shows a live session.

use std::path::Path;

use bridle_protocol::{
    ApprovalRequest, ErrorCode, ErrorInfo, SessionInfo, SessionSnapshot, SessionState, SessionSummary,
};

use super::{blocking, failure, Failure, SessionHost};
use crate::clock::{Clock, SystemClock};
use crate::engine::SessionSpec;
use crate::processes::ProcessError;

impl SessionHost {
    /// The open session's requests still waiting for an answer (the window asks on load:
    /// requests announced before it listened are not lost).
    pub async fn pending_approvals(&self) -> Result<Vec<ApprovalRequest>, ErrorInfo> {
        let id = self.engine().await?.session_id().to_string();
        let store = self.0.store.clone();
        blocking(ErrorCode::StoreReadFailed, move || {
            Ok(store.pending_approvals(Some(&id))?.into_iter().map(|stored| stored.request).collect())
        })
        .await
    }

    /// The open session as stored, and the `seq` of the last event sent before it was read:
    /// the window applies only later events on top.
    pub async fn session_snapshot(&self) -> Result<SessionSnapshot, ErrorInfo> {
        let engine = self.engine().await?;
        let seq = engine.events_sent();
        let id = engine.session_id().to_string();
        let store = self.0.store.clone();
        blocking(ErrorCode::StoreReadFailed, move || {
            let _phase = crate::clock::Phase::start("session snapshot read");
            Ok(SessionSnapshot { seq, ..crate::compaction::snapshot(&store, &id, SystemClock.now_ms())? })
        })
        .await
    }

    /// The open session's background processes, oldest first.
    pub async fn processes_list(&self) -> Result<Vec<bridle_protocol::ProcessInfo>, ErrorInfo> {
        Ok(self.engine().await?.processes())
    }

    /// Stops background process `id` of the open session; answers once it has ended.
    pub async fn process_stop(&self, id: String) -> Result<bridle_protocol::ProcessInfo, ErrorInfo> {
        self.engine().await?.stop_process(&id).await.map_err(|e| match e {
            ProcessError::Unknown { .. } => failure(ErrorCode::NoSuchProcess, e),
            ProcessError::Record(_) => failure(ErrorCode::StoreWriteFailed, e),
        })
    }

    /// The hunks of one turn of the open session (§10.1).
    pub async fn review_turn(&self, turn_id: Option<String>) -> Result<bridle_protocol::TurnReview, ErrorInfo> {
        self.engine().await?.review_turn(turn_id).await.map_err(review_failure)
    }

    /// Keeps, rejects or unrejects hunks of the open session, all or none.
    pub async fn review_decide(
        &self,
        decision: bridle_protocol::ReviewDecision,
        ids: Vec<String>,
    ) -> Result<bridle_protocol::TurnReview, ErrorInfo> {
        self.engine().await?.review_decide(decision, &ids).await.map_err(review_failure)
    }

    /// Every stored session, newest first.
    pub async fn sessions_list(&self) -> Result<Vec<SessionInfo>, ErrorInfo> {
        let store = self.0.store.clone();
        blocking(ErrorCode::StoreReadFailed, move || Ok(store.sessions()?)).await
    }

    /// Opens a stored session in its own workspace.
    pub async fn session_open(&self, session_id: String) -> Result<SessionSummary, ErrorInfo> {
        let store = self.0.store.clone();
        let id = session_id.clone();
        let info = blocking(ErrorCode::NoSuchSession, move || Ok(store.session(&id)?)).await?;
        // A child runs only under its parent: one whose parent is not open opens with it.
        if let Some(agent) = &info.agent {
            let live = {
                let sessions = self.0.sessions.lock().await;
                sessions.contains_key(&session_id) || sessions.values().any(|l| l.engine.agent(&session_id).is_some())
            };
            if !live {
                return Box::pin(self.session_open(agent.parent_id.clone())).await;
            }
        }
        let workspace = Path::new(&info.workspace).canonicalize().map_err(|e| {
            failure(
                ErrorCode::WorkspaceMissing,
                format!("the session's workspace {} cannot be opened: {e}", info.workspace),
            )
        })?;
        self.show(SessionSpec::Resume(session_id), workspace)
            .await
            .map_err(|e| failure(ErrorCode::SessionOpenFailed, e))
    }

    /// A new session in the launch's workspace; in a worktree of its own when the workspace is
    /// a git checkout another session is busy in (working, or waiting for an answer).
    pub async fn session_new(&self) -> Result<SessionSummary, ErrorInfo> {
        let workspace = self.wiring().workspace;
        let (store, here) = (self.0.store.clone(), workspace.display().to_string());
        let busy = blocking(ErrorCode::StoreReadFailed, move || {
            let busy = |s: &SessionInfo| matches!(s.state, SessionState::Working | SessionState::NeedsYou);
            Ok(store.sessions()?.iter().any(|s| s.workspace == here && busy(s)))
        })
        .await?;
        if busy && crate::worktrees::head(&workspace).is_some() {
            match self.session_new_worktree(None).await {
                Ok(summary) => return Ok(summary),
                Err(e) => tracing::info!("a new session stays in the busy checkout: {}", e.message),
            }
        }
        self.show(SessionSpec::New, workspace).await.map_err(|e| failure(ErrorCode::SessionOpenFailed, e))
    }

    /// Deletes a session and its file snapshots, closing it first when it is live; answers the
    /// session shown after (another live one, or a new one, when it was the shown one).
    pub async fn session_delete(&self, session_id: String) -> Result<SessionSummary, ErrorInfo> {
        self.close_one(&session_id).await;
        let (store, data_dir) = (self.0.store.clone(), self.wiring().data_dir);
        blocking(ErrorCode::SessionDeleteFailed, move || {
            crate::changes::delete_session(&store, &data_dir, &session_id).map_err(Failure::from)
        })
        .await?;
        match self.summary().await {
            Ok(summary) => Ok(summary),
            Err(_) => self.session_new().await,
        }
    }
}

/// A review's failure as the window gets it: a conflict apart, so it can say "changed since".
fn review_failure(e: crate::changes::ReviewError) -> ErrorInfo {
    match e {
        crate::changes::ReviewError::Conflict(_) => failure(ErrorCode::ReviewConflict, e),
        _ => failure(ErrorCode::ReviewFailed, e),
    }
}
