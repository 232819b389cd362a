//! Reviewing the session's turns hunk by hunk from a front end (DESIGN §10.1), and telling the
//! model of what was rejected.
//!
//! Rules: a decision is audited hunk by hunk (kind `review`: the file, range, hash of the hunk's
//! text, the decision and who made it); the rejected hunks the model has not heard of are told
//! once, as one note before the session's next user message, and stored with the history, so a
//! resumed session keeps it. A decision made in another process (`bridle sessions review`)
//! waits in the store and is told the same way.

use std::sync::Arc;

use bridle_protocol::{HistoryItem, ReviewDecision, TurnReview};

use super::session::Session;
use crate::audit::{AuditKind, AuditRecord, AuditSink};
use crate::changes::{BlobStore, Decided, ReviewError, Reviewer, SessionFiles};
use crate::clock::Clock;
use crate::store::Store;
use crate::workspace::Workspace;

/// What the engine hands a front end to review its session with.
pub(crate) struct ReviewDesk {
    pub session_id: String,
    pub store: Arc<Store>,
    pub blobs: BlobStore,
    pub files: Arc<SessionFiles>,
    pub audit: AuditSink,
    pub clock: Arc<dyn Clock>,
    pub front_end: &'static str,
}

impl ReviewDesk {
    pub(crate) fn of(session: &Session) -> ReviewDesk {
        ReviewDesk {
            session_id: session.id.clone(),
            store: session.deps.store.clone(),
            blobs: BlobStore::new(&session.config.data_dir),
            files: session.files.clone(),
            audit: session.deps.audit.clone(),
            clock: session.deps.clock.clone(),
            front_end: session.config.front_end,
        }
    }

    fn reviewer<'a>(&'a self, workspace: &'a Arc<Workspace>) -> Reviewer<'a> {
        Reviewer { store: &self.store, blobs: &self.blobs, workspace, session_id: &self.session_id }
    }

    /// The hunks of `turn_id` (the last turn with changes when `None`).
    pub(crate) async fn turn(
        &self,
        workspace: Arc<Workspace>,
        turn_id: Option<String>,
    ) -> Result<TurnReview, ReviewError> {
        let (store, blobs, session_id) = (self.store.clone(), self.blobs.clone(), self.session_id.clone());
        tokio::task::spawn_blocking(move || {
            let r = Reviewer { store: &store, blobs: &blobs, workspace: &workspace, session_id: &session_id };
            crate::changes::review_turn(r, turn_id.as_deref())
        })
        .await
        .map_err(|e| ReviewError::Read(format!("the review was interrupted ({e})")))?
    }

    /// Decides hunks `ids`, audits each decision, answers the turn as it stands after.
    pub(crate) async fn decide(
        &self,
        workspace: Arc<Workspace>,
        decision: ReviewDecision,
        ids: &[String],
    ) -> Result<TurnReview, ReviewError> {
        let now = self.clock.now_ms();
        let decided = crate::changes::decide(self.reviewer(&workspace), self.files.clone(), decision, ids, now).await?;
        for row in records(&self.session_id, &decided, decision, self.front_end, now) {
            self.audit.record(row);
        }
        Ok(decided.review)
    }
}

/// The audit rows of a decision: one per hunk, kind `review`.
pub fn records(
    session_id: &str,
    decided: &Decided,
    decision: ReviewDecision,
    who: &str,
    now_ms: i64,
) -> Vec<AuditRecord> {
    decided
        .hunks
        .iter()
        .map(|h| {
            AuditRecord::new(AuditKind::Review, now_ms)
                .session(session_id)
                .turn(h.turn_id.clone())
                .call(h.call_id.clone())
                .tool(h.tool.clone())
                .status(decision.as_str())
                .payload(crate::changes::audit_payload(h, decision, who))
        })
        .collect()
}

impl Session {
    /// Before a user message: the rejected hunks the model has not heard of, as one note.
    pub(crate) async fn tell_rejections(&self) {
        let rejected = match self.deps.store.untold_rejections(&self.id) {
            Ok(rejected) if !rejected.is_empty() => rejected,
            Ok(_) => return,
            Err(e) => return tracing::warn!("session {}: cannot read the rejected hunks: {e}", self.id),
        };
        self.record_note(HistoryItem::User { text: crate::changes::rejection_note(&rejected) }).await;
        let ids: Vec<i64> = rejected.iter().map(|h| h.id).collect();
        if let Err(e) = self.deps.store.mark_told(&ids) {
            tracing::warn!("session {}: the model was told of rejected hunks, but the store was not: {e}", self.id);
        }
    }
}
