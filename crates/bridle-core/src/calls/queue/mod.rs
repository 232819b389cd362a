//! The approval queue: calls that deserve a human look wait here for an answer.
//!
//! Requests live in the conversation store, so they survive the process and can be answered
//! from another one (`bridle approvals approve`). Rules kept here: an answer is accepted once —
//! whichever arrives first wins, the other is refused; an answer that names a call hash names
//! exactly one call, and one carrying another call's hash is refused; a request nobody answers
//! expires as denied; an interrupted turn denies its requests. Waiting is woken by answers from
//! this process and by a short poll for answers written by others.

use std::sync::Arc;
use std::time::Duration;

use bridle_protocol::{ApprovalAnswer, DecisionSource};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::clock::Clock;
use crate::store::{ApprovalStatus, RecordedAnswer, Store, StoreError, StoredApproval};

/// A human's answer, as submitted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// The request answered.
    pub approval_id: String,
    /// The answer.
    pub decision: ApprovalAnswer,
    /// Words for the model.
    pub feedback: Option<String>,
    /// Replacement arguments (JSON text), judged again before they run.
    pub edited_arguments: Option<String>,
    /// The call hash the answerer saw; when given it must match the request's.
    pub call_hash: Option<String>,
}

/// Why an answer was refused.
#[derive(Debug, thiserror::Error)]
pub enum AnswerError {
    /// No request has that id.
    #[error("no approval request `{0}`")]
    Unknown(String),
    /// The request belongs to another session than the one answering.
    #[error("approval request `{0}` belongs to another session")]
    WrongSession(String),
    /// The answer's call hash is not the request's: it was meant for another call.
    #[error("the answer to `{0}` names another call (its call hash differs); nothing was run")]
    WrongCall(String),
    /// Someone (or the clock) answered first.
    #[error("approval request `{id}` is already {status}")]
    AlreadyAnswered {
        /// The request.
        id: String,
        /// How it was settled.
        status: String,
    },
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The queue of one store; cheap to clone.
#[derive(Clone)]
pub struct ApprovalQueue {
    store: Arc<Store>,
    clock: Arc<dyn Clock>,
    answered: Arc<Notify>,
    poll: Duration,
}

impl ApprovalQueue {
    /// A queue over `store`.
    pub fn new(store: Arc<Store>, clock: Arc<dyn Clock>) -> Self {
        Self { store, clock, answered: Arc::new(Notify::new()), poll: Duration::from_millis(200) }
    }

    /// Records a human's answer for a request of `session_id` (any session when `None`).
    pub fn answer(&self, answer: &Answer, session_id: Option<&str>) -> Result<StoredApproval, AnswerError> {
        let id = &answer.approval_id;
        let stored = self.store.approval(id)?.ok_or_else(|| AnswerError::Unknown(id.clone()))?;
        if session_id.is_some_and(|s| s != stored.request.session_id) {
            return Err(AnswerError::WrongSession(id.clone()));
        }
        if answer.call_hash.as_ref().is_some_and(|h| *h != stored.request.call_hash) {
            return Err(AnswerError::WrongCall(id.clone()));
        }
        let status = match answer.decision {
            ApprovalAnswer::Deny => ApprovalStatus::Denied,
            _ => ApprovalStatus::Approved,
        };
        let recorded = RecordedAnswer {
            decision: answer.decision,
            source: DecisionSource::User,
            feedback: answer.feedback.clone(),
            edited_arguments: answer.edited_arguments.clone(),
            at: self.clock.now_ms(),
        };
        if !self.store.answer_approval(id, status, &recorded)? {
            let now = self.store.approval(id)?.map(|s| status_word(s.status)).unwrap_or("gone");
            return Err(AnswerError::AlreadyAnswered { id: id.clone(), status: now.to_string() });
        }
        self.answered.notify_waiters();
        Ok(StoredApproval { status, answer: Some(recorded), ..stored })
    }

    /// Denies every pending request of `session_id` (an interrupt, or a new message), returning
    /// their ids.
    pub fn deny_pending(&self, session_id: &str, why: &str) -> Result<Vec<String>, StoreError> {
        let mut denied = Vec::new();
        for stored in self.store.pending_approvals(Some(session_id))? {
            if self.withdraw(&stored.request.id, why)? {
                denied.push(stored.request.id);
            }
        }
        Ok(denied)
    }

    /// Withdraws one pending request (its call will not run whatever the answer); `false` when
    /// it was already settled.
    pub fn withdraw(&self, id: &str, why: &str) -> Result<bool, StoreError> {
        let withdrawn = self.settle(id, ApprovalStatus::Interrupted, DecisionSource::User, why)?;
        if withdrawn {
            self.answered.notify_waiters();
        }
        Ok(withdrawn)
    }

    /// Waits until request `id` is settled: answered (here or by another process), expired at
    /// its `expires_at`, or interrupted through `cancel`.
    pub async fn wait(&self, id: &str, cancel: &CancellationToken) -> Result<StoredApproval, StoreError> {
        let mut deadline = None;
        loop {
            let notified = self.answered.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let stored = self.store.approval(id)?.ok_or_else(|| StoreError::Corrupt {
                id: 0,
                message: format!("approval request `{id}` disappeared"),
            })?;
            if stored.status != ApprovalStatus::Pending {
                return Ok(stored);
            }
            // Measured on the monotonic clock from the first look, so a fixed or skewed wall
            // clock still expires requests.
            let deadline = *deadline.get_or_insert_with(|| {
                let left = stored.request.expires_at.saturating_sub(self.clock.now_ms()).max(0);
                tokio::time::Instant::now() + Duration::from_millis(left as u64)
            });
            if tokio::time::Instant::now() >= deadline {
                self.settle(id, ApprovalStatus::Expired, DecisionSource::Timeout, "nobody answered in time")?;
                continue;
            }
            let nap = (deadline - tokio::time::Instant::now()).min(self.poll);
            tokio::select! {
                _ = notified => {}
                _ = tokio::time::sleep(nap) => {}
                _ = cancel.cancelled() => {
                    self.settle(id, ApprovalStatus::Interrupted, DecisionSource::User, "the turn was interrupted")?;
                }
            }
        }
    }

    fn settle(&self, id: &str, status: ApprovalStatus, source: DecisionSource, why: &str) -> Result<bool, StoreError> {
        let answer = RecordedAnswer {
            decision: ApprovalAnswer::Deny,
            source,
            feedback: Some(why.to_string()),
            edited_arguments: None,
            at: self.clock.now_ms(),
        };
        self.store.answer_approval(id, status, &answer)
    }
}

/// A status as a word for messages.
pub fn status_word(status: ApprovalStatus) -> &'static str {
    match status {
        ApprovalStatus::Stale => "stale (the file changed before it ran)",
        ApprovalStatus::Started => "approved and run",
        other => other.as_str(),
    }
}

#[cfg(test)]
mod tests;
