//! Record: what happens to a call, as a typed stream of [`CallEvent`]s, and the audit rows each
//! one leaves.
//!
//! Rule: the call's owner says what happened, once, in order; a front end decides where it
//! goes ([`Recorder`]: the engine turns events into window events, store rows and audit rows,
//! `bridle tool` into audit rows and its JSON report). The rows a call leaves are shaped here
//! ([`audit_rows`]) for every recorder, so a call leaves the same record wherever it came from.

use async_trait::async_trait;
use bridle_protocol::{ApprovalRequest, Decision, DecisionSource, ErrorCode, ToolCall, ToolDetails};
use serde_json::{json, Value};

use super::outcome::CallOutcome;
use crate::audit::{AuditKind, AuditRecord};
use crate::guard::Verdict;
use crate::hooks::{HookOutcome, HookRun};
use crate::store::{ApprovalStatus, StoredApproval};

/// Something Bridle could not do for a call (store or config writes), for the user to see;
/// the call goes on or is refused as its step decides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// A stable code.
    pub code: ErrorCode,
    /// What failed, in words.
    pub message: String,
    /// Whether trying again may work.
    pub retryable: bool,
}

impl Problem {
    /// A failure that may pass on a second try.
    pub fn retryable(code: ErrorCode, message: String) -> Self {
        Self { code, message, retryable: true }
    }

    /// A failure that will not.
    pub fn fatal(code: ErrorCode, message: String) -> Self {
        Self { code, message, retryable: false }
    }
}

