//! Stream: a call's one channel — what happens to it ([`CallStream::record`]) and what it asks a
//! person ([`CallStream::ask`]), from its check to the last question its background process
//! asks. It is cheap to clone, so a process that outlives its call keeps its call's stream.
//!
//! Rules: every question — to run a call, about a host a command wants to reach, about what a
//! command changed — goes through one machine: opened (stored, then announced), waited for,
//! settled ([`Settled`], the one map from a request's status to what it means), and an
//! approval marked started before anything follows from it; a "session" or "always" answer is
//! remembered by the [`Permit`] keyed by what it covers. A question a running call asks is never
//! held where nobody can answer it (outside a session, approvals deferred to another process),
//! is withdrawn when what asked goes first, and is bounded: a call asks at most
//! [`CALL_QUESTIONS`], a turn has at most [`PENDING_QUESTIONS`] waiting at once, and one past a
//! bound is refused without asking, saying so. An answer to such a question never runs a call:
//! only a call's own request resumes a turn.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use bridle_protocol::{
    ApprovalAnswer, ApprovalRequest, ApprovalSubject, DecisionSource, ErrorCode, Finding, Severity, ToolCall,
};
use tokio_util::sync::CancellationToken;

use super::approval::{grant_keys, hash};
use super::permit::{Always, Grant, Permit};
use super::queue::ApprovalQueue;
use super::record::{CallEvent, Problem, Recorder};
use crate::clock::Clock;
use crate::network::{Connection, Gate, HostRequest, Source};
use crate::store::{ApprovalStatus, RecordedAnswer, Store, StoredApproval};
use crate::tools::Covers;

/// Hosts one call (a command, foreground or background) may ask a person about; past it a new
/// host is refused without asking.
pub const CALL_QUESTIONS: usize = 8;
/// Questions one turn may have waiting for a person at once, and permission prompts one editor
/// session (ACP) may have open at once.
pub const PENDING_QUESTIONS: usize = 16;

/// Where a session's questions are asked, kept and answered.
#[derive(Clone)]
pub struct Desk {
    /// The queue answers arrive through.
    pub queue: ApprovalQueue,
    /// Where requests are kept.
    pub store: Arc<Store>,
    /// The clock requests are stamped with.
    pub clock: Arc<dyn Clock>,
    /// How long a request waits before it expires as denied.
    pub timeout: Duration,
    /// Leave requests pending for another process and suspend, instead of waiting
    /// (`bridle run --on-ask defer`).
    pub defer: bool,
    /// The questions each turn of the session has waiting.
    pub waiting: Arc<Waiting>,
}

/// A question for a person.
#[derive(Debug, Clone)]
pub struct Question {
    /// What it is about.
    pub subject: ApprovalSubject,
    /// What the guardians (or the proxy, or the landing) found.
    pub findings: Vec<Finding>,
    /// The diff the person approves, when there is one.
    pub preview: Option<String>,
    /// What an answer binds ([`hash`]): an answer to another question is refused.
    pub hash: String,
    /// What sent it to a person.
    pub source: DecisionSource,
}

impl Question {
    /// May the command of `call_id` reach `host:port`?
    pub fn host(call_id: &str, request: &HostRequest) -> Self {
        let port = request.port.to_string();
        Self {
            subject: ApprovalSubject::Host {
                host: request.host.clone(),
                port: request.port,
                command: request.command.clone(),
            },
            findings: vec![Finding {
                guardian: "network".into(),
                rule: "unlisted-host".into(),
                severity: Severity::Medium,
                message: format!(
                    "the command wants to connect to {}:{}, which [sandbox.network] does not name",
                    request.host, request.port
                ),
                contained: false,
            }],
            preview: None,
            hash: hash(&["host", &request.host, &port, call_id]),
            source: DecisionSource::Mode,
        }
    }

    /// Keep what the command of `call_id` changed (`files`, shown as `diff`)?
    pub fn changes(call_id: &str, command: &str, files: Vec<String>, findings: Vec<Finding>, diff: String) -> Self {
        let listed = files.join("\u{0}");
        Self {
            hash: hash(&["changes", call_id, command, &listed, &diff]),
            subject: ApprovalSubject::Changes { command: command.to_string(), files },
            findings,
            preview: Some(diff),
            source: DecisionSource::Mode,
        }
    }
}

/// How a question ended.
#[derive(Debug)]
pub enum Settled {
    /// A person approved it.
    Approved {
        /// The request, as settled.
        stored: Box<StoredApproval>,
        /// Their answer.
        answer: RecordedAnswer,
    },
    /// It was not approved.
    Refused(Refusal),
}

