//! Approve: a call the verdict sends to a person, owned by one state machine — [`Calls::approve`]
//! takes it through checked → (resumed) → pending → settled to run, refused or deferred.
//!
//! The question itself is asked through the call's [`CallStream`], the one machine every
//! question goes through; what is the call's own is here: a request resumed from an earlier
//! process, deferring to another process, the check that the change approved is still the one
//! that would run, and edited arguments.
//!
//! Rules: nothing the verdict asks about runs before its answer; an approval of a file change is
//! checked against the files as they are now — moved on meanwhile, it becomes a fresh request
//! with a fresh preview instead of running, and what runs is the change the person saw; edited
//! arguments are judged again from the start; an answer is recorded as started before anything
//! runs (unrecorded, a resumed session would run the call twice); every way of not running
//! (deny, expiry, interrupt) becomes a result the model can read.

use bridle_protocol::{ApprovalAnswer, ApprovalSubject, Decision, DecisionSource, ToolCall};

use super::approval::{call_hash, preview};
use super::check::{Checked, CheckedCall};
use super::outcome::{CallOutcome, NotRun};
use super::permit::{Always, Grant};
use super::record::CallEvent;
use super::stream::{CallStream, Question, Refusal, Settled};
use super::Calls;
use crate::changes::ChangePlan;
use crate::guard::Verdict;
use crate::store::{ApprovalStatus, StoredApproval};
use crate::tools::ToolContext;

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
    Settled(Settled),
}

impl Calls {
    /// Takes a checked call to running, refused or deferred: at once when its verdict allows,
    /// through a person's answer when it asks. `existing` is the request an earlier process
    /// stored for it.
    pub async fn approve(
        &self,
        stream: &CallStream,
        checked: Checked,
        existing: Option<StoredApproval>,
        ctx: &ToolContext,
    ) -> Approved {
        let call = stream.call();
        let mut checked = match checked {
            Checked::Ready(checked) => *checked,
            Checked::Done(outcome) => {
                // A resumed call that is now refused outright: its old request is void.
                if let (Some(stale), Some(desk)) = (existing, stream.desk()) {
                    if let Err(e) = desk.queue.withdraw(&stale.request.id, "the call is now refused") {
                        let problem = super::record::Problem::retryable(
                            bridle_protocol::ErrorCode::StoreWriteFailed,
                            e.to_string(),
                        );
                        stream.trouble(problem).await;
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
                State::Checked => match stream.open(&question(&checked)).await {
                    Ok(stored) => State::Pending(stored),
                    Err(refusal) => return refused(call, checked.verdict, refusal),
                },
                State::Resumed(stored) if stored.status == ApprovalStatus::Pending => {
                    // Resumed in a new process: whoever watches now has not seen it yet.
                    stream.record(CallEvent::ApprovalShown(&stored.request)).await;
                    State::Pending(stored)
                }
                State::Resumed(stored) => State::Settled(stream.settled(stored).await),
                State::Pending(stored) => {
                    if stream.desk().is_none_or(|desk| desk.defer) {
                        return Approved::Deferred(stored.request.id);
                    }
                    State::Settled(stream.wait(&stored.request.id).await)
                }
                State::Settled(Settled::Refused(refusal)) => return refused(call, checked.verdict, refusal),
                State::Settled(Settled::Approved { stored, answer }) => {
                    let id = stored.request.id.as_str();
                    if let Some(edited) = &answer.edited_arguments {
                        if let Err(refusal) = stream.mark(id, ApprovalStatus::Started).await {
                            return refused(call, checked.verdict, refusal);
                        }
                        return self.edited(stream, edited, answer.decision, ctx).await;
                    }
                    // The change approved must still be the change that would run.
                    checked.plan = current_plan(checked.plan.take(), &checked.prepared, ctx).await;
                    if call_hash(&checked.prepared, checked.plan.as_ref()) != stored.request.call_hash {
                        if let Err(refusal) = stream.mark(id, ApprovalStatus::Stale).await {
                            return refused(call, checked.verdict, refusal);
                        }
                        match stream.open(&question(&checked)).await {
                            Ok(fresh) => State::Pending(fresh),
                            Err(refusal) => return refused(call, checked.verdict, refusal),
                        }
                    } else {
                        if let Err(refusal) = stream.mark(id, ApprovalStatus::Started).await {
                            return refused(call, checked.verdict, refusal);
                        }
                        stream.remember(answer.decision, &self.grant(&checked, ctx)).await;
                        checked.verdict.source = DecisionSource::User;
                        return Approved::Run(Box::new(checked));
                    }
                }
            };
        }
    }

    /// Approved with edited arguments: the edited call goes through validation, the sandbox, the
    /// guard and the user's pre-call hooks again; only a deny stops it (the person has seen and
    /// written what runs).
    async fn edited(&self, stream: &CallStream, edited: &str, answer: ApprovalAnswer, ctx: &ToolContext) -> Approved {
        let call = stream.call();
        let edited_call = ToolCall { arguments: edited.to_string(), ..call.clone() };
        let (judged, hooks) = self.judge_with_hooks(&edited_call, &ctx.session_id).await;
        for run in &hooks {
            stream.record(CallEvent::Hooked(run)).await;
        }
        match judged {
            Err(outcome) => {
                let why = outcome.not_run.unwrap_or(NotRun::Refused { tool: call.name.clone() });
                Approved::Refused(Box::new(CallOutcome::not_run(
                    &call.id,
                    outcome.verdict,
                    NotRun::EditRefused(Box::new(why)),
                )))
            }
            Ok(mut checked) => {
                stream.remember(answer, &self.grant(&checked, ctx)).await;
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

    /// What a "session" or "always" answer to `checked` remembers.
    fn grant(&self, checked: &CheckedCall, ctx: &ToolContext) -> Grant {
        let keys = self.grant_keys(&checked.prepared, &ctx.session_id);
        Grant { keys, always: Always::Rule(self.guard.rule_for(&checked.prepared)) }
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

/// The question a checked call asks: may it run, as these arguments, making this change?
fn question(checked: &CheckedCall) -> Question {
    Question {
        subject: ApprovalSubject::Call {
            tool: checked.prepared.name.clone(),
            arguments: checked.prepared.canonical_args.clone(),
        },
        findings: checked.verdict.findings.clone(),
        preview: preview(checked.plan.as_ref()),
        hash: call_hash(&checked.prepared, checked.plan.as_ref()),
        source: checked.verdict.source,
    }
}

/// A call not run, for `refusal`.
fn refused(call: &ToolCall, verdict: Verdict, refusal: Refusal) -> Approved {
    let reason = match refusal {
        Refusal::Denied(feedback) => NotRun::DeniedByUser(feedback),
        Refusal::Expired(secs) => NotRun::Expired(secs),
        Refusal::Interrupted => NotRun::Interrupted,
        Refusal::Withdrawn(why) => NotRun::Withdrawn(why),
        Refusal::NotAsked(why) | Refusal::Bound(why) | Refusal::Unrecorded(why) => NotRun::Unrecorded(why),
    };
    Approved::Refused(Box::new(CallOutcome::not_run(&call.id, verdict, reason)))
}
