//! A call's way to running, owned by one state machine: [`resolve`] takes the guard's verdict
//! to run, refused or deferred, through checked → (resumed) → pending → settled.
//!
//! Rules: nothing the guard sends to `ask` runs before its answer; a call the session already
//! approved (the exact command, or the tool on the path) runs without asking again; an approval
//! of a file change is re-checked against the file as it is now — changed meanwhile, it becomes a
//! fresh request with a fresh preview instead of running; edited arguments are judged again from
//! the start; every way of not running (deny, expiry, interrupt) becomes a result the model can
//! read.

use bridle_protocol::{ApprovalAnswer, ApprovalRequest, Decision, DecisionSource, Event, ToolCall, ToolStatus};
use tokio_util::sync::CancellationToken;

use super::session::Session;
use crate::approvals::{self, status_word};
use crate::audit::{AuditKind, CallRows};
use crate::guard::Verdict;
use crate::pipeline::{CallFailure, CallOutcome, CheckedCall};
use crate::store::{ApprovalStatus, StoredApproval};
use serde_json::json;

/// How a call's way to running ended.
pub(crate) enum Resolution {
    /// Run this call (edited arguments already judged again), with a note for the model.
    Run(Box<CheckedCall>, Option<String>),
    /// Do not run it: this is its outcome.
    Refused(Box<CallOutcome>),
    /// Left pending for another process to answer (`--on-ask defer`).
    Deferred(String),
}

/// Where a call stands on its way to running.
enum State {
    /// Checked by the pipeline; nobody asked yet.
    Checked,
    /// A request stored by an earlier process, picked up again.
    Resumed(StoredApproval),
    /// A request waiting for its answer.
    Pending(StoredApproval),
    /// A request answered, expired or withdrawn.
    Settled(StoredApproval),
}