/// Why a question was not approved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// Nobody was asked: nobody can answer here (why).
    NotAsked(String),
    /// Nobody was asked: a bound on questions was reached (which, in words).
    Bound(String),
    /// Something Bridle needed to record or read failed (the words say what).
    Unrecorded(String),
    /// A person said no, with their words when they gave any.
    Denied(Option<String>),
    /// Nobody answered within the timeout (seconds).
    Expired(u64),
    /// The turn was interrupted.
    Interrupted,
    /// The request was withdrawn (a new message came instead of an answer, say): why.
    Withdrawn(String),
}

impl Refusal {
    /// What refused it, for a record that names a source.
    pub fn source(&self) -> DecisionSource {
        match self {
            Refusal::NotAsked(_) | Refusal::Unrecorded(_) => DecisionSource::Mode,
            Refusal::Bound(_) => DecisionSource::Sandbox,
            Refusal::Expired(_) => DecisionSource::Timeout,
            Refusal::Denied(_) | Refusal::Interrupted | Refusal::Withdrawn(_) => DecisionSource::User,
        }
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::NotAsked(why) | Refusal::Bound(why) | Refusal::Unrecorded(why) | Refusal::Withdrawn(why) => {
                f.write_str(why)
            }
            Refusal::Denied(None) => f.write_str("denied by the user"),
            Refusal::Denied(Some(words)) => write!(f, "denied by the user: {words}"),
            Refusal::Expired(secs) => write!(f, "nobody answered within {secs} s"),
            Refusal::Interrupted => f.write_str("the turn was interrupted"),
        }
    }
}

/// One call's channel; cheap to clone.
#[derive(Clone)]
pub struct CallStream(Arc<Inner>);

struct Inner {
    call: ToolCall,
    session_id: String,
    turn_id: String,
    recorder: Arc<dyn Recorder>,
    /// Where questions are asked; `None` where nobody can answer (`bridle tool`).
    desk: Option<Desk>,
    permit: Arc<Permit>,
    cancel: CancellationToken,
    /// Questions this call asked while running.
    asked: AtomicUsize,
}

impl CallStream {
    /// The stream of `call` of `turn_id` in `session_id`, recorded by `recorder`, asking at
    /// `desk` (none: nobody can be asked), remembering answers in `permit`, ending its questions
    /// when `cancel` fires.
    pub fn new(
        call: &ToolCall,
        (session_id, turn_id): (&str, &str),
        recorder: Arc<dyn Recorder>,
        desk: Option<Desk>,
        permit: Arc<Permit>,
        cancel: CancellationToken,
    ) -> Self {
        Self(Arc::new(Inner {
            call: call.clone(),
            session_id: session_id.to_string(),
            turn_id: turn_id.to_string(),
            recorder,
            desk,
            permit,
            cancel,
            asked: AtomicUsize::new(0),
        }))
    }

    /// The call, as the model sent it.
    pub fn call(&self) -> &ToolCall {
        &self.0.call
    }

    /// Where questions are asked, when anybody can be.
    pub fn desk(&self) -> Option<&Desk> {
        self.0.desk.as_ref()
    }

    /// Records `event` of the call.
    pub async fn record(&self, event: CallEvent<'_>) {
        self.0.recorder.record(&self.0.call, event).await;
    }

    /// Records `event` from code that cannot wait (a connection's end, a question dropped).
    pub fn record_now(&self, event: CallEvent<'_>) {
        self.0.recorder.record_now(&self.0.call, event);
    }

    /// Records what Bridle could not do on the way.
    pub async fn trouble(&self, problem: Problem) {
        self.record(CallEvent::Trouble(&problem)).await;
    }

    /// Asks `question` while the call runs, within the bounds, and waits for the answer; the
    /// request is withdrawn if this is dropped first. An approval is marked started, and a
    /// "session" or "always" answer about a host is remembered.
    pub async fn ask(&self, question: Question) -> Settled {
        let Some(desk) = &self.0.desk else {
            return Settled::Refused(Refusal::NotAsked("nobody can be asked here".into()));
        };
        if desk.defer {
            let why = "approvals are left to another process (`--on-ask defer`), and this cannot wait for one";
            return Settled::Refused(Refusal::NotAsked(why.into()));
        }
        // A command asks about each host once (the proxy keeps the answer); its held changes are
        // one question, after it ended.
        let host = matches!(question.subject, ApprovalSubject::Host { .. });
        if host && self.0.asked.fetch_add(1, Ordering::SeqCst) >= CALL_QUESTIONS {
            return Settled::Refused(Refusal::Bound(too_many_questions()));
        }
        let Ok(_place) = desk.waiting.take(&self.0.turn_id) else {
            return Settled::Refused(Refusal::Bound(too_many_pending()));
        };
        let stored = match self.open(&question).await {
            Ok(stored) => stored,
            Err(refusal) => return Settled::Refused(refusal),
        };
        let withdraw = Withdraw { stream: self, id: stored.request.id.clone(), armed: true };
        let settled = self.wait(&stored.request.id).await;
        withdraw.disarm();
        let Settled::Approved { stored, answer } = settled else { return settled };
        if let Err(refusal) = self.mark(&stored.request.id, ApprovalStatus::Started).await {
            return Settled::Refused(refusal);
        }
        if let ApprovalSubject::Host { host, port, .. } = &stored.request.subject {
            let entry = crate::network::entry(host, *port);
            let grant =
                Grant { keys: grant_keys(&Covers::Host(entry.clone()), "", Vec::new), always: Always::Host(entry) };
            self.remember(answer.decision, &grant).await;
        }
        Settled::Approved { stored, answer }
    }

