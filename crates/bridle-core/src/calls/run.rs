//! Run: the tool, or the commit of the plan a person approved, within the call's timeout.
//!
//! Rules: the timeout starts here, after any approval and any wait for a slot; an interrupt
//! stops the call at once, and so does the timeout, but a write the call had begun is stopped
//! and waited for ([`crate::changes::CallWrites`]): it leaves nothing or rolls back, and the
//! result says which, before the call returns; a change a person approved is committed exactly as they saw it (a
//! file that moved on meanwhile fails the commit, it is never planned again behind their back),
//! every other write plans as it runs; the user's post-call hooks hear every call that ran;
//! within a batch ([`Schedule`]) calls share a bounded number of slots and a command runs alone.

use std::sync::Arc;
use std::time::Instant;

use bridle_protocol::{ToolResult, ToolStatus};
use tokio::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard, Semaphore, SemaphorePermit};
use tokio_util::sync::CancellationToken;

use super::check::CheckedCall;
use super::outcome::{CallFailure, CallOutcome, NotRun};
use super::record::{CallEvent, Recorder};
use super::stream::CallStream;
use super::stream::Desk;
use super::Calls;
use crate::hooks::HookInput;
use crate::tools::{commit_plan, Effect, ToolContext, ToolKind};
use bridle_protocol::ToolCall;

impl Calls {
    /// Runs `checked` with `ctx` (its timeout starting now), stopping early when `ctx.cancel`
    /// fires, and records its start and its end.
    pub async fn run(&self, stream: &CallStream, checked: CheckedCall, ctx: ToolContext) -> CallOutcome {
        stream.record(CallEvent::Started).await;
        let outcome = self.execute(stream, checked, ctx).await;
        stream.record(CallEvent::Ended(&outcome)).await;
        outcome
    }

    async fn execute(&self, stream: &CallStream, checked: CheckedCall, ctx: ToolContext) -> CallOutcome {
        let CheckedCall { prepared, verdict, plan, notes } = checked;
        let started = Instant::now();
        let timeout = prepared.call.timeout(self.timeout);
        // The approved change, exactly; any other call plans (if it writes) as it runs.
        let approved_plan = match plan {
            Some(Ok(plan)) if prepared.kind == ToolKind::Write => Some(plan),
            _ => None,
        };
        let run = async {
            match &approved_plan {
                Some(plan) => commit_plan(plan, &ctx).await,
                None => prepared.call.run(&ctx).await,
            }
        };
        let call_id = ctx.call_id.as_str();
        let mut changes = Vec::new();
        let (mut result, status, failure) = tokio::select! {
            biased;
            _ = ctx.cancel.cancelled() => (
                ToolResult::error(call_id, "Interrupted by the user before the tool finished."),
                ToolStatus::Interrupted,
                Some(CallFailure::Interrupted),
            ),
            outcome = tokio::time::timeout(timeout, run) => match outcome {
                Ok(Ok(mut out)) => {
                    if let Some(held) = out.held.take() {
                        let command = prepared.call.shell().map(|l| l.command.to_string()).unwrap_or_default();
                        super::held::settle(held, &mut out, &command, self.permit.mode(), &ctx, stream).await;
                    }
                    let diff: String = out.changes.iter().map(|c| c.diff.as_str()).collect();
                    changes = out.changes;
                    let result = ToolResult {
                        tool_call_id: call_id.to_string(),
                        output: out.output,
                        is_error: false,
                        details: out.details,
                        data: out.data,
                        diff: (!diff.is_empty()).then_some(diff),
                    };
                    (result, ToolStatus::Ok, None)
                }
                Ok(Err(err)) => (ToolResult::error(call_id, format!("Error: {err}")), ToolStatus::Error, Some(CallFailure::ToolError)),
                Err(_) => (
                    ToolResult::error(call_id, format!("Error: `{}` timed out after {} s and was stopped.", prepared.name, timeout.as_secs_f64())),
                    ToolStatus::Error,
                    Some(CallFailure::TimedOut),
                ),
            },
        };
        if failure.is_some_and(|f| matches!(f, CallFailure::Interrupted | CallFailure::TimedOut)) {
            ctx.writes.stop();
            let told = ctx.writes.settled().await;
            for told in &told {
                result.output.push_str(&format!(" The change it was writing: {told}."));
            }
            if told.is_empty() && prepared.kind == ToolKind::Write {
                result.output.push_str(" It had not begun writing: nothing was changed.");
            }
        }
        if !prepared.repairs.is_empty() {
            result
                .output
                .push_str(&format!("\n\n[note: your arguments were repaired: {}]", prepared.repairs.join("; ")));
        }
        let duration = started.elapsed();
        let mut hooks = Vec::new();
        if !self.hooks.is_empty() && status != ToolStatus::Interrupted {
            let input = HookInput {
                session_id: &ctx.session_id,
                cwd: self.workspace.root(),
                hook_event_name: "PostToolUse",
                tool_name: &prepared.name,
                tool_input: &prepared.args,
                tool_response: Some(serde_json::json!({
                    "output": result.output,
                    "isError": result.is_error,
                    "details": result.details,
                    "data": result.data,
                })),
            };
            let (runs, feedback) = self.hooks.after(&input).await;
            for note in feedback {
                result.output.push_str(&format!("\n\n[hook] {note}"));
            }
            hooks = runs;
        }
        for note in notes {
            result.output.push_str(&format!("\n\n{note}"));
        }
        let effect = if status == ToolStatus::Ok { prepared.effect } else { Effect::None };
        CallOutcome {
            verdict,
            executed: true,
            result,
            status,
            failure,
            not_run: None,
            duration,
            changes,
            effect,
            hooks,
        }
    }
}

