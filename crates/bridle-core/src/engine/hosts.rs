//! The session's side of the network proxy ([`crate::network::Gate`]): a host the policy leaves
//! to a person becomes an approval request (tool `network`, `{host, port, command}`) in the
//! session's queue, shown and answered like any other while the connection waits; every
//! connection becomes one `network` audit row. A command's held changes (DESIGN §4.3,
//! [`crate::changes::EffectsDesk`]) are asked the same way (tool `effects`, `{command, files}`,
//! the diff as preview) after the command ended.
//!
//! Rules: a request is never held for a resumed turn (its stored call is its own, never the
//! command's, and it is marked run once answered), so an answer about a host or a change can
//! never run a command; a request that cannot wait (approvals deferred to another process) is refused at once
//! and says why; a turn has at most [`crate::network::bounds::PENDING_QUESTIONS`] questions
//! waiting at once, and one past that is refused without asking, saying so; "session" is kept
//! with the session's grants (a later process of the session reaches the host too) and "always"
//! writes the host to the config, both through the permit.

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use bridle_protocol::{ApprovalAnswer, ApprovalRequest, DecisionSource, Finding, Severity, ToolCall};
use serde_json::json;
use sha2::{Digest, Sha256};
use tokio_util::sync::CancellationToken;

use super::dispatch::TurnRecorder;
use super::session::Session;
use crate::audit::AuditKind;
use crate::calls::{connection_row, CallEvent, Recorder, EFFECTS_TOOL};
use crate::changes::{EffectsDesk, EffectsQuestion};
use crate::network::{bounds, Answer, Connection, Gate, HostRequest, Source};
use crate::store::ApprovalStatus;

/// The tool name network requests carry.
pub(crate) const NETWORK_TOOL: &str = "network";

/// One call's gate: the session, the turn, and the call's cancellation.
pub(crate) struct SessionGate {
    pub session: Arc<Session>,
    pub turn_id: String,
    pub cancel: CancellationToken,
}

#[async_trait]
impl Gate for SessionGate {
    async fn ask(&self, request: &HostRequest) -> Answer {
        let session = &self.session;
        let _place = match session.questions.take(&self.turn_id) {
            Ok(place) => place,
            Err(why) => return Answer::Refused(Source::Limit, why),
        };
        let desk = session.desk();
        let question = Question {
            tool: NETWORK_TOOL,
            call_id: &request.call_id,
            arguments: json!({"host": request.host, "port": request.port, "command": request.command}),
            findings: vec![Finding {
                guardian: NETWORK_TOOL.into(),
                rule: "unlisted-host".into(),
                severity: Severity::Medium,
                message: format!(
                    "the command wants to connect to {}:{}, which [sandbox.network] does not name",
                    request.host, request.port
                ),
                contained: false,
            }],
            preview: None,
            // What an answer about a host names: the host, the port and the call.
            hashed: vec![request.host.clone(), request.port.to_string(), request.call_id.clone()],
        };
        let (call, stored) = match self.put(question).await {
            Ok(put) => put,
            Err(why) => return Answer::Refused(Source::User, why),
        };
        let recorder = TurnRecorder { session, turn_id: &self.turn_id };
        let feedback = stored.answer.as_ref().and_then(|a| a.feedback.clone()).filter(|f| !f.trim().is_empty());
        match (stored.status, stored.answer.map(|a| a.decision)) {
            (ApprovalStatus::Approved, Some(ApprovalAnswer::ApproveSession)) => {
                let entry = crate::network::entry(&request.host, request.port);
                if let Some(problem) = session.calls().permit().grant_host(&entry, desk.clock.now_ms()) {
                    recorder.record(&call, CallEvent::Trouble(&problem)).await;
                }
                Answer::Session
            }
            (ApprovalStatus::Approved, Some(ApprovalAnswer::ApproveAlways)) => {
                let entry = crate::network::entry(&request.host, request.port);
                if let Some(problem) = session.calls().permit().allow_host_always(&entry) {
                    recorder.record(&call, CallEvent::Trouble(&problem)).await;
                }
                Answer::Always
            }
            (ApprovalStatus::Approved, _) => Answer::Once,
            (ApprovalStatus::Expired, _) => {
                Answer::Refused(Source::Timeout, format!("nobody answered within {} s", desk.timeout.as_secs()))
            }
            (ApprovalStatus::Interrupted, _) => {
                Answer::Refused(Source::User, feedback.unwrap_or_else(|| "the turn was interrupted".into()))
            }
            _ => Answer::Refused(
                Source::User,
                match feedback {
                    Some(f) => format!("denied by the user: {f}"),
                    None => "denied by the user".into(),
                },
            ),
        }
    }

    fn record(&self, c: &Connection) {
        let session = &self.session;
        session.audit(AuditKind::Network, Some(&self.turn_id), |row| connection_row(c, row));
    }
}

/// A question about what a call is doing (a host it wants, what its command changed), put to a
/// person as an approval request of a call of its own: its answer can never run the call.
struct Question<'a> {
    tool: &'static str,
    /// The call that asks.
    call_id: &'a str,
    arguments: serde_json::Value,
    findings: Vec<Finding>,
    preview: Option<String>,
    /// What the answer names, besides the tool: its hash is the request's call hash.
    hashed: Vec<String>,
}