    /// Stores and announces a request for `question`; pending until answered.
    pub(super) async fn open(&self, question: &Question) -> Result<StoredApproval, Refusal> {
        let Some(desk) = &self.0.desk else { return Err(Refusal::NotAsked("nobody can be asked here".into())) };
        let now = desk.clock.now_ms();
        let request = ApprovalRequest {
            id: uuid::Uuid::new_v4().to_string(),
            session_id: self.0.session_id.clone(),
            call_id: self.0.call.id.clone(),
            subject: question.subject.clone(),
            findings: question.findings.clone(),
            preview: question.preview.clone(),
            call_hash: question.hash.clone(),
            created_at: now,
            expires_at: now.saturating_add(desk.timeout.as_millis() as i64),
        };
        if let Err(e) = desk.store.insert_approval(&request, &self.0.turn_id, &self.0.call) {
            return Err(Refusal::Unrecorded(format!("the approval request could not be stored ({e})")));
        }
        self.record(CallEvent::ApprovalRequested(&request, question.source)).await;
        Ok(StoredApproval {
            request,
            turn_id: self.0.turn_id.clone(),
            call: self.0.call.clone(),
            status: ApprovalStatus::Pending,
            answer: None,
        })
    }

    /// Waits for request `id`'s answer (or its expiry, or the call's end) and records it.
    pub(super) async fn wait(&self, id: &str) -> Settled {
        let Some(desk) = &self.0.desk else {
            return Settled::Refused(Refusal::NotAsked("nobody can be asked here".into()));
        };
        match desk.queue.wait(id, &self.0.cancel).await {
            Ok(stored) => self.settled(stored).await,
            Err(e) => Settled::Refused(Refusal::Unrecorded(format!("the approval could not be read ({e})"))),
        }
    }

    /// Records a request that was answered, expired or withdrawn, and says what it means.
    pub(super) async fn settled(&self, stored: StoredApproval) -> Settled {
        self.record(CallEvent::ApprovalResolved(&stored)).await;
        let timeout = self.0.desk.as_ref().map_or(0, |d| d.timeout.as_secs());
        let feedback = stored.answer.as_ref().and_then(|a| a.feedback.clone()).filter(|f| !f.trim().is_empty());
        match stored.status {
            ApprovalStatus::Approved => match stored.answer.clone() {
                Some(answer) => Settled::Approved { stored: Box::new(stored), answer },
                None => Settled::Refused(Refusal::Unrecorded("the approval has no answer".into())),
            },
            ApprovalStatus::Denied => Settled::Refused(Refusal::Denied(feedback)),
            ApprovalStatus::Expired => Settled::Refused(Refusal::Expired(timeout)),
            ApprovalStatus::Interrupted if self.0.cancel.is_cancelled() => Settled::Refused(Refusal::Interrupted),
            ApprovalStatus::Interrupted => {
                Settled::Refused(Refusal::Withdrawn(feedback.unwrap_or_else(|| "the request was withdrawn".into())))
            }
            ApprovalStatus::Pending | ApprovalStatus::Stale | ApprovalStatus::Started => Settled::Refused(
                Refusal::Unrecorded(format!("its approval request is {}", super::queue::status_word(stored.status))),
            ),
        }
    }

    /// Records that approved request `id` moved on to `status` (started, or stale) before
    /// anything follows from it; a store that fails refuses what would follow.
    pub(super) async fn mark(&self, id: &str, status: ApprovalStatus) -> Result<(), Refusal> {
        let Some(desk) = &self.0.desk else { return Ok(()) };
        let Err(e) = desk.store.mark_approved(id, status) else { return Ok(()) };
        let message = format!("cannot record that approval {id} is {}: {e}", super::queue::status_word(status));
        self.trouble(Problem::retryable(ErrorCode::StoreWriteFailed, message.clone())).await;
        Err(Refusal::Unrecorded(message))
    }

