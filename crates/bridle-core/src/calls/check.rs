//! Check: everything known about a call before anyone is asked, folded into one verdict.
//!
//! Rule: a call is looked up, repaired and validated, its paths judged by the path sandbox,
//! the call judged by the guard under the rules in force ([`super::Permit`]), the user's
//! pre-call hooks heard, the loop guard consulted and the session's grants applied — in that
//! order, the stricter answer winning at each step, and whatever refuses the call ends it
//! there. A verdict that asks carries the plan of the change it would make, computed here
//! once: the preview the person reads and the change the approval binds.

use bridle_protocol::{Decision, DecisionSource, Finding, ToolCall};

use super::loop_guard::{LoopGuard, Repetition, REMINDER};
use super::outcome::{CallOutcome, NotRun};
use super::record::CallEvent;
use super::stream::CallStream;
use super::Calls;
use crate::changes::ChangePlan;
use crate::guard::Verdict;
use crate::hooks::{HookInput, HookRun};
use crate::tools::{PreparedCall, ToolContext, ToolError};

/// A call that passed the checks.
#[derive(Clone)]
pub struct CheckedCall {
    /// The prepared call.
    pub prepared: PreparedCall,
    /// The folded verdict: allow, or ask.
    pub verdict: Verdict,
    /// The change it would make, when the verdict asks (the preview, and what an approval
    /// binds); `None` for every other call, which plans when it runs.
    pub plan: Option<Result<ChangePlan, ToolError>>,
    /// Words appended to its result (a loop-guard reminder, the person's edit).
    pub notes: Vec<String>,
}

/// What the checks made of a call.
pub enum Checked {
    /// Go on, to the person when the verdict asks.
    Ready(Box<CheckedCall>),
    /// Refused (or never valid): this is its outcome.
    Done(Box<CallOutcome>),
}

impl Calls {
    /// Checks `call`, to run with `ctx`, recording what each step found; `loop_guard` is the
    /// turn's (none outside a turn).
    pub async fn check(&self, stream: &CallStream, ctx: &ToolContext, loop_guard: Option<&mut LoopGuard>) -> Checked {
        let call = stream.call();
        let session_id = ctx.session_id.as_str();
        let (judged, hooks) = self.judge_with_hooks(call, session_id).await;
        stream.record(CallEvent::Proposed).await;
        for run in &hooks {
            stream.record(CallEvent::Hooked(run)).await;
        }
        let verdict = match &judged {
            Ok(checked) => &checked.verdict,
            Err(outcome) => &outcome.verdict,
        };
        stream.record(CallEvent::Judged(verdict)).await;
        let repetition = loop_guard.map(|guard| {
            guard.observe(match &judged {
                Ok(c) => format!("{}\u{0}{}", c.prepared.name, c.prepared.canonical_args),
                Err(_) => format!("{}\u{0}{}", call.name, call.arguments),
            })
        });
        let mut checked = match (repetition, judged) {
            (Some(Repetition::Stop), _) => {
                return Checked::Done(Box::new(CallOutcome::not_run(
                    &call.id,
                    Verdict::allow_by_mode(),
                    NotRun::Looping,
                )))
            }
            (_, Err(outcome)) => return Checked::Done(outcome),
            (repetition, Ok(checked)) => {
                let mut checked = checked;
                if repetition == Some(Repetition::Remind) {
                    checked.notes.push(REMINDER.trim_start().to_string());
                }
                checked
            }
        };
        if checked.verdict.decision == Decision::Ask {
            if self.permit.granted(&self.grant_keys(&checked.prepared, session_id)) {
                checked.verdict.source = DecisionSource::User;
                checked.verdict.decision = Decision::Allow;
            } else {
                checked.plan = checked.prepared.call.plan(ctx).await;
            }
        }
        Checked::Ready(Box::new(checked))
    }

    /// The verdict on `call` without hooks, recording nothing (`bridle guard`, tests).
    pub fn judge(&self, call: &ToolCall, session_id: &str) -> Result<CheckedCall, Box<CallOutcome>> {
        let prepared = match self.registry.prepare_call(call) {
            Ok(prepared) => prepared,
            Err(err) => {
                let verdict =
                    Verdict { decision: Decision::Deny, source: DecisionSource::Validation, findings: Vec::new() };
                return Err(Box::new(CallOutcome::not_run(&call.id, verdict, NotRun::Invalid(err))));
            }
        };
        let verdict = match self.sandbox_verdict(&prepared, session_id) {
            Some(denied) => denied,
            None => {
                let (mode, policy) = self.permit.in_force();
                self.guard.judge_under(&prepared, mode, &policy)
            }
        };
        if verdict.decision == Decision::Deny {
            return Err(Box::new(refused(call, verdict)));
        }
        Ok(CheckedCall { prepared, verdict, plan: None, notes: Vec::new() })
    }

    /// [`Self::judge`], then the user's pre-call hooks, which may deny, ask, or allow within
    /// what the guard allows. Their runs come back for the record.
    pub(super) async fn judge_with_hooks(
        &self,
        call: &ToolCall,
        session_id: &str,
    ) -> (Result<CheckedCall, Box<CallOutcome>>, Vec<HookRun>) {
        let mut checked = match self.judge(call, session_id) {
            Ok(checked) if !self.hooks.is_empty() => checked,
            other => return (other, Vec::new()),
        };
        let input = HookInput {
            session_id,
            cwd: self.workspace.root(),
            hook_event_name: "PreToolUse",
            tool_name: &checked.prepared.name,
            tool_input: &checked.prepared.args,
            tool_response: None,
        };
        let runs = self.hooks.before(&input, &mut checked.verdict).await;
        if checked.verdict.decision == Decision::Deny {
            return (Err(Box::new(refused(call, checked.verdict))), runs);
        }
        (Ok(checked), runs)
    }

    /// A file tool's path that the sandbox refuses is denied outright, whatever the mode.
    fn sandbox_verdict(&self, prepared: &PreparedCall, session_id: &str) -> Option<Verdict> {
        let findings: Vec<Finding> = prepared
            .call
            .paths()
            .into_iter()
            .filter_map(|(path, access)| self.workspace.sandbox.resolve(&path, access, session_id).err())
            .map(|err| {
                let (rule, severity) = err.rule();
                Finding {
                    guardian: "sandbox".into(),
                    rule: rule.into(),
                    severity,
                    message: err.to_string(),
                    contained: false,
                }
            })
            .collect();
        (!findings.is_empty()).then_some(Verdict {
            decision: Decision::Deny,
            source: DecisionSource::Sandbox,
            findings,
        })
    }
}

/// A call the verdict refuses.
fn refused(call: &ToolCall, verdict: Verdict) -> CallOutcome {
    CallOutcome::not_run(&call.id, verdict, NotRun::Refused { tool: call.name.clone() })
}
