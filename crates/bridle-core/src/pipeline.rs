//! One tool call through the whole pipeline: look up, repair and validate, judge, execute.
//!
//! The engine and `bridle tool` both go through here, so a call behaves the same wherever it
//! comes from. Rule: every way a call can fail — unknown tool, bad arguments, denial, tool
//! error, timeout, interrupt — ends as a `ToolResult` the model can read, never a panic. The
//! user's hooks ([`crate::hooks`]) run here too: before a call, after the guard
//! ([`CallPipeline::check_with_hooks`]), and after it ran ([`CallPipeline::execute`]).

use std::sync::Arc;
use std::time::{Duration, Instant};

use bridle_protocol::{Decision, DecisionSource, Finding, ToolCall, ToolResult, ToolStatus};

use crate::changes::FileChange;
use crate::guard::{Guard, Verdict};
use crate::hooks::{HookInput, HookRun, Hooks};
use crate::tools::{CallError, PreparedCall, ToolContext, ToolRegistry};
use crate::workspace::Workspace;

/// Why a call did not produce a successful result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallFailure {
    /// No such tool.
    UnknownTool,
    /// Arguments not JSON even after repair.
    NotJson,
    /// Arguments do not match the schema.
    InvalidArguments,
    /// The guard (or a human) refused it.
    Denied,
    /// The tool ran and reported an error.
    ToolError,
    /// The tool ran past its timeout.
    TimedOut,
    /// The turn was interrupted while it ran.
    Interrupted,
}

/// Everything known about a finished call.
#[derive(Debug, Clone)]
pub struct CallOutcome {
    /// The guard's verdict (a validation deny when the call never reached the guard).
    pub verdict: Verdict,
    /// Whether the tool ran.
    pub executed: bool,
    /// What the model receives.
    pub result: ToolResult,
    /// How it ended, for events and the UI.
    pub status: ToolStatus,
    /// Why it failed, if it did.
    pub failure: Option<CallFailure>,
    /// Execution time (zero when it did not run).
    pub duration: Duration,
    /// The files it changed, as committed (empty unless a write tool succeeded).
    pub changes: Vec<FileChange>,
    /// The post-call hooks that ran, for the audit log.
    pub hooks: Vec<HookRun>,
}

/// A call that passed validation, with the guard's verdict.
pub struct CheckedCall {
    /// The prepared call.
    pub prepared: PreparedCall,
    /// The guard's verdict.
    pub verdict: Verdict,
}

/// Registry and guard, shared by every call of a session.
#[derive(Clone)]
pub struct CallPipeline {
    registry: Arc<ToolRegistry>,
    guard: Arc<Guard>,
    workspace: Arc<Workspace>,
    timeout: Duration,
    hooks: Arc<Hooks>,
}

impl CallPipeline {
    /// A pipeline over `registry` judged by `guard` for `workspace`, with a default per-call
    /// `timeout` (a tool may ask for another, e.g. `bash`'s `timeout_secs`).
    pub fn new(registry: Arc<ToolRegistry>, guard: Arc<Guard>, workspace: Arc<Workspace>, timeout: Duration) -> Self {
        Self { registry, guard, workspace, timeout, hooks: Arc::new(Hooks::default()) }
    }

    /// The same pipeline running the user's `hooks` around every call.
    pub fn with_hooks(self, hooks: Arc<Hooks>) -> Self {
        Self { hooks, ..self }
    }

    /// The same pipeline offering `registry` instead (the session's MCP tools changed).
    pub fn with_registry(self, registry: Arc<ToolRegistry>) -> Self {
        Self { registry, ..self }
    }

    /// The workspace.
    pub fn workspace(&self) -> &Arc<Workspace> {
        &self.workspace
    }

    /// The guard.
    pub fn guard(&self) -> &Guard {
        &self.guard
    }

    /// The registry.
    pub fn registry(&self) -> &Arc<ToolRegistry> {
        &self.registry
    }

    /// Validates and judges a call of `session_id`; a call that cannot proceed comes back as its
    /// final outcome.
    pub fn check(&self, call: &ToolCall, session_id: &str) -> Result<CheckedCall, Box<CallOutcome>> {
        let prepared = match self.registry.prepare_call(call) {
            Ok(prepared) => prepared,
            Err(err) => {
                let failure = match err {
                    CallError::UnknownTool { .. } => CallFailure::UnknownTool,
                    CallError::NotJson { .. } => CallFailure::NotJson,
                    CallError::Invalid { .. } => CallFailure::InvalidArguments,
                };
                let verdict =
                    Verdict { decision: Decision::Deny, source: DecisionSource::Validation, findings: Vec::new() };
                return Err(Box::new(not_run(call, verdict, format!("Error: {err}"), ToolStatus::Error, failure)));
            }
        };
        let verdict = match self.sandbox_verdict(&prepared, session_id) {
            Some(denied) => denied,
            None => self.guard.judge(&prepared),
        };
        if verdict.decision == Decision::Deny {
            return Err(Box::new(denied(call, verdict)));
        }
        Ok(CheckedCall { prepared, verdict })
    }

    /// [`Self::check`], then the user's pre-call hooks, which may deny, ask, or allow within
    /// what the guard allows. Their runs come back for the audit log (none when no hook
    /// matched or the call was refused before them).
    pub async fn check_with_hooks(
        &self,
        call: &ToolCall,
        session_id: &str,
    ) -> (Result<CheckedCall, Box<CallOutcome>>, Vec<HookRun>) {
        let mut checked = match self.check(call, session_id) {
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
            return (Err(Box::new(denied(call, checked.verdict))), runs);
        }
        (Ok(checked), runs)
    }

