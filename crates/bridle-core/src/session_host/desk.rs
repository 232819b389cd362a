//! The window's desk of many sessions (DESIGN §16): one inbox of every session's questions, an
//! answer sent to the session that asked, and a session's own worktree made, archived,
//! restored and handed back from the window.
//!
//! Rules: an answer goes to the engine of the request's session, which is opened (not shown)
//! when it is not live, so a question of any session of the data dir can be answered here; a
//! live session is closed before its worktree is archived, and one with a turn running or a
//! question waiting is not archived; each worktree step is core's [`crate::desk`], audited
//! there.

use std::path::PathBuf;

use bridle_protocol::{ApprovalRequest, ErrorCode, ErrorInfo, Op, SessionState, SessionSummary};

use super::{blocking, close_live, failure, Failure, SessionHost};
use crate::clock::{Clock, SystemClock};
use crate::desk::DeskError;
use crate::engine::{Engine, SessionSpec};

impl SessionHost {
    /// Queues `op`: an answer on the engine of the session that asked, any other op on the
    /// shown session's.
    pub async fn submit(&self, op: Op) -> Result<(), ErrorInfo> {
        let engine = match &op {
            Op::ResolveApproval { approval_id, .. } => self.engine_asking(approval_id).await?,
            _ => self.engine().await?,
        };
        engine.submit(op).await.map_err(|e| failure(ErrorCode::EngineClosed, e))
    }

    /// Every question waiting in this data dir, oldest first: each live session's, and the
    /// approvals of sessions no process runs now (an answer opens them).
    pub async fn inbox(&self) -> Result<Vec<ApprovalRequest>, ErrorInfo> {
        let store = self.0.store.clone();
        blocking(ErrorCode::StoreReadFailed, move || {
            Ok(store.inbox(None)?.into_iter().map(|stored| stored.request).collect())
        })
        .await
    }

    /// A new session in a worktree of the launch's workspace (`bridle/<name>`, the id's start
    /// when no name is given), shown.
    pub async fn session_new_worktree(&self, name: Option<String>) -> Result<SessionSummary, ErrorInfo> {
        let wiring = self.wiring();
        let audit = wiring.audit().map_err(|e| failure(ErrorCode::SessionOpenFailed, e))?;
        let (store, origin, data_dir) = (self.0.store.clone(), wiring.workspace.clone(), wiring.data_dir.clone());
        let (id, worktree) = blocking(ErrorCode::WorktreeFailed, move || {
            let name = name.as_deref().map(str::trim).filter(|n| !n.is_empty());
            let made = crate::desk::new_session(&store, &audit, &data_dir, &origin, name, None, SystemClock.now_ms());
            made.map_err(Failure::from)
        })
        .await?;
        self.show(SessionSpec::Resume(id), worktree.path).await.map_err(|e| failure(ErrorCode::SessionOpenFailed, e))
    }

    /// Archives session `id`'s worktree; a live session is closed first, unless it is working
    /// or waiting for an answer.
    pub async fn session_archive(&self, id: String) -> Result<(), ErrorInfo> {
        let store = self.0.store.clone();
        let check = id.clone();
        let state = blocking(ErrorCode::NoSuchSession, move || Ok(store.session(&check)?.state)).await?;
        if matches!(state, SessionState::Working | SessionState::NeedsYou) {
            let why = format!("session {id} is {}; stop it or answer it first", state.as_str());
            return Err(failure(ErrorCode::WorktreeFailed, why));
        }
        self.close_one(&id).await;
        self.worktree_step(move |store, audit, data_dir, now| crate::desk::archive(store, audit, data_dir, &id, now))
            .await
    }

    /// Brings session `id`'s worktree back (it is not opened).
    pub async fn session_restore(&self, id: String) -> Result<(), ErrorInfo> {
        self.worktree_step(move |store, audit, data_dir, now| crate::desk::restore(store, audit, data_dir, &id, now))
            .await
    }

    /// Brings session `id`'s changes since its base into the main checkout (a dry run writes
    /// nothing); answers the change as a patch.
    pub async fn session_apply(&self, id: String, dry_run: bool) -> Result<String, ErrorInfo> {
        self.worktree_step(move |store, audit, _, now| {
            crate::desk::apply(store, audit, &id, dry_run, now).map(|applied| applied.patch)
        })
        .await
    }

    /// Merges session `id`'s branch into the clean main checkout; answers the merge commit.
    pub async fn session_merge(&self, id: String) -> Result<String, ErrorInfo> {
        self.worktree_step(move |store, audit, _, now| crate::desk::merge(store, audit, &id, now)).await
    }

    /// Runs one of core's worktree steps on the blocking pool, its audit rows flushed.
    async fn worktree_step<T: Send + 'static>(
        &self,
        step: impl FnOnce(&crate::store::Store, &crate::audit::AuditSink, &std::path::Path, i64) -> Result<T, DeskError>
            + Send
            + 'static,
    ) -> Result<T, ErrorInfo> {
        let wiring = self.wiring();
        let audit = wiring.audit().map_err(|e| failure(ErrorCode::WorktreeFailed, e))?;
        let (store, data_dir) = (self.0.store.clone(), wiring.data_dir);
        blocking(ErrorCode::WorktreeFailed, move || {
            let done = step(&store, &audit, &data_dir, SystemClock.now_ms());
            audit.flush().map_err(Failure::from)?;
            done.map_err(Failure::from)
        })
        .await
    }

    /// Closes session `id` when it is live here; when it was the shown one, another live one
    /// is shown.
    pub(super) async fn close_one(&self, id: &str) {
        let Some(live) = self.0.sessions.lock().await.remove(id) else { return };
        close_live(live).await;
        self.0.forget_children(id).await;
        if self.0.shown().as_deref() == Some(id) {
            self.show_any().await;
        }
    }

    /// The engine of the session that asked `request_id`, opened (not shown) when not live.
    async fn engine_asking(&self, request_id: &str) -> Result<Engine, ErrorInfo> {
        let (store, request) = (self.0.store.clone(), request_id.to_string());
        let session = blocking(ErrorCode::NoSuchSession, move || {
            let stored = store.approval(&request)?.ok_or_else(|| Failure::from(format!("no request {request}")))?;
            Ok(store.session(&stored.request.session_id)?)
        })
        .await?;
        let mut sessions = self.0.sessions.lock().await;
        if let Some(live) = sessions.get(&session.id) {
            return Ok(live.engine.clone());
        }
        // A child's question is answered through its parent, which opens it again if need be.
        let session = match &session.agent {
            Some(agent) => {
                if let Some(live) = sessions.get(&agent.parent_id) {
                    return Ok(live.engine.clone());
                }
                let (store, parent) = (self.0.store.clone(), agent.parent_id.clone());
                blocking(ErrorCode::NoSuchSession, move || Ok(store.session(&parent)?)).await?
            }
            None => session,
        };
        let opened = self
            .spawn(SessionSpec::Resume(session.id.clone()), PathBuf::from(&session.workspace))
            .await
            .map_err(|e| failure(ErrorCode::SessionOpenFailed, e))?;
        let engine = opened.engine.clone();
        sessions.insert(session.id, opened);
        Ok(engine)
    }
}
