//! `bridle tool` and `bridle guard`: one call through the call path, as JSON.

use std::sync::Arc;

use async_trait::async_trait;
use bridle_core::audit::{AuditRecord, AuditSink};
use bridle_core::calls::{audit_rows, CallEvent, CallFailure, CallOutcome, Calls, Checked, Recorder};
use bridle_core::clock::{Clock, SystemClock};
use bridle_core::tools::{builtin_registry, ToolContext, ToolRegistry};
use bridle_protocol::{Decision, DecisionSource, Finding, ToolCall, ToolResult};
use serde::Serialize;

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

/// The engine's own calls for these settings, with `--mode` over the config's, over
/// `registry` (the built-ins, with an MCP server's tools when one is called).
fn calls(setup: &Wiring, mode: Option<bridle_protocol::Mode>, registry: ToolRegistry) -> anyhow::Result<Calls> {
    if let Some(mode) = mode {
        setup.config.check_mode(mode).map_err(anyhow::Error::msg)?;
    }
    let mut config = setup.engine_config();
    config.mode = mode.unwrap_or(config.mode);
    Ok(config.calls_outside_a_session(Arc::new(registry))?)
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
    let calls = calls(&setup, args.mode, registry)?;
    let audit = setup.audit()?;
    let code = tool_call(&setup, &calls, &audit, args).await;
    if let Err(e) = audit.flush() {
        eprintln!("bridle tool: the audit log could not be written: {e}");
    }
    if let Some(hub) = hub {
        hub.shutdown().await;
    }
    code
}

/// A `bridle tool` call's events: audit rows with no session, under the call's own id.
struct CliRecorder {
    sink: AuditSink,
}

#[async_trait]
impl Recorder for CliRecorder {
    async fn record(&self, call: &ToolCall, event: CallEvent<'_>) {
        self.record_now(call, event);
    }

    fn record_now(&self, call: &ToolCall, event: CallEvent<'_>) {
        for row in audit_rows(call, &event, |kind| AuditRecord::new(kind, SystemClock.now_ms())) {
            self.sink.record(row);
        }
        if let CallEvent::Trouble(problem) = event {
            eprintln!("bridle tool: {}", problem.message);
        }
    }
}

async fn tool_call(setup: &Wiring, calls: &Calls, audit: &AuditSink, args: &ToolArgs) -> anyhow::Result<u8> {
    let raw = match read_args(&args.args) {
        Ok(raw) => raw,
        Err(e) => {
            eprintln!("bridle tool: cannot read the arguments from stdin: {e}");
            return Ok(EXIT_USAGE);
        }
    };
    let call = call(&args.name, &raw);
    let mut ctx = ToolContext::new(
        format!("cli-{}", call.id),
        call.id.clone(),
        calls.workspace().clone(),
        setup.data_dir.clone(),
        Arc::new(SystemClock),
        setup.config.limits.tool_timeout(),
    );
    // Nobody can be asked here: what the call would ask while running is refused, saying so.
    let stream = calls.stream(&call, &mut ctx, Arc::new(CliRecorder { sink: audit.clone() }), None);
    let checked = match calls.check(&stream, &ctx, None).await {
        Checked::Ready(checked) => *checked,
        Checked::Done(outcome) => {
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
    let verdict = checked.verdict.clone();
    if args.deny {
        stream.record(CallEvent::AnsweredHere { approved: false, flag: "--deny" }).await;
    } else if verdict.decision == Decision::Ask && args.approve {
        stream.record(CallEvent::AnsweredHere { approved: true, flag: "--approve" }).await;
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
    let outcome = calls.run(&stream, checked, ctx).await;
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
    let calls = calls(&setup, args.mode, builtin_registry()?)?;
    let Ok(raw) = read_args(&args.args) else {
        eprintln!("bridle guard: cannot read the arguments from stdin");
        return Ok(EXIT_USAGE);
    };
    let call = call(&args.name, &raw);
    let verdict = match calls.judge(&call, &format!("cli-{}", call.id)) {
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