/// The one owner of a call's approval: from the guard's verdict to run, refused or deferred.
/// Every step is a [`State`]; the queue waits and the store keeps, but only this decides.
pub(crate) async fn resolve(
    session: &Session,
    turn_id: &str,
    call: &ToolCall,
    checked: CheckedCall,
    existing: Option<StoredApproval>,
    cancel: &CancellationToken,
) -> Resolution {
    let workspace = session.pipeline().workspace().clone();
    let mut state = existing.map_or(State::Checked, State::Resumed);
    loop {
        state = match state {
            State::Checked => {
                if checked.verdict.decision != Decision::Ask {
                    return Resolution::Run(Box::new(checked), None);
                }
                if session.granted(&approvals::grant_keys(&checked.prepared, &workspace, &session.id)) {
                    let verdict = Verdict { source: DecisionSource::User, ..checked.verdict.clone() };
                    return Resolution::Run(Box::new(CheckedCall { verdict, ..checked }), None);
                }
                match open_request(session, turn_id, call, &checked).await {
                    Ok(stored) => State::Pending(stored),
                    Err(outcome) => return Resolution::Refused(outcome),
                }
            }
            State::Resumed(stored) if stored.status == ApprovalStatus::Pending => {
                // Resumed in a new process: whoever watches now has not seen it yet.
                let request = stored.request.clone();
                session.emit(Event::ApprovalRequested { session_id: session.id.clone(), request }).await;
                State::Pending(stored)
            }
            State::Resumed(stored) => State::Settled(stored),
            State::Pending(stored) => {
                if session.config.defer_approvals {
                    return Resolution::Deferred(stored.request.id);
                }
                match session.approvals.wait(&stored.request.id, cancel).await {
                    Ok(stored) => State::Settled(stored),
                    Err(e) => {
                        let message = format!("Not run: the approval could not be read ({e}).");
                        return refused(call, &checked, message, ToolStatus::Error);
                    }
                }
            }
            State::Settled(stored) => {
                announce_answer(session, turn_id, call, &stored).await;
                let id = stored.request.id.clone();
                let feedback = stored.answer.as_ref().and_then(|a| a.feedback.clone()).filter(|f| !f.trim().is_empty());
                match stored.status {
                    ApprovalStatus::Approved => {
                        let Some(answer) = stored.answer.clone() else {
                            return refused(
                                call,
                                &checked,
                                "Not run: the approval has no answer.".into(),
                                ToolStatus::Error,
                            );
                        };
                        if let Some(edited) = &answer.edited_arguments {
                            if let Some(refusal) = mark(session, call, &checked, &id, ApprovalStatus::Started).await {
                                return refusal;
                            }
                            return run_edited(session, turn_id, call, edited, answer.decision).await;
                        }
                        // The change approved must still be the change that would run.
                        let ctx = session.tool_context(turn_id, &call.id, CancellationToken::new());
                        let plan = approvals::plan(&checked.prepared, &ctx).await;
                        if approvals::call_hash(&checked.prepared, plan.as_ref()) != stored.request.call_hash {
                            if let Some(refusal) = mark(session, call, &checked, &id, ApprovalStatus::Stale).await {
                                return refusal;
                            }
                            match open_request(session, turn_id, call, &checked).await {
                                Ok(fresh) => State::Pending(fresh),
                                Err(outcome) => return Resolution::Refused(outcome),
                            }
                        } else {
                            if let Some(refusal) = mark(session, call, &checked, &id, ApprovalStatus::Started).await {
                                return refusal;
                            }
                            session.remember(&checked.prepared, answer.decision).await;
                            let verdict = Verdict { source: DecisionSource::User, ..checked.verdict.clone() };
                            return Resolution::Run(Box::new(CheckedCall { verdict, ..checked }), None);
                        }
                    }
                    ApprovalStatus::Denied => {
                        let message = match feedback {
                            Some(words) => format!("Denied by the user: {words}"),
                            None => "Denied by the user.".to_string(),
                        };
                        return refused(call, &checked, message, ToolStatus::Denied);
                    }
                    ApprovalStatus::Expired => {
                        let message = format!(
                            "Denied: nobody answered the approval request within {} s.",
                            session.config.limits.approval_timeout_secs
                        );
                        return refused(call, &checked, message, ToolStatus::Denied);
                    }
                    ApprovalStatus::Interrupted if cancel.is_cancelled() => {
                        let mut outcome = CallOutcome::not_run(
                            call,
                            checked.verdict,
                            "Not run: interrupted by the user.",
                            ToolStatus::Interrupted,
                        );
                        outcome.failure = Some(CallFailure::Interrupted);
                        return Resolution::Refused(Box::new(outcome));
                    }
                    ApprovalStatus::Interrupted => {
                        let why = feedback.unwrap_or_else(|| "the request was withdrawn".into());
                        return refused(call, &checked, format!("Denied: {why}."), ToolStatus::Denied);
                    }
                    ApprovalStatus::Pending | ApprovalStatus::Stale | ApprovalStatus::Started => {
                        let message = format!("Not run: its approval request is {}.", status_word(stored.status));
                        return refused(call, &checked, message, ToolStatus::Error);
                    }
                }
            }
        };
    }
}

/// An answer (or an expiry, or a withdrawal) is audited and told to the window once, when it is
/// met.
async fn announce_answer(session: &Session, turn_id: &str, call: &ToolCall, stored: &StoredApproval) {
    let Some(answer) = &stored.answer else { return };
    let id = &stored.request.id;
    let decision = if stored.status == ApprovalStatus::Approved { Decision::Allow } else { Decision::Deny };
    session.audit(AuditKind::ApprovalResolved, Some(turn_id), |r| {
        r.call(call.id.clone())
            .tool(call.name.clone())
            .decision(decision, answer.source)
            .status(status_word(stored.status))
            .payload(json!({
                "approvalId": id,
                "answer": answer.decision,
                "feedback": answer.feedback,
                "editedArguments": answer.edited_arguments,
            }))
    });
    session
        .emit(Event::ApprovalResolved {
            session_id: session.id.clone(),
            approval_id: id.clone(),
            decision: answer.decision,
            source: answer.source,
        })
        .await;
}