/// The slots of one batch of calls: at most `max` run at once, and a command runs alone (it
/// can touch anything).
pub struct Schedule {
    slots: Semaphore,
    exclusive: RwLock<()>,
}

/// A call's place in a [`Schedule`], held while it runs.
pub struct Slot<'a> {
    _slot: Option<SemaphorePermit<'a>>,
    _lock: Lock<'a>,
}

enum Lock<'a> {
    Alone(#[allow(dead_code)] RwLockWriteGuard<'a, ()>),
    Shared(#[allow(dead_code)] RwLockReadGuard<'a, ()>),
}

impl Schedule {
    /// Room for `max` calls at once (at least one).
    pub fn new(max: usize) -> Self {
        Self { slots: Semaphore::new(max.max(1)), exclusive: RwLock::new(()) }
    }

    /// Waits for a slot for a call of `kind`; an interrupt while waiting is its outcome.
    pub async fn enter(
        &self,
        kind: ToolKind,
        call_id: &str,
        cancel: &CancellationToken,
    ) -> Result<Slot<'_>, Box<CallOutcome>> {
        let wait = async {
            let slot = self.slots.acquire().await.ok();
            let lock = match kind {
                ToolKind::Exec => Lock::Alone(self.exclusive.write().await),
                _ => Lock::Shared(self.exclusive.read().await),
            };
            Slot { _slot: slot, _lock: lock }
        };
        tokio::select! {
            biased;
            _ = cancel.cancelled() => {
                Err(Box::new(CallOutcome::not_run(call_id, crate::guard::Verdict::allow_by_mode(), NotRun::Interrupted)))
            }
            slot = wait => Ok(slot),
        }
    }
}

/// How a call ended after its check.
pub enum Finished {
    /// It ran, or was refused or stopped: its outcome (already recorded).
    Ended(Box<CallOutcome>),
    /// It waits for another process's answer (`--on-ask defer`): the request's id.
    Deferred(String),
}

impl Calls {
    /// The stream of `call`, to run with `ctx` (whose network asks and records through it):
    /// recorded by `recorder`, asking at `desk` (none: nobody can be asked).
    pub fn stream(
        &self,
        call: &ToolCall,
        ctx: &mut ToolContext,
        recorder: Arc<dyn Recorder>,
        desk: Option<Desk>,
    ) -> CallStream {
        let ids = (ctx.session_id.as_str(), ctx.turn_id());
        let stream = CallStream::new(call, ids, recorder, desk, self.permit.clone(), ctx.cancel.clone());
        ctx.network =
            Some(crate::network::CallNetwork { proxy: self.permit.network().cloned(), gate: Arc::new(stream.clone()) });
        stream
    }

    /// Everything after the check, in order: the person's answer when the verdict asks
    /// ([`Self::approve`]), a slot in `schedule`, the run; the end is recorded however it came.
    pub async fn finish(
        &self,
        stream: &CallStream,
        checked: super::check::Checked,
        existing: Option<crate::store::StoredApproval>,
        ctx: ToolContext,
        schedule: &Schedule,
    ) -> Finished {
        let ready = match self.approve(stream, checked, existing, &ctx).await {
            super::approve::Approved::Run(ready) => ready,
            super::approve::Approved::Deferred(id) => return Finished::Deferred(id),
            super::approve::Approved::Refused(outcome) => {
                stream.record(CallEvent::Ended(&outcome)).await;
                return Finished::Ended(outcome);
            }
        };
        let _slot = match schedule.enter(ready.prepared.kind, &stream.call().id, &ctx.cancel).await {
            Ok(slot) => slot,
            Err(outcome) => {
                stream.record(CallEvent::Ended(&outcome)).await;
                return Finished::Ended(outcome);
            }
        };
        Finished::Ended(Box::new(self.run(stream, *ready, ctx).await))
    }

    /// Checks and runs `call` in one go, recording nothing and asking nobody; a call the verdict
    /// asks about runs as if a person had approved it. For benchmarks and tests of the call path
    /// alone.
    pub async fn check_and_run(&self, call: &ToolCall, mut ctx: ToolContext) -> CallOutcome {
        let stream = self.stream(call, &mut ctx, Arc::new(super::record::Unrecorded), None);
        match self.check(&stream, &ctx, None).await {
            super::check::Checked::Ready(checked) => self.run(&stream, *checked, ctx).await,
            super::check::Checked::Done(outcome) => *outcome,
        }
    }
}
