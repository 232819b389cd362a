//! Approve: a call the verdict sends to a person, owned by one state machine — [`Calls::approve`]
//! takes it through checked → (resumed) → pending → settled to run, refused or deferred.
//!
//! Rules: nothing the verdict asks about runs before its answer; an approval of a file change is
//! checked against the files as they are now — moved on meanwhile, it becomes a fresh request
//! with a fresh preview instead of running, and what runs is the change the person saw; edited
//! arguments are judged again from the start; an answer is recorded as started before anything
//! runs (unrecorded, a resumed session would run the call twice); every way of not running
//! (deny, expiry, interrupt) becomes a result the model can read.

use std::sync::Arc;
use std::time::Duration;

use bridle_protocol::{ApprovalAnswer, ApprovalRequest, Decision, DecisionSource, ErrorCode, ToolCall};

use super::approval::{call_hash, preview};
use super::check::{Checked, CheckedCall};
use super::outcome::{CallOutcome, NotRun};
use super::queue::{status_word, ApprovalQueue};
use super::record::{CallEvent, Problem, Recorder};
use super::Calls;
use crate::changes::ChangePlan;
use crate::clock::Clock;
use crate::guard::Verdict;
use crate::store::{ApprovalStatus, Store, StoredApproval};
use crate::tools::ToolContext;

/// Where a session's approvals are asked, kept and answered.
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
}

/// How a call's way to running ended.
pub enum Approved {
    /// Run it (edited arguments already judged again).
    Run(Box<CheckedCall>),
    /// Do not run it: this is its outcome.
    Refused(Box<CallOutcome>),
    /// Left pending for another process to answer (`--on-ask defer`): the request's id.
    Deferred(String),
}

/// Where a call stands on its way to running.
enum State {
    /// Checked; nobody asked yet.
    Checked,
    /// A request stored by an earlier process, picked up again.
    Resumed(StoredApproval),
    /// A request waiting for its answer.
    Pending(StoredApproval),
    /// A request answered, expired or withdrawn.
    Settled(StoredApproval),
}

