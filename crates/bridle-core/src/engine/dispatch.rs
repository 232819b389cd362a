//! Running the tool calls of one answer.
//!
//! Rules: calls run concurrently up to `max_concurrent_tools`; an exec tool (`bash`) runs
//! alone; each call's timeout starts when it actually starts; one call failing or timing out
//! never cancels its siblings; results come back in call order whatever order they finish in;
//! a call the guard sends to `ask` waits for its answer first, and its timeout starts after it;
//! each result is stored the moment its call ends, so a crash mid-batch loses none that ended.

use std::sync::Arc;

use std::collections::HashMap;

use bridle_protocol::{Event, ToolCall, ToolResult, ToolStatus};
use futures::future::join_all;
use tokio::sync::{RwLock, Semaphore};
use tokio_util::sync::CancellationToken;

use super::approve::{resolve, Resolution};
use super::loop_guard::{LoopGuard, Repetition, REMINDER};
use super::session::Session;
use crate::audit::{AuditKind, CallRows};
use crate::pipeline::{CallOutcome, CheckedCall};
use crate::store::StoredApproval;
use crate::tools::ToolKind;

pub(crate) struct Dispatched {
    /// One result per call that ended, in call order.
    pub results: Vec<ToolResult>,
    /// Requests left pending for another process (`--on-ask defer`); their calls have no result.
    pub deferred: Vec<String>,
    /// The loop guard stopped the turn.
    pub loop_stopped: bool,
}

enum Plan {
    Run { checked: Box<CheckedCall>, remind: bool, existing: Option<Box<StoredApproval>> },
    Done(Box<CallOutcome>),
}

enum Ended {
    Outcome(CallOutcome),
    Deferred(String),
}

