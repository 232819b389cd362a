//! Getting a human's answer for one call the guard sent to `ask`.
//!
//! Rules: nothing runs before its answer; a call the session already approved (the exact
//! command, or the tool on the path) runs without asking again; an approval of a file change is
//! re-checked against the file as it is now — changed meanwhile, it becomes a fresh request with
//! a fresh preview instead of running; edited arguments are judged again from the start; every
//! way of not running (deny, expiry, interrupt) becomes a result the model can read.

use bridle_protocol::{ApprovalAnswer, ApprovalRequest, Decision, DecisionSource, Event, ToolCall, ToolStatus};
use tokio_util::sync::CancellationToken;

use super::session::Session;
use crate::approvals::{self, status_word};
use crate::audit::AuditKind;
use crate::guard::Verdict;
use crate::pipeline::{CallFailure, CallOutcome, CheckedCall};
use crate::store::{ApprovalStatus, StoredApproval};
use serde_json::json;

/// How asking ended.
pub(crate) enum Approval {
    /// Run this call (edited arguments already judged again), with a note for the model.
    Run(Box<CheckedCall>, Option<String>),
    /// Do not run it: this is its outcome.
    Refused(Box<CallOutcome>),
    /// Left pending for another process to answer (`--on-ask defer`).
    Deferred(String),
}

pub(crate) async fn approve(
    session: &Session,
    turn_id: &str,
    call: &ToolCall,
    checked: CheckedCall,
    existing: Option<StoredApproval>,
    cancel: &CancellationToken,
) -> Approval {
    let workspace = session.pipeline().workspace().clone();
    if existing.is_none() && session.granted(&approvals::grant_keys(&checked.prepared, &workspace, &session.id)) {
        let verdict = Verdict { source: DecisionSource::User, ..checked.verdict.clone() };
        return Approval::Run(Box::new(CheckedCall { verdict, ..checked }), None);
    }
    let mut stored = match existing {
        Some(stored) => {
            if stored.status == ApprovalStatus::Pending {
                // Resumed in a new process: whoever watches now has not seen it yet.
                let request = stored.request.clone();
                session.emit(Event::ApprovalRequested { session_id: session.id.clone(), request }).await;
            }
            stored
        }
        None => match open_request(session, turn_id, call, &checked).await {
            Ok(stored) => stored,
            Err(outcome) => return Approval::Refused(outcome),
        },
    };
    loop {
        let id = stored.request.id.clone();
        if stored.status == ApprovalStatus::Pending {
            if session.config.defer_approvals {
                return Approval::Deferred(id);
            }
            stored = match session.approvals.wait(&id, cancel).await {
                Ok(stored) => stored,
                Err(e) => {
                    return refused(
                        call,
                        &checked,
                        format!("Not run: the approval could not be read ({e})."),
                        ToolStatus::Error,
                    )
                }
            };
        }
        let answer = stored.answer.clone();
        if let Some(answer) = &answer {
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
        let feedback = answer.as_ref().and_then(|a| a.feedback.clone()).filter(|f| !f.trim().is_empty());
        match stored.status {
            ApprovalStatus::Approved => {
                let Some(answer) = answer else {
                    return refused(call, &checked, "Not run: the approval has no answer.".into(), ToolStatus::Error);
                };
                if let Some(edited) = &answer.edited_arguments {
                    if let Some(refusal) = mark(session, call, &checked, &id, ApprovalStatus::Started).await {
                        return refusal;
                    }
                    return run_edited(session, call, edited, answer.decision).await;
                }
                let ctx = session.tool_context(turn_id, &call.id, CancellationToken::new());
                let now =
                    approvals::call_hash(&checked.prepared, approvals::plan(&checked.prepared, &ctx).await.as_ref());
                if now != stored.request.call_hash {
                    if let Some(refusal) = mark(session, call, &checked, &id, ApprovalStatus::Stale).await {
                        return refusal;
                    }
                    stored = match open_request(session, turn_id, call, &checked).await {
                        Ok(fresh) => fresh,
                        Err(outcome) => return Approval::Refused(outcome),
                    };
                    continue;
                }
                if let Some(refusal) = mark(session, call, &checked, &id, ApprovalStatus::Started).await {
                    return refusal;
                }
                session.remember(&checked.prepared, answer.decision).await;
                let verdict = Verdict { source: DecisionSource::User, ..checked.verdict.clone() };
                return Approval::Run(Box::new(CheckedCall { verdict, ..checked }), None);
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
                return Approval::Refused(Box::new(outcome));
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

/// Approved with edited arguments: the edited call goes through validation, the sandbox and the
/// guard again; only a deny stops it (the human has seen and written what runs).
async fn run_edited(session: &Session, call: &ToolCall, edited: &str, decision: ApprovalAnswer) -> Approval {
    let edited_call = ToolCall { arguments: edited.to_string(), ..call.clone() };
    match session.pipeline().check(&edited_call, &session.id) {
        Err(mut outcome) => {
            outcome.result.output = format!("The user's edited arguments were refused. {}", outcome.result.output);
            Approval::Refused(outcome)
        }
        Ok(checked) => {
            session.remember(&checked.prepared, decision).await;
            let note =
                format!("[note: the user edited the arguments before approving: {}]", checked.prepared.canonical_args);
            let verdict = Verdict { decision: Decision::Ask, source: DecisionSource::User, ..checked.verdict.clone() };
            Approval::Run(Box::new(CheckedCall { verdict, ..checked }), Some(note))
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
) -> Option<Approval> {
    let Err(e) = session.deps.store.mark_approved(id, status) else { return None };
    let message = format!("cannot record that approval {id} is {}: {e}", status_word(status));
    session.error("store_write_failed", message.clone(), true).await;
    Some(refused(call, checked, format!("Not run: {message}."), ToolStatus::Error))
}

fn refused(call: &ToolCall, checked: &CheckedCall, message: String, status: ToolStatus) -> Approval {
    let mut outcome = CallOutcome::not_run(call, checked.verdict.clone(), message, status);
    outcome.failure = Some(CallFailure::Denied);
    Approval::Refused(Box::new(outcome))
}