impl Calls {
    /// Takes a checked call to running, refused or deferred: at once when its verdict allows,
    /// through a person's answer when it asks. `existing` is the request an earlier process
    /// stored for it.
    pub async fn approve(
        &self,
        call: &ToolCall,
        checked: Checked,
        existing: Option<StoredApproval>,
        ctx: &ToolContext,
        desk: &Desk,
        recorder: &dyn Recorder,
    ) -> Approved {
        let mut checked = match checked {
            Checked::Ready(checked) => *checked,
            Checked::Done(outcome) => {
                // A resumed call that is now refused outright: its old request is void.
                if let Some(stale) = existing {
                    if let Err(e) = desk.queue.withdraw(&stale.request.id, "the call is now refused") {
                        recorder.record(call, CallEvent::Trouble(&store_failed(e.to_string()))).await;
                    }
                }
                return Approved::Refused(outcome);
            }
        };
        let mut state = existing.map_or(State::Checked, State::Resumed);
        loop {
            state = match state {
                State::Checked if checked.verdict.decision != Decision::Ask => {
                    return Approved::Run(Box::new(checked));
                }
                State::Checked => match open_request(call, &checked, ctx, desk, recorder).await {
                    Ok(stored) => State::Pending(stored),
                    Err(outcome) => return Approved::Refused(outcome),
                },
                State::Resumed(stored) if stored.status == ApprovalStatus::Pending => {
                    // Resumed in a new process: whoever watches now has not seen it yet.
                    recorder.record(call, CallEvent::ApprovalShown(&stored.request)).await;
                    State::Pending(stored)
                }
                State::Resumed(stored) => State::Settled(stored),
                State::Pending(stored) => {
                    if desk.defer {
                        return Approved::Deferred(stored.request.id);
                    }
                    match desk.queue.wait(&stored.request.id, &ctx.cancel).await {
                        Ok(stored) => State::Settled(stored),
                        Err(e) => {
                            let why = format!("the approval could not be read ({e})");
                            return refused(call, checked.verdict, NotRun::Unrecorded(why));
                        }
                    }
                }
                State::Settled(stored) => {
                    recorder.record(call, CallEvent::ApprovalResolved(&stored)).await;
                    let feedback =
                        stored.answer.as_ref().and_then(|a| a.feedback.clone()).filter(|f| !f.trim().is_empty());
                    match stored.status {
                        ApprovalStatus::Approved => {
                            let Some(answer) = stored.answer.clone() else {
                                let why = "the approval has no answer".to_string();
                                return refused(call, checked.verdict, NotRun::Unrecorded(why));
                            };
                            let id = stored.request.id.as_str();
                            if let Some(edited) = &answer.edited_arguments {
                                if let Err(refusal) =
                                    mark(call, &checked, id, ApprovalStatus::Started, desk, recorder).await
                                {
                                    return refusal;
                                }
                                return self.edited(call, edited, answer.decision, ctx, recorder).await;
                            }
                            // The change approved must still be the change that would run.
                            checked.plan = current_plan(checked.plan.take(), &checked.prepared, ctx).await;
                            if call_hash(&checked.prepared, checked.plan.as_ref()) != stored.request.call_hash {
                                if let Err(refusal) =
                                    mark(call, &checked, id, ApprovalStatus::Stale, desk, recorder).await
                                {
                                    return refusal;
                                }
                                match open_request(call, &checked, ctx, desk, recorder).await {
                                    Ok(fresh) => State::Pending(fresh),
                                    Err(outcome) => return Approved::Refused(outcome),
                                }
                            } else {
                                if let Err(refusal) =
                                    mark(call, &checked, id, ApprovalStatus::Started, desk, recorder).await
                                {
                                    return refusal;
                                }
                                self.remember(call, &checked, answer.decision, ctx, recorder).await;
                                checked.verdict.source = DecisionSource::User;
                                return Approved::Run(Box::new(checked));
                            }
                        }
                        ApprovalStatus::Denied => {
                            return refused(call, checked.verdict, NotRun::DeniedByUser(feedback))
                        }
                        ApprovalStatus::Expired => {
                            return refused(call, checked.verdict, NotRun::Expired(desk.timeout.as_secs()))
                        }
                        ApprovalStatus::Interrupted if ctx.cancel.is_cancelled() => {
                            return refused(call, checked.verdict, NotRun::Interrupted)
                        }
                        ApprovalStatus::Interrupted => {
                            let why = feedback.unwrap_or_else(|| "the request was withdrawn".into());
                            return refused(call, checked.verdict, NotRun::Withdrawn(why));
                        }
                        ApprovalStatus::Pending | ApprovalStatus::Stale | ApprovalStatus::Started => {
                            let why = format!("its approval request is {}", status_word(stored.status));
                            return refused(call, checked.verdict, NotRun::Unrecorded(why));
                        }
                    }
                }
            };
        }
    }

    /// Approved with edited arguments: the edited call goes through validation, the sandbox, the
    /// guard and the user's pre-call hooks again; only a deny stops it (the person has seen and
    /// written what runs).
    async fn edited(
        &self,
        call: &ToolCall,
        edited: &str,
        answer: ApprovalAnswer,
        ctx: &ToolContext,
        recorder: &dyn Recorder,
    ) -> Approved {
        let edited_call = ToolCall { arguments: edited.to_string(), ..call.clone() };
        let (judged, hooks) = self.judge_with_hooks(&edited_call, &ctx.session_id).await;
        for run in &hooks {
            recorder.record(&edited_call, CallEvent::Hooked(run)).await;
        }
        match judged {
            Err(outcome) => {
                let why = outcome.not_run.unwrap_or(NotRun::Refused { tool: call.name.clone() });
                refused(call, outcome.verdict, NotRun::EditRefused(Box::new(why)))
            }
            Ok(mut checked) => {
                self.remember(call, &checked, answer, ctx, recorder).await;
                let note = format!(
                    "[note: the user edited the arguments before approving: {}]",
                    checked.prepared.canonical_args
                );
                checked.notes.insert(0, note);
                checked.verdict = Verdict { decision: Decision::Ask, source: DecisionSource::User, ..checked.verdict };
                Approved::Run(Box::new(checked))
            }
        }
    }

