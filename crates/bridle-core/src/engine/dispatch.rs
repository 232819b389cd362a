//! Running the tool calls of one answer, and where their events go.
//!
//! Rules: every call is checked first, in call order (the loop guard counts them in that order);
//! then they go on concurrently, each through its own approval, up to `max_concurrent_tools` at
//! once ([`Schedule`]: a command runs alone); one call failing or timing out never cancels its
//! siblings; results come back in call order whatever order they finish in. What a call does is
//! decided in [`crate::calls`]; here its events become window events, store rows and audit rows
//! ([`TurnRecorder`]), each result stored the moment its call ends, so a crash mid-batch loses
//! none that ended.

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use bridle_protocol::{Event, ToolCall, ToolResult};
use futures::future::join_all;
use tokio_util::sync::CancellationToken;

use super::session::Session;
use crate::calls::{audit_rows, CallEvent, CallOutcome, Checked, Finished, LoopGuard, NotRun, Recorder, Schedule};

use crate::guard::Verdict;
use crate::store::StoredApproval;
use crate::tools::Effect;

pub(crate) struct Dispatched {
    /// One result per call that ended, in call order.
    pub results: Vec<ToolResult>,
    /// Requests left pending for another process (`--on-ask defer`); their calls have no result.
    pub deferred: Vec<String>,
    /// The loop guard stopped the turn.
    pub loop_stopped: bool,
}

/// Runs `calls`; `existing` holds the stored approval requests of calls resumed from an earlier
/// process, by call id.
pub(crate) async fn run_calls(
    session: &Arc<Session>,
    turn_id: &str,
    calls: &[ToolCall],
    existing: &mut HashMap<String, StoredApproval>,
    loop_guard: &mut LoopGuard,
    cancel: &CancellationToken,
) -> Dispatched {
    let recorder: Arc<dyn Recorder> = Arc::new(TurnRecorder { session: session.clone(), turn_id: turn_id.to_string() });
    for call in calls {
        let event =
            Event::ToolCallBegin { session_id: session.id.clone(), turn_id: turn_id.to_string(), call: call.clone() };
        session.emit(event).await;
    }
    let owner = session.calls();
    let mut loop_stopped = false;
    let mut checked = Vec::with_capacity(calls.len());
    for call in calls {
        let mut ctx = session.tool_context(turn_id, &call.id, cancel.child_token());
        let stream = owner.stream(call, &mut ctx, recorder.clone(), Some(session.desk()));
        let check = if loop_stopped {
            Checked::Done(Box::new(CallOutcome::not_run(&call.id, Verdict::allow_by_mode(), NotRun::AfterLoop)))
        } else {
            owner.check(&stream, &ctx, Some(&mut *loop_guard)).await
        };
        loop_stopped |= matches!(&check, Checked::Done(outcome) if outcome.stopped_by_loop_guard());
        checked.push((check, ctx, stream));
    }

    let schedule = Schedule::new(session.config.limits.max_concurrent_tools);
    let runs = checked.into_iter().zip(calls).map(|((check, ctx, stream), call)| {
        let existing = existing.remove(&call.id);
        let (owner, schedule) = (&owner, &schedule);
        async move { owner.finish(&stream, check, existing, ctx, schedule).await }
    });
    let mut dispatched = Dispatched { results: Vec::new(), deferred: Vec::new(), loop_stopped };
    for finished in join_all(runs).await {
        match finished {
            Finished::Ended(outcome) => {
                if !outcome.changes.is_empty() {
                    loop_guard.reset();
                }
                dispatched.results.push(outcome.result);
            }
            Finished::Deferred(id) => dispatched.deferred.push(id),
        }
    }
    dispatched
}

/// A turn's calls' events: window events, store rows and audit rows. Owned, so a call's
/// background process can still record (and ask) after the turn.
pub(crate) struct TurnRecorder {
    pub session: Arc<Session>,
    pub turn_id: String,
}

#[async_trait]
impl Recorder for TurnRecorder {
    async fn record(&self, call: &ToolCall, event: CallEvent<'_>) {
        let (session, turn_id) = (&self.session, self.turn_id.as_str());
        session.audit_rows(audit_rows(call, &event, |kind| session.audit_record(kind, Some(turn_id))));
        match event {
            CallEvent::ApprovalRequested(request, _) | CallEvent::ApprovalShown(request) => {
                let event = Event::ApprovalRequested { session_id: session.id.clone(), request: request.clone() };
                session.emit(event).await;
            }
            CallEvent::ApprovalResolved(stored) => {
                let Some(answer) = &stored.answer else { return };
                session
                    .emit(Event::ApprovalResolved {
                        session_id: session.id.clone(),
                        approval_id: stored.request.id.clone(),
                        decision: answer.decision,
                        source: answer.source,
                    })
                    .await;
            }
            CallEvent::Trouble(problem) => {
                session.error(problem.code, problem.message.clone(), problem.retryable).await
            }
            CallEvent::Ended(outcome) => self.ended(call, outcome).await,
            CallEvent::Proposed
            | CallEvent::Hooked(_)
            | CallEvent::Judged(_)
            | CallEvent::AnsweredHere { .. }
            | CallEvent::Started
            | CallEvent::Connection(_) => {}
        }
    }

    fn record_now(&self, call: &ToolCall, event: CallEvent<'_>) {
        let (session, turn_id) = (&self.session, self.turn_id.as_str());
        session.audit_rows(audit_rows(call, &event, |kind| session.audit_record(kind, Some(turn_id))));
        if let CallEvent::ApprovalResolved(stored) = event {
            if let Some(answer) = &stored.answer {
                session.try_emit(Event::ApprovalResolved {
                    session_id: session.id.clone(),
                    approval_id: stored.request.id.clone(),
                    decision: answer.decision,
                    source: answer.source,
                });
            }
        }
    }
}

impl TurnRecorder {
    /// The files the call changed are told first (a reader of the end, an editor's diff view,
    /// has them then), then the window hears the end and the store keeps the result at once; what
    /// the call did beyond its result follows: the plan it set.
    async fn ended(&self, call: &ToolCall, outcome: &CallOutcome) {
        let (session, turn_id) = (&self.session, self.turn_id.as_str());
        for change in &outcome.changes {
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
        match outcome.effect {
            Effect::SetsPlan => session.keep_plan(turn_id, &outcome.result).await,
            Effect::None => {}
        }
        if !outcome.changes.is_empty() {
            session.files_changed(outcome.changes.iter().map(|c| c.path.as_str())).await;
        }
    }
}