    /// A file tool's path that the sandbox refuses is denied outright, whatever the mode.
    fn sandbox_verdict(&self, prepared: &PreparedCall, session_id: &str) -> Option<Verdict> {
        let findings: Vec<Finding> = prepared
            .tool
            .paths(&prepared.args)
            .into_iter()
            .filter_map(|(path, access)| self.workspace.sandbox.resolve(&path, access, session_id).err())
            .map(|err| {
                let (rule, severity) = err.rule();
                Finding { guardian: "sandbox".into(), rule: rule.into(), severity, message: err.to_string() }
            })
            .collect();
        (!findings.is_empty()).then_some(Verdict {
            decision: Decision::Deny,
            source: DecisionSource::Sandbox,
            findings,
        })
    }

    /// Runs a checked call with its timeout, stopping early when `ctx.cancel` fires.
    /// The timeout starts here, after any approval and any wait for a slot.
    pub async fn execute(&self, checked: CheckedCall, ctx: ToolContext) -> CallOutcome {
        let CheckedCall { prepared, verdict } = checked;
        let call_id = ctx.call_id.clone();
        let ctx_session = ctx.session_id.clone();
        let cancel = ctx.cancel.clone();
        let started = Instant::now();
        let timeout = prepared.tool.timeout(&prepared.args, self.timeout);
        let run = prepared.tool.call(prepared.args.clone(), ctx);
        let mut changes = Vec::new();
        let (mut result, status, failure) = tokio::select! {
            biased;
            _ = cancel.cancelled() => (
                ToolResult::error(&call_id, "Interrupted by the user before the tool finished."),
                ToolStatus::Interrupted,
                Some(CallFailure::Interrupted),
            ),
            outcome = tokio::time::timeout(timeout, run) => match outcome {
                Ok(Ok(out)) => {
                    let diff: String = out.changes.iter().map(|c| c.diff.as_str()).collect();
                    changes = out.changes;
                    (
                        ToolResult { tool_call_id: call_id.clone(), output: out.output, is_error: false, data: out.data, diff: (!diff.is_empty()).then_some(diff) },
                        ToolStatus::Ok,
                        None,
                    )
                }
                Ok(Err(err)) => (ToolResult::error(&call_id, format!("Error: {err}")), ToolStatus::Error, Some(CallFailure::ToolError)),
                Err(_) => (
                    ToolResult::error(&call_id, format!("Error: `{}` timed out after {} s and was stopped.", prepared.name, timeout.as_secs_f64())),
                    ToolStatus::Error,
                    Some(CallFailure::TimedOut),
                ),
            },
        };
        if !prepared.repairs.is_empty() {
            result
                .output
                .push_str(&format!("\n\n[note: your arguments were repaired: {}]", prepared.repairs.join("; ")));
        }
        let duration = started.elapsed();
        let mut hooks = Vec::new();
        if !self.hooks.is_empty() && status != ToolStatus::Interrupted {
            let input = HookInput {
                session_id: &ctx_session,
                cwd: self.workspace.root(),
                hook_event_name: "PostToolUse",
                tool_name: &prepared.name,
                tool_input: &prepared.args,
                tool_response: Some(serde_json::json!({
                    "output": result.output,
                    "isError": result.is_error,
                    "data": result.data,
                })),
            };
            let (runs, feedback) = self.hooks.after(&input).await;
            for note in feedback {
                result.output.push_str(&format!("\n\n[hook] {note}"));
            }
            hooks = runs;
        }
        CallOutcome { verdict, executed: true, result, status, failure, duration, changes, hooks }
    }

    /// Checks (hooks included) and executes in one go, no approval, no scheduling.
    pub async fn run(&self, call: &ToolCall, ctx: ToolContext) -> CallOutcome {
        match self.check_with_hooks(call, &ctx.session_id).await.0 {
            Ok(checked) => self.execute(checked, ctx).await,
            Err(outcome) => *outcome,
        }
    }
}

/// A refused call: its result names every reason the verdict holds.
fn denied(call: &ToolCall, verdict: Verdict) -> CallOutcome {
    let reasons: Vec<_> = verdict.findings.iter().map(|f| f.message.as_str()).collect();
    let message = if reasons.is_empty() {
        format!("Denied: `{}` is not allowed here.", call.name)
    } else {
        format!("Denied: {}", reasons.join("; "))
    };
    not_run(call, verdict, message, ToolStatus::Denied, CallFailure::Denied)
}

fn not_run(
    call: &ToolCall,
    verdict: Verdict,
    message: String,
    status: ToolStatus,
    failure: CallFailure,
) -> CallOutcome {
    CallOutcome { failure: Some(failure), ..CallOutcome::not_run(call, verdict, message, status) }
}

impl CallOutcome {
    /// The outcome of a call that never ran: an error result carrying `message`.
    pub fn not_run(call: &ToolCall, verdict: Verdict, message: impl Into<String>, status: ToolStatus) -> Self {
        Self {
            verdict,
            executed: false,
            result: ToolResult::error(&call.id, message),
            status,
            failure: None,
            duration: Duration::ZERO,
            changes: Vec::new(),
            hooks: Vec::new(),
        }
    }
}