    /// Keeps a "session" or "always" answer in the permit.
    async fn remember(
        &self,
        call: &ToolCall,
        checked: &CheckedCall,
        answer: ApprovalAnswer,
        ctx: &ToolContext,
        recorder: &dyn Recorder,
    ) {
        let keys = self.grant_keys(&checked.prepared, &ctx.session_id);
        let rule = self.guard.rule_for(&checked.prepared);
        for problem in self.permit.remember(answer, &keys, &rule, ctx.clock.now_ms()) {
            recorder.record(call, CallEvent::Trouble(&problem)).await;
        }
    }
}

/// The plan approved, if the files it was made from are still as they were; planned again
/// otherwise (and then its hash no longer matches the answer's).
async fn current_plan(
    plan: Option<Result<ChangePlan, crate::tools::ToolError>>,
    prepared: &crate::tools::PreparedCall,
    ctx: &ToolContext,
) -> Option<Result<ChangePlan, crate::tools::ToolError>> {
    if let Some(Ok(plan)) = plan {
        // The plan goes to the blocking thread and comes back: its file contents are not copied.
        let workspace = ctx.workspace.clone();
        let current = tokio::task::spawn_blocking(move || plan.is_current(&workspace.fs).then_some(plan)).await;
        if let Ok(Some(plan)) = current {
            return Some(Ok(plan));
        }
    }
    prepared.call.plan(ctx).await
}

/// Stores and announces a request for `checked`, with a preview of the change it would make.
async fn open_request(
    call: &ToolCall,
    checked: &CheckedCall,
    ctx: &ToolContext,
    desk: &Desk,
    recorder: &dyn Recorder,
) -> Result<StoredApproval, Box<CallOutcome>> {
    let now = desk.clock.now_ms();
    let request = ApprovalRequest {
        id: uuid::Uuid::new_v4().to_string(),
        session_id: ctx.session_id.clone(),
        call_id: call.id.clone(),
        tool: checked.prepared.name.clone(),
        arguments: checked.prepared.canonical_args.clone(),
        findings: checked.verdict.findings.clone(),
        preview: preview(checked.plan.as_ref()),
        call_hash: call_hash(&checked.prepared, checked.plan.as_ref()),
        created_at: now,
        expires_at: now.saturating_add(desk.timeout.as_millis() as i64),
    };
    if let Err(e) = desk.store.insert_approval(&request, &ctx.turn_id, call) {
        let why = format!("the approval request could not be stored ({e})");
        return Err(Box::new(CallOutcome::not_run(&call.id, checked.verdict.clone(), NotRun::Unrecorded(why))));
    }
    recorder.record(call, CallEvent::ApprovalRequested(&request, checked.verdict.source)).await;
    Ok(StoredApproval {
        request,
        turn_id: ctx.turn_id.clone(),
        call: call.clone(),
        status: ApprovalStatus::Pending,
        answer: None,
    })
}

/// Records that approved request `id` moved on to `status` before anything runs; a store that
/// fails refuses the call.
async fn mark(
    call: &ToolCall,
    checked: &CheckedCall,
    id: &str,
    status: ApprovalStatus,
    desk: &Desk,
    recorder: &dyn Recorder,
) -> Result<(), Approved> {
    let Err(e) = desk.store.mark_approved(id, status) else { return Ok(()) };
    let message = format!("cannot record that approval {id} is {}: {e}", status_word(status));
    recorder.record(call, CallEvent::Trouble(&store_failed(message.clone()))).await;
    Err(refused(call, checked.verdict.clone(), NotRun::Unrecorded(message)))
}

fn refused(call: &ToolCall, verdict: Verdict, reason: NotRun) -> Approved {
    Approved::Refused(Box::new(CallOutcome::not_run(&call.id, verdict, reason)))
}

fn store_failed(message: String) -> Problem {
    Problem::retryable(ErrorCode::StoreWriteFailed, message)
}