/// One step of a call's life, in the order they happen.
#[derive(Debug, Clone, Copy)]
pub enum CallEvent<'a> {
    /// The model's call, as sent.
    Proposed,
    /// A user hook's say on the call, before or after it ran.
    Hooked(&'a HookRun),
    /// The folded verdict of the checks.
    Judged(&'a Verdict),
    /// A request for a person's answer was stored, under a verdict from `source`.
    ApprovalRequested(&'a ApprovalRequest, DecisionSource),
    /// A request stored by an earlier process is waiting again (shown, not recorded twice).
    ApprovalShown(&'a ApprovalRequest),
    /// A request was answered, expired or withdrawn.
    ApprovalResolved(&'a StoredApproval),
    /// A person answered on the command line (`bridle tool --approve` / `--deny`).
    AnsweredHere {
        /// Whether they approved.
        approved: bool,
        /// The flag they used.
        flag: &'static str,
    },
    /// The tool starts (after any approval and any wait for a slot).
    Started,
    /// The call ended: ran, refused or stopped.
    Ended(&'a CallOutcome),
    /// Something Bridle could not do on the way.
    Trouble(&'a Problem),
    /// A connection the call's command made through the proxy (or was refused) ended.
    Connection(&'a crate::network::Connection),
}

/// Where a front end sends a call's events.
#[async_trait]
pub trait Recorder: Send + Sync {
    /// Records one event of `call`.
    async fn record(&self, call: &ToolCall, event: CallEvent<'_>);
    /// The same, from code that cannot wait (a connection's end, a question dropped unanswered):
    /// the rows are written at once, and what would wait for room is sent only if there is.
    fn record_now(&self, call: &ToolCall, event: CallEvent<'_>);
}

/// Records nothing (benchmarks, tests of the call path alone).
pub struct Unrecorded;

#[async_trait]
impl Recorder for Unrecorded {
    async fn record(&self, _call: &ToolCall, _event: CallEvent<'_>) {}
    fn record_now(&self, _call: &ToolCall, _event: CallEvent<'_>) {}
}

/// The audit rows `event` of `call` leaves, each opened by `open` (which fills in the time,
/// the session and the turn).
pub fn audit_rows(call: &ToolCall, event: &CallEvent<'_>, open: impl Fn(AuditKind) -> AuditRecord) -> Vec<AuditRecord> {
    let named = |kind| open(kind).call(call.id.clone()).tool(call.name.clone());
    match *event {
        CallEvent::Proposed => {
            // Parsed where they parse, so secret-looking keys are redacted by name.
            let arguments = serde_json::from_str::<Value>(&call.arguments)
                .unwrap_or_else(|_| Value::String(call.arguments.clone()));
            vec![named(AuditKind::ToolCall).payload(json!({ "arguments": arguments }))]
        }
        CallEvent::Hooked(run) => vec![hooked(named(AuditKind::GuardDecision), run)],
        CallEvent::Judged(verdict) => vec![named(AuditKind::GuardDecision)
            .decision(verdict.decision, verdict.source)
            .payload(json!({ "findings": verdict.findings }))],
        CallEvent::ApprovalRequested(request, source) => {
            vec![named(AuditKind::ApprovalRequested).decision(Decision::Ask, source).payload(json!({
                "approvalId": request.id,
                "subject": request.subject,
                "findings": request.findings,
                "preview": request.preview,
                "callHash": request.call_hash,
                "expiresAt": request.expires_at,
            }))]
        }
        CallEvent::ApprovalShown(_) | CallEvent::Trouble(_) => Vec::new(),
        CallEvent::ApprovalResolved(stored) => {
            let Some(answer) = &stored.answer else { return Vec::new() };
            let decision = if stored.status == ApprovalStatus::Approved { Decision::Allow } else { Decision::Deny };
            vec![named(AuditKind::ApprovalResolved)
                .decision(decision, answer.source)
                .status(super::queue::status_word(stored.status))
                .payload(json!({
                    "approvalId": stored.request.id,
                    "answer": answer.decision,
                    "feedback": answer.feedback,
                    "editedArguments": answer.edited_arguments,
                }))]
        }
        CallEvent::AnsweredHere { approved, flag } => {
            let decision = if approved { Decision::Allow } else { Decision::Deny };
            vec![named(AuditKind::ApprovalResolved)
                .decision(decision, DecisionSource::User)
                .payload(json!({"answer": flag}))]
        }
        CallEvent::Started => vec![named(AuditKind::ToolStarted)],
        CallEvent::Connection(connection) => vec![connection_row(connection, named(AuditKind::Network))],
        CallEvent::Ended(outcome) => {
            let mut rows = vec![ended(named(end_kind(outcome)), outcome)];
            rows.extend(outcome.hooks.iter().map(|run| hooked(named(AuditKind::GuardDecision), run)));
            rows.extend(outcome.changes.iter().map(|change| {
                named(AuditKind::FileChanged).payload(json!({
                    "path": change.path,
                    "kind": change.kind,
                    "added": change.added,
                    "removed": change.removed,
                    "diff": change.diff,
                }))
            }));
            rows
        }
    }
}

/// A hook's verdict on the call (source `hook`): its decision — allow when it had no opinion,
/// ask when it failed — its status (`continue`, `decided`, `failed`) and what it ran and said.
fn hooked(record: AuditRecord, run: &HookRun) -> AuditRecord {
    let status = match run.outcome {
        HookOutcome::Continue => "continue",
        HookOutcome::Decided { .. } => "decided",
        HookOutcome::Failed(_) => "failed",
    };
    let decision = run.decision().unwrap_or(Decision::Allow);
    record.decision(decision, DecisionSource::Hook).status(status).latency_ms(run.duration.as_millis() as i64).payload(
        json!({
            "hook": run.event,
            "command": run.command,
            "exitCode": run.exit_code,
            "reason": run.reason(),
        }),
    )
}

/// The kind of the row that ends a call: `tool_completed` when it ran and succeeded,
/// `tool_failed` for every other end.
fn end_kind(outcome: &CallOutcome) -> AuditKind {
    if outcome.executed && !outcome.result.is_error {
        AuditKind::ToolCompleted
    } else {
        AuditKind::ToolFailed
    }
}

/// The row of [`end_kind`]: status, duration and what the model was told.
fn ended(record: AuditRecord, outcome: &CallOutcome) -> AuditRecord {
    let status = serde_json::to_value(outcome.status).ok().and_then(|v| v.as_str().map(String::from));
    // How a shell command ran (bwrap, landlock, none; escalated or not), on the record.
    let (sandbox, escalated) = match &outcome.result.details {
        Some(ToolDetails::Shell(shell)) => (Some(shell.sandbox), Some(shell.escalated)),
        Some(ToolDetails::Background(started)) => (Some(started.sandbox), Some(started.escalated)),
        _ => (None, None),
    };
    record.status(status.unwrap_or_default()).latency_ms(outcome.duration.as_millis() as i64).payload(json!({
        "executed": outcome.executed,
        "isError": outcome.result.is_error,
        "output": outcome.result.output,
        "sandbox": sandbox,
        "escalated": escalated,
    }))
}

/// The `network` audit row of one connection a command made (or was refused), filled into `row`
/// (which names the call).
fn connection_row(c: &crate::network::Connection, row: AuditRecord) -> AuditRecord {
    use crate::network::Source;
    let decision = if c.allowed { Decision::Allow } else { Decision::Deny };
    let source = match &c.source {
        Source::Deny(_) | Source::Allow(_) | Source::HostPort => DecisionSource::Rule,
        Source::Session | Source::User => DecisionSource::User,
        Source::Mode(_) => DecisionSource::Mode,
        Source::Timeout => DecisionSource::Timeout,
        Source::Address | Source::Limit => DecisionSource::Sandbox,
    };
    let status = match (c.allowed, c.reached) {
        (true, true) => "reached",
        (true, false) => "unreachable",
        (false, _) => "refused",
    };
    row.decision(decision, source).status(status).latency_ms(c.duration_ms as i64).payload(json!({
        "host": c.host,
        "port": c.port,
        "protocol": c.protocol.as_str(),
        "source": c.source.describe(),
        "reason": c.reason,
        "address": c.address.map(|a| a.to_string()),
        "bytesSent": c.sent,
        "bytesReceived": c.received,
    }))
}