    /// Keeps a "session" or "always" answer covering `grant` in the permit.
    pub(super) async fn remember(&self, answer: ApprovalAnswer, grant: &Grant) {
        let now = self.0.desk.as_ref().map_or(0, |d| d.clock.now_ms());
        for problem in self.0.permit.remember(answer, grant, now) {
            self.trouble(problem).await;
        }
    }
}

/// The network's questions and records, for the call's command (and its background process).
#[async_trait]
impl Gate for CallStream {
    async fn ask(&self, request: &HostRequest) -> crate::network::Answer {
        use crate::network::Answer;
        match CallStream::ask(self, Question::host(&self.0.call.id, request)).await {
            Settled::Approved { answer, .. } => match answer.decision {
                ApprovalAnswer::ApproveSession => Answer::Session,
                ApprovalAnswer::ApproveAlways => Answer::Always,
                _ => Answer::Once,
            },
            Settled::Refused(Refusal::NotAsked(_)) if self.0.desk.is_none() => {
                let why = format!(
                    "{}:{} is not in [sandbox.network] allow, and outside a session nobody can be asked",
                    request.host, request.port
                );
                Answer::Refused(Source::Mode(crate::config::NetworkMode::Ask), why)
            }
            Settled::Refused(Refusal::Bound(why)) => Answer::Refused(Source::Limit, why),
            Settled::Refused(refusal) => {
                let source = if refusal.source() == DecisionSource::Timeout { Source::Timeout } else { Source::User };
                Answer::Refused(source, refusal.to_string())
            }
        }
    }

    fn record(&self, connection: &Connection) {
        self.record_now(CallEvent::Connection(connection));
    }
}

/// Why a call refuses a new question without asking.
pub fn too_many_questions() -> String {
    format!(
        "not asked: this command already asked about {CALL_QUESTIONS} hosts, the most one command may; \
         the user can list the hosts it needs in [sandbox.network] allow"
    )
}

/// Why a turn refuses a question without asking.
pub fn too_many_pending() -> String {
    format!("not asked: {PENDING_QUESTIONS} questions of this turn already wait for an answer, the most one turn may")
}

/// How many questions each turn has waiting for a person.
#[derive(Debug, Default)]
pub struct Waiting(Mutex<HashMap<String, usize>>);

impl Waiting {
    /// A place for one more question of `turn_id` (given back when dropped), or `Err` when the
    /// turn already has [`PENDING_QUESTIONS`] waiting.
    fn take<'a>(&'a self, turn_id: &'a str) -> Result<WaitingPlace<'a>, ()> {
        let mut turns = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let waiting = turns.entry(turn_id.to_string()).or_default();
        if *waiting >= PENDING_QUESTIONS {
            return Err(());
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
        let mut turns = self.waiting.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(n) = turns.get_mut(self.turn_id) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                turns.remove(self.turn_id);
            }
        }
    }
}

/// Withdraws a question when what asked is dropped unanswered (its command timed out, the turn
/// was interrupted), and records that.
struct Withdraw<'a> {
    stream: &'a CallStream,
    id: String,
    armed: bool,
}

impl Withdraw<'_> {
    fn disarm(mut self) {
        self.armed = false;
    }
}

impl Drop for Withdraw<'_> {
    fn drop(&mut self) {
        let Some(desk) = self.armed.then_some(()).and(self.stream.0.desk.as_ref()) else { return };
        if let Ok(true) = desk.queue.withdraw(&self.id, "what asked ended before the answer") {
            if let Ok(Some(stored)) = desk.store.approval(&self.id) {
                self.stream.record_now(CallEvent::ApprovalResolved(&stored));
            }
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
            (0..PENDING_QUESTIONS).map(|_| waiting.take("turn-1").unwrap()).collect();
        assert!(waiting.take("turn-1").is_err());
        // Another turn's questions are its own.
        assert!(waiting.take("turn-2").is_ok());
        drop(places.pop());
        let again = waiting.take("turn-1").unwrap();
        assert!(waiting.take("turn-1").is_err());
        drop((again, places));
        assert!(waiting.0.lock().unwrap().is_empty(), "an ended turn leaves nothing behind");
    }

    #[test]
    fn a_refusal_says_why_in_words_the_model_and_the_audit_read() {
        assert_eq!(Refusal::Denied(Some("not that host".into())).to_string(), "denied by the user: not that host");
        assert_eq!(Refusal::Expired(600).to_string(), "nobody answered within 600 s");
        assert_eq!(Refusal::Expired(600).source(), DecisionSource::Timeout);
    }
}