impl SessionGate {
    /// Puts `question` to a person and waits for the answer, recorded like any other; the
    /// question's own call and the settled request, or why nobody could be asked.
    async fn put(&self, question: Question<'_>) -> Result<(ToolCall, crate::store::StoredApproval), String> {
        let session = &self.session;
        let desk = session.desk();
        if desk.defer {
            return Err("approvals are left to another process (`--on-ask defer`), and this cannot wait for one".into());
        }
        let now = desk.clock.now_ms();
        let id = uuid::Uuid::new_v4().to_string();
        let arguments = question.arguments.to_string();
        let call = ToolCall {
            id: format!("{}:{}:{id}", question.call_id, question.tool),
            provider_id: String::new(),
            name: question.tool.into(),
            arguments: arguments.clone(),
        };
        let mut hasher = Sha256::new();
        for part in std::iter::once(question.tool).chain(question.hashed.iter().map(String::as_str)) {
            hasher.update((part.len() as u64).to_le_bytes());
            hasher.update(part.as_bytes());
        }
        let approval = ApprovalRequest {
            id: id.clone(),
            session_id: session.id.clone(),
            call_id: question.call_id.to_string(),
            tool: question.tool.into(),
            arguments,
            findings: question.findings,
            preview: question.preview,
            call_hash: format!("{:x}", hasher.finalize()),
            created_at: now,
            expires_at: now.saturating_add(desk.timeout.as_millis() as i64),
        };
        let recorder = TurnRecorder { session, turn_id: &self.turn_id };
        if let Err(e) = desk.store.insert_approval(&approval, &self.turn_id, &call) {
            return Err(format!("the request could not be stored ({e})"));
        }
        recorder.record(&call, CallEvent::ApprovalRequested(&approval, DecisionSource::Mode)).await;
        // What asked can end before the answer (its command timed out, the turn was
        // interrupted): then the question goes with it, not left pending.
        let withdraw = Withdraw { session, id: &id, armed: true };
        let stored = match desk.queue.wait(&id, &self.cancel).await {
            Ok(stored) => stored,
            Err(e) => return Err(format!("the answer could not be read ({e})")),
        };
        withdraw.disarm();
        recorder.record(&call, CallEvent::ApprovalResolved(&stored)).await;
        let _ = desk.store.mark_approved(&id, ApprovalStatus::Started);
        Ok((call, stored))
    }
}

#[async_trait]
impl EffectsDesk for SessionGate {
    async fn ask(&self, question: EffectsQuestion) -> Result<(), String> {
        let _place = self.session.questions.take(&self.turn_id)?;
        let timeout = self.session.desk().timeout;
        let arguments = json!({"command": question.command, "files": question.files});
        let put = Question {
            tool: EFFECTS_TOOL,
            call_id: &question.call_id,
            hashed: vec![question.call_id.clone(), arguments.to_string(), question.preview.clone()],
            arguments,
            findings: question.findings,
            preview: Some(question.preview),
        };
        let (_, stored) = self.put(put).await?;
        let feedback = stored.answer.as_ref().and_then(|a| a.feedback.clone()).filter(|f| !f.trim().is_empty());
        match stored.status {
            ApprovalStatus::Approved => Ok(()),
            ApprovalStatus::Expired => Err(format!("nobody answered within {} s", timeout.as_secs())),
            ApprovalStatus::Interrupted => Err(feedback.unwrap_or_else(|| "the turn was interrupted".into())),
            _ => Err(match feedback {
                Some(f) => format!("the user denied them: {f}"),
                None => "the user denied them".into(),
            }),
        }
    }
}

/// How many questions each turn has waiting for a person.
#[derive(Debug, Default)]
pub(crate) struct Waiting(std::sync::Mutex<HashMap<String, usize>>);

impl Waiting {
    /// A place for one more question of `turn_id` (given back when dropped), or why not: the
    /// turn already has [`bounds::PENDING_QUESTIONS`] waiting.
    fn take<'a>(&'a self, turn_id: &'a str) -> Result<WaitingPlace<'a>, String> {
        let mut turns = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let waiting = turns.entry(turn_id.to_string()).or_default();
        if *waiting >= bounds::PENDING_QUESTIONS {
            return Err(bounds::too_many_pending());
        }
        *waiting += 1;
        Ok(WaitingPlace { waiting: self, turn_id })
    }
}

/// One question's place among its turn's.
struct WaitingPlace<'a> {
    waiting: &'a Waiting,
    turn_id: &'a str,
}

impl Drop for WaitingPlace<'_> {
    fn drop(&mut self) {
        let mut turns = self.waiting.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(n) = turns.get_mut(self.turn_id) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                turns.remove(self.turn_id);
            }
        }
    }
}

/// Withdraws a question when what asked is dropped unanswered.
struct Withdraw<'a> {
    session: &'a Session,
    id: &'a str,
    armed: bool,
}

impl Withdraw<'_> {
    fn disarm(mut self) {
        self.armed = false;
    }
}

impl Drop for Withdraw<'_> {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let why = "what asked ended before the answer";
        if let Ok(true) = self.session.approvals.withdraw(self.id, why) {
            self.session.announce_withdrawn(self.id);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_turn_has_at_most_its_bound_of_questions_waiting_and_a_place_comes_back_when_one_ends() {
        let waiting = Waiting::default();
        let mut places: Vec<WaitingPlace<'_>> =
            (0..bounds::PENDING_QUESTIONS).map(|_| waiting.take("turn-1").unwrap()).collect();
        let refused = waiting.take("turn-1").err().unwrap();
        assert!(refused.contains("16 questions of this turn already wait"), "{refused}");
        // Another turn's questions are its own.
        assert!(waiting.take("turn-2").is_ok());
        drop(places.pop());
        let again = waiting.take("turn-1").unwrap();
        assert!(waiting.take("turn-1").is_err());
        drop((again, places));
        assert!(waiting.0.lock().unwrap().is_empty(), "an ended turn leaves nothing behind");
    }
}