/// Stores and announces a request for `checked`, with a preview of the change it would make.
async fn open_request(
    session: &Session,
    turn_id: &str,
    call: &ToolCall,
    checked: &CheckedCall,
) -> Result<StoredApproval, Box<CallOutcome>> {
    let ctx = session.tool_context(turn_id, &call.id, CancellationToken::new());
    let plan = approvals::plan(&checked.prepared, &ctx).await;
    let now = session.deps.clock.now_ms();
    let request = ApprovalRequest {
        id: super::new_id(),
        session_id: session.id.clone(),
        call_id: call.id.clone(),
        tool: checked.prepared.name.clone(),
        arguments: checked.prepared.canonical_args.clone(),
        findings: checked.verdict.findings.clone(),
        preview: approvals::preview(plan.as_ref()),
        call_hash: approvals::call_hash(&checked.prepared, plan.as_ref()),
        created_at: now,
        expires_at: now.saturating_add(session.config.limits.approval_timeout().as_millis() as i64),
    };
    if let Err(e) = session.deps.store.insert_approval(&request, turn_id, call) {
        let message = format!("Not run: the approval request could not be stored ({e}).");
        return Err(Box::new(CallOutcome::not_run(call, checked.verdict.clone(), message, ToolStatus::Error)));
    }
    session.audit(AuditKind::ApprovalRequested, Some(turn_id), |r| {
        r.call(call.id.clone()).tool(request.tool.clone()).decision(Decision::Ask, checked.verdict.source).payload(
            json!({
                "approvalId": request.id,
                "arguments": request.arguments,
                "findings": request.findings,
                "preview": request.preview,
                "callHash": request.call_hash,
                "expiresAt": request.expires_at,
            }),
        )
    });
    session.emit(Event::ApprovalRequested { session_id: session.id.clone(), request: request.clone() }).await;
    Ok(StoredApproval {
        request,
        turn_id: turn_id.to_string(),
        call: call.clone(),
        status: ApprovalStatus::Pending,
        answer: None,
    })
}

/// Approved with edited arguments: the edited call goes through validation, the sandbox, the
/// guard and the user's pre-call hooks again; only a deny stops it (the human has seen and
/// written what runs).
async fn run_edited(
    session: &Session,
    turn_id: &str,
    call: &ToolCall,
    edited: &str,
    decision: ApprovalAnswer,
) -> Resolution {
    let edited_call = ToolCall { arguments: edited.to_string(), ..call.clone() };
    let (checked, hook_runs) = session.pipeline().check_with_hooks(&edited_call, &session.id).await;
    let rows = CallRows::new(&edited_call);
    for run in &hook_runs {
        session.audit(AuditKind::GuardDecision, Some(turn_id), |r| rows.hooked(r, run));
    }
    match checked {
        Err(mut outcome) => {
            outcome.result.output = format!("The user's edited arguments were refused. {}", outcome.result.output);
            Resolution::Refused(outcome)
        }
        Ok(checked) => {
            session.remember(&checked.prepared, decision).await;
            let note =
                format!("[note: the user edited the arguments before approving: {}]", checked.prepared.canonical_args);
            let verdict = Verdict { decision: Decision::Ask, source: DecisionSource::User, ..checked.verdict.clone() };
            Resolution::Run(Box::new(CheckedCall { verdict, ..checked }), Some(note))
        }
    }
}

/// Records that approved request `id` moved on to `status` before anything runs: unrecorded, a
/// resumed session would run the call a second time, so a store failure refuses the call.
async fn mark(
    session: &Session,
    call: &ToolCall,
    checked: &CheckedCall,
    id: &str,
    status: ApprovalStatus,
) -> Option<Resolution> {
    let Err(e) = session.deps.store.mark_approved(id, status) else { return None };
    let message = format!("cannot record that approval {id} is {}: {e}", status_word(status));
    session.error(bridle_protocol::ErrorCode::StoreWriteFailed, message.clone(), true).await;
    Some(refused(call, checked, format!("Not run: {message}."), ToolStatus::Error))
}

fn refused(call: &ToolCall, checked: &CheckedCall, message: String, status: ToolStatus) -> Resolution {
    let mut outcome = CallOutcome::not_run(call, checked.verdict.clone(), message, status);
    outcome.failure = Some(CallFailure::Denied);
    Resolution::Refused(Box::new(outcome))
}
