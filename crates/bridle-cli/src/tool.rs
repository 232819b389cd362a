//! `bridle tool` and `bridle guard`: one call through the pipeline, as JSON.

use std::sync::Arc;

use bridle_core::audit::{AuditKind, AuditRecord, AuditSink, CallRows};
use bridle_core::clock::{Clock, SystemClock};
use bridle_core::guard::Verdict;
use bridle_core::hooks::HookRun;
use bridle_core::pipeline::{CallFailure, CallOutcome, CallPipeline};
use bridle_core::tools::{builtin_registry, ToolContext, ToolRegistry};
use bridle_protocol::{Decision, DecisionSource, Finding, ToolCall, ToolResult};
use serde::Serialize;
use serde_json::json;

use crate::cli::{Global, GuardArgs, ToolArgs, EXIT_ASK, EXIT_DENY, EXIT_ERROR, EXIT_USAGE};
use crate::setup;
use bridle_core::wiring::Wiring;

#[derive(Serialize)]
struct ToolReport<'a> {
    decision: Decision,
    source: DecisionSource,
    findings: &'a [Finding],
    executed: bool,
    result: Option<&'a ToolResult>,
}

#[derive(Serialize)]
struct GuardReport<'a> {
    decision: Decision,
    source: DecisionSource,
    findings: &'a [Finding],
}

/// The engine's own pipeline for these settings, with `--mode` over the config's, over
/// `registry` (the built-ins, with an MCP server's tools when one is called).
fn pipeline(
    setup: &Wiring,
    mode: Option<bridle_protocol::Mode>,
    registry: ToolRegistry,
) -> anyhow::Result<CallPipeline> {
    let mut config = setup.engine_config();
    config.mode = mode.unwrap_or(config.mode);
    Ok(config.pipeline(Arc::new(registry))?)
}

fn call(name: &str, args: &str) -> ToolCall {
    ToolCall { id: uuid_v4(), provider_id: String::new(), name: name.to_string(), arguments: args.to_string() }
}

fn uuid_v4() -> String {
    bridle_core::engine::new_id()
}

/// `-` means the arguments come on stdin.
fn read_args(args: &str) -> std::io::Result<String> {
    if args != "-" {
        return Ok(args.to_string());
    }
    let mut text = String::new();
    std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)?;
    Ok(text)
}

fn print_json(value: &impl Serialize) -> anyhow::Result<()> {
    println!("{}", serde_json::to_string(value)?);
    Ok(())
}

/// Arguments that are not JSON even after repair are a usage error (exit 2), not a call.
fn usage_error(outcome: &CallOutcome) -> bool {
    outcome.failure == Some(CallFailure::NotJson)
}

pub async fn tool(global: &Global, args: &ToolArgs) -> anyhow::Result<u8> {
    let setup = setup::load(global)?;
    // MCP servers start only for an MCP tool: a built-in call waits for none of them.
    let hub = if args.name.starts_with("mcp__") { Some(setup.mcp()) } else { None };
    if let Some(hub) = &hub {
        hub.settled().await;
    }
    let registry = match &hub {
        Some(hub) => hub.registry()?,
        None => builtin_registry()?,
    };
    let pipeline = pipeline(&setup, args.mode, registry)?;
    let audit = setup.audit()?;
    let code = tool_call(&setup, &pipeline, &audit, args).await;
    if let Err(e) = audit.flush() {
        eprintln!("bridle tool: the audit log could not be written: {e}");
    }
    if let Some(hub) = hub {
        hub.shutdown().await;
    }
    code
}

/// Audit rows of one `bridle tool` call: no session, the call's own id.
struct CallAudit<'a> {
    sink: &'a AuditSink,
    rows: CallRows<'a>,
}

impl CallAudit<'_> {
    fn record(&self, kind: AuditKind, fill: impl FnOnce(AuditRecord) -> AuditRecord) {
        self.sink.record(fill(AuditRecord::new(kind, SystemClock.now_ms())));
    }

    fn checked(&self, verdict: &Verdict, hooks: &[HookRun]) {
        self.record(AuditKind::ToolCall, |r| self.rows.proposed(r));
        for run in hooks {
            self.record(AuditKind::GuardDecision, |r| self.rows.hooked(r, run));
        }
        self.record(AuditKind::GuardDecision, |r| self.rows.judged(r, verdict));
    }

    fn answered(&self, approved: bool) {
        let decision = if approved { Decision::Allow } else { Decision::Deny };
        self.record(AuditKind::ApprovalResolved, |r| {
            self.rows
                .named(r)
                .decision(decision, DecisionSource::User)
                .payload(json!({"answer": if approved { "--approve" } else { "--deny" }}))
        });
    }

    fn ended(&self, outcome: &CallOutcome) {
        self.record(CallRows::end_kind(outcome), |r| self.rows.ended(r, outcome));
        for run in &outcome.hooks {
            self.record(AuditKind::GuardDecision, |r| self.rows.hooked(r, run));
        }
        for change in &outcome.changes {
            self.record(AuditKind::FileChanged, |r| self.rows.changed(r, change));
        }
    }
}

