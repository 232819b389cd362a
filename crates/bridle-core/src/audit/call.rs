//! The audit rows of one tool call, shaped in one place for every caller — the engine's turns
//! and `bridle tool` — so a call leaves the same record wherever it came from.
//!
//! Each method fills a record its caller has opened (kind, time, session, turn): the caller
//! knows where the call runs, this knows what a call's rows say.

use bridle_protocol::ToolCall;
use serde_json::{json, Value};

use super::{AuditKind, AuditRecord};
use crate::guard::Verdict;
use crate::pipeline::CallOutcome;

/// The rows of `call`.
pub struct CallRows<'a> {
    call: &'a ToolCall,
}

impl<'a> CallRows<'a> {
    /// Rows about `call`.
    pub fn new(call: &'a ToolCall) -> Self {
        Self { call }
    }

    /// The call's id and tool name, and nothing else (e.g. `tool_started`).
    pub fn named(&self, record: AuditRecord) -> AuditRecord {
        record.call(self.call.id.clone()).tool(self.call.name.clone())
    }

    /// `tool_call`: the arguments as the model sent them, parsed where they parse so
    /// secret-looking keys are redacted by name.
    pub fn proposed(&self, record: AuditRecord) -> AuditRecord {
        let arguments = serde_json::from_str::<Value>(&self.call.arguments)
            .unwrap_or_else(|_| Value::String(self.call.arguments.clone()));
        self.named(record).payload(json!({ "arguments": arguments }))
    }

    /// `guard_decision`: the verdict and the findings behind it.
    pub fn judged(&self, record: AuditRecord, verdict: &Verdict) -> AuditRecord {
        self.named(record).decision(verdict.decision, verdict.source).payload(json!({ "findings": verdict.findings }))
    }

    /// A hook's verdict on the call (source `hook`): its decision — allow when it had no
    /// opinion, ask when it failed — its status (`continue`, `decided`, `failed`) and what it
    /// ran and said.
    pub fn hooked(&self, record: AuditRecord, run: &crate::hooks::HookRun) -> AuditRecord {
        use crate::hooks::HookOutcome;
        let status = match run.outcome {
            HookOutcome::Continue => "continue",
            HookOutcome::Decided { .. } => "decided",
            HookOutcome::Failed(_) => "failed",
        };
        let decision = run.decision().unwrap_or(bridle_protocol::Decision::Allow);
        self.named(record)
            .decision(decision, bridle_protocol::DecisionSource::Hook)
            .status(status)
            .latency_ms(run.duration.as_millis() as i64)
            .payload(json!({
                "hook": run.event,
                "command": run.command,
                "exitCode": run.exit_code,
                "reason": run.reason(),
            }))
    }

    /// The kind of the row that ends a call: `tool_completed` when it ran and succeeded,
    /// `tool_failed` for every other end.
    pub fn end_kind(outcome: &CallOutcome) -> AuditKind {
        if outcome.executed && !outcome.result.is_error {
            AuditKind::ToolCompleted
        } else {
            AuditKind::ToolFailed
        }
    }

    /// The row of [`Self::end_kind`]: status, duration and what the model was told.
    pub fn ended(&self, record: AuditRecord, outcome: &CallOutcome) -> AuditRecord {
        let status = serde_json::to_value(outcome.status).ok().and_then(|v| v.as_str().map(String::from));
        let data = outcome.result.data.as_ref();
        self.named(record).status(status.unwrap_or_default()).latency_ms(outcome.duration.as_millis() as i64).payload(
            json!({
                "executed": outcome.executed,
                "isError": outcome.result.is_error,
                "output": outcome.result.output,
                // How a shell command ran (bwrap, landlock, none; escalated or not), on the record.
                "sandbox": data.and_then(|d| d.get("sandbox")),
                "escalated": data.and_then(|d| d.get("escalated")),
            }),
        )
    }

    /// `file_changed`: one file the call changed, with its diff.
    pub fn changed(&self, record: AuditRecord, change: &crate::changes::FileChange) -> AuditRecord {
        self.named(record).payload(json!({
            "path": change.path,
            "kind": change.kind,
            "added": change.added,
            "removed": change.removed,
            "diff": change.diff,
        }))
    }
}