/// Runs `calls`; `existing` holds the stored approval requests of calls resumed from an earlier
/// process, by call id.
pub(crate) async fn run_calls(
    session: &Session,
    turn_id: &str,
    calls: &[ToolCall],
    existing: &mut HashMap<String, StoredApproval>,
    loop_guard: &mut LoopGuard,
    cancel: &CancellationToken,
) -> Dispatched {
    for call in calls {
        session
            .emit(Event::ToolCallBegin {
                session_id: session.id.clone(),
                turn_id: turn_id.to_string(),
                call: call.clone(),
            })
            .await;
    }
    let mut loop_stopped = false;
    let mut plans = Vec::with_capacity(calls.len());
    for call in calls {
        if loop_stopped {
            plans.push(Plan::Done(Box::new(not_run(call, "Not run: the turn was ended by the loop guard."))));
            continue;
        }
        let (checked, hook_runs) = session.pipeline().check_with_hooks(call, &session.id).await;
        let rows = CallRows::new(call);
        session.audit(AuditKind::ToolCall, Some(turn_id), |r| rows.proposed(r));
        for run in &hook_runs {
            session.audit(AuditKind::GuardDecision, Some(turn_id), |r| rows.hooked(r, run));
        }
        let verdict = match &checked {
            Ok(c) => &c.verdict,
            Err(outcome) => &outcome.verdict,
        };
        session.audit(AuditKind::GuardDecision, Some(turn_id), |r| rows.judged(r, verdict));
        let key = match &checked {
            Ok(c) => format!("{}\u{0}{}", c.prepared.name, c.prepared.canonical_args),
            Err(_) => format!("{}\u{0}{}", call.name, call.arguments),
        };
        let repetition = loop_guard.observe(key);
        plans.push(match (repetition, checked) {
            (Repetition::Stop, _) => {
                loop_stopped = true;
                Plan::Done(Box::new(not_run(
                    call,
                    "Not run: this is the fourth identical call in a row with nothing changed, so the turn has ended.",
                )))
            }
            (_, Err(outcome)) => {
                // A resumed call that is now refused outright: its old request is void.
                if let Some(stale) = existing.remove(&call.id) {
                    if let Err(e) = session.approvals.withdraw(&stale.request.id, "the call is now refused") {
                        session.error(bridle_protocol::ErrorCode::StoreWriteFailed, e.to_string(), true).await;
                    }
                }
                Plan::Done(outcome)
            }
            (repetition, Ok(checked)) => {
                let existing = existing.remove(&call.id).map(Box::new);
                Plan::Run { checked: Box::new(checked), remind: repetition == Repetition::Remind, existing }
            }
        });
    }

    let slots = Arc::new(Semaphore::new(session.config.limits.max_concurrent_tools.max(1)));
    let exclusive = Arc::new(RwLock::new(()));
    let runs = plans.into_iter().zip(calls).map(|(plan, call)| {
        let slots = slots.clone();
        let exclusive = exclusive.clone();
        async move {
            let outcome = match plan {
                Plan::Done(outcome) => *outcome,
                Plan::Run { checked, remind, existing } => {
                    let ready = match resolve(session, turn_id, call, *checked, existing.map(|e| *e), cancel).await {
                        Resolution::Run(checked, note) => Ok((*checked, note)),
                        Resolution::Refused(outcome) => Err(*outcome),
                        Resolution::Deferred(id) => return Ended::Deferred(id),
                    };
                    match ready {
                        Err(refused) => refused,
                        Ok((checked, note)) => {
                            let mut outcome =
                                run_one(session, turn_id, call, checked, &slots, &exclusive, cancel).await;
                            if let Some(note) = note {
                                outcome.result.output.push_str(&format!("\n\n{note}"));
                            }
                            if remind {
                                outcome.result.output.push_str(REMINDER);
                            }
                            outcome
                        }
                    }
                }
            };
            session
                .emit(Event::ToolCallEnd {
                    session_id: session.id.clone(),
                    turn_id: turn_id.to_string(),
                    status: outcome.status,
                    duration_ms: outcome.duration.as_millis() as u64,
                    result: outcome.result.clone(),
                })
                .await;
            session.persist_result(turn_id, &outcome.result).await;
            if call.name == <crate::tools::UpdatePlan as crate::tools::TypedTool>::NAME
                && outcome.status == ToolStatus::Ok
            {
                session.keep_plan(turn_id, &outcome.result).await;
            }
            let rows = CallRows::new(call);
            session.audit(CallRows::end_kind(&outcome), Some(turn_id), |r| rows.ended(r, &outcome));
            for run in &outcome.hooks {
                session.audit(AuditKind::GuardDecision, Some(turn_id), |r| rows.hooked(r, run));
            }
            if !outcome.changes.is_empty() {
                session.files_changed(outcome.changes.iter().map(|c| c.path.as_str())).await;
            }
            for change in &outcome.changes {
                session.audit(AuditKind::FileChanged, Some(turn_id), |r| rows.changed(r, change));
                session
                    .emit(Event::FileChanged {
                        session_id: session.id.clone(),
                        turn_id: turn_id.to_string(),
                        call_id: call.id.clone(),
                        path: change.path.clone(),
                        diff: change.diff.clone(),
                    })
                    .await;
            }
            Ended::Outcome(outcome)
        }
    });
    let mut dispatched = Dispatched { results: Vec::new(), deferred: Vec::new(), loop_stopped };
    for ended in join_all(runs).await {
        match ended {
            Ended::Outcome(outcome) => {
                if !outcome.changes.is_empty() {
                    loop_guard.reset();
                }
                dispatched.results.push(outcome.result);
            }
            Ended::Deferred(id) => dispatched.deferred.push(id),
        }
    }
    dispatched
}

async fn run_one(
    session: &Session,
    turn_id: &str,
    call: &ToolCall,
    checked: CheckedCall,
    slots: &Semaphore,
    exclusive: &RwLock<()>,
    cancel: &CancellationToken,
) -> CallOutcome {
    let exec = checked.prepared.kind == ToolKind::Exec;
    let wait = async {
        let slot = slots.acquire().await;
        let lock = if exec { Lock::Alone(exclusive.write().await) } else { Lock::Shared(exclusive.read().await) };
        (slot, lock)
    };
    let _held = tokio::select! {
        biased;
        _ = cancel.cancelled() => return interrupted(call),
        held = wait => held,
    };
    let ctx = session.tool_context(turn_id, &call.id, cancel.child_token());
    session.audit(AuditKind::ToolStarted, None, |r| CallRows::new(call).named(r));
    session.pipeline().execute(checked, ctx).await
}

enum Lock<'a> {
    Alone(#[allow(dead_code)] tokio::sync::RwLockWriteGuard<'a, ()>),
    Shared(#[allow(dead_code)] tokio::sync::RwLockReadGuard<'a, ()>),
}

fn not_run(call: &ToolCall, message: &str) -> CallOutcome {
    CallOutcome::not_run(call, crate::guard::Verdict::allow_by_mode(), message, ToolStatus::Error)
}

fn interrupted(call: &ToolCall) -> CallOutcome {
    CallOutcome {
        status: ToolStatus::Interrupted,
        failure: Some(crate::pipeline::CallFailure::Interrupted),
        ..not_run(call, "Not run: interrupted by the user.")
    }
}