async fn tool_call(setup: &Wiring, pipeline: &CallPipeline, audit: &AuditSink, args: &ToolArgs) -> anyhow::Result<u8> {
    let raw = match read_args(&args.args) {
        Ok(raw) => raw,
        Err(e) => {
            eprintln!("bridle tool: cannot read the arguments from stdin: {e}");
            return Ok(EXIT_USAGE);
        }
    };
    let call = call(&args.name, &raw);
    let session_id = format!("cli-{}", call.id);
    let record = CallAudit { sink: audit, rows: CallRows::new(&call) };
    let (checked, hooks) = pipeline.check_with_hooks(&call, &session_id).await;
    let checked = match checked {
        Ok(checked) => {
            record.checked(&checked.verdict, &hooks);
            checked
        }
        Err(outcome) => {
            record.checked(&outcome.verdict, &hooks);
            if usage_error(&outcome) {
                eprintln!("bridle tool: {}", outcome.result.output.trim_start_matches("Error: "));
                return Ok(EXIT_USAGE);
            }
            let report = ToolReport {
                decision: outcome.verdict.decision,
                source: outcome.verdict.source,
                findings: &outcome.verdict.findings,
                executed: false,
                result: Some(&outcome.result),
            };
            print_json(&report)?;
            let code = if outcome.verdict.source == DecisionSource::Validation { EXIT_ERROR } else { EXIT_DENY };
            return Ok(code);
        }
    };
    let verdict: Verdict = checked.verdict.clone();
    if args.deny {
        record.answered(false);
    } else if verdict.decision == Decision::Ask && args.approve {
        record.answered(true);
    }
    if args.deny || (verdict.decision == Decision::Ask && !args.approve) {
        let (result, code) = if args.deny {
            (Some(ToolResult::error(&call.id, "Denied by the user.")), EXIT_DENY)
        } else {
            (None, EXIT_ASK)
        };
        let report = ToolReport {
            decision: verdict.decision,
            source: if args.deny { DecisionSource::User } else { verdict.source },
            findings: &verdict.findings,
            executed: false,
            result: result.as_ref(),
        };
        print_json(&report)?;
        return Ok(code);
    }
    let ctx = ToolContext::new(
        session_id,
        call.id.clone(),
        pipeline.workspace().clone(),
        setup.data_dir.clone(),
        Arc::new(SystemClock),
        setup.config.limits.tool_timeout(),
    );
    record.record(AuditKind::ToolStarted, |r| record.rows.named(r));
    let outcome = pipeline.execute(checked, ctx).await;
    record.ended(&outcome);
    let report = ToolReport {
        decision: verdict.decision,
        source: if verdict.decision == Decision::Ask { DecisionSource::User } else { verdict.source },
        findings: &verdict.findings,
        executed: true,
        result: Some(&outcome.result),
    };
    print_json(&report)?;
    Ok(if outcome.result.is_error { EXIT_ERROR } else { 0 })
}

pub fn guard(global: &Global, args: &GuardArgs) -> anyhow::Result<u8> {
    let setup = setup::load(global)?;
    let pipeline = pipeline(&setup, args.mode, builtin_registry()?)?;
    let Ok(raw) = read_args(&args.args) else {
        eprintln!("bridle guard: cannot read the arguments from stdin");
        return Ok(EXIT_USAGE);
    };
    let call = call(&args.name, &raw);
    let verdict = match pipeline.check(&call, &format!("cli-{}", call.id)) {
        Ok(checked) => checked.verdict,
        Err(outcome) if usage_error(&outcome) => {
            eprintln!("bridle guard: {}", outcome.result.output.trim_start_matches("Error: "));
            return Ok(EXIT_USAGE);
        }
        Err(outcome) => outcome.verdict,
    };
    print_json(&GuardReport { decision: verdict.decision, source: verdict.source, findings: &verdict.findings })?;
    Ok(match (verdict.decision, verdict.source) {
        (_, DecisionSource::Validation) => EXIT_ERROR,
        (Decision::Allow, _) => 0,
        (Decision::Ask, _) => EXIT_ASK,
        (Decision::Deny, _) => EXIT_DENY,
    })
}
