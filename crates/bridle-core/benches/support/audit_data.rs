//! Realistic audit rows for the audit benchmark and the `audit_scale` example: sessions of 500
//! rows, each tool step a user message, a model request, a tool call, a guard decision (3%
//! deny, 7% ask), a tool start, a tool outcome carrying ~2 KB of output, and a file change.

use bridle_core::audit::{AuditKind, AuditRecord};
use bridle_protocol::{Decision, DecisionSource};
use serde_json::json;

/// Rows per session.
pub const SESSION_ROWS: u64 = 500;
/// Tools, the first ones more common (picked by a skewed index).
pub const TOOLS: [&str; 8] =
    ["bash", "read_file", "edit_file", "grep_search", "write_file", "list_files", "glob_search", "get_current_time"];

const START: i64 = 1_700_000_000_000;

/// ~2 KB of build output, different per step.
pub fn output(step: u64) -> String {
    let mut out = String::with_capacity(2100);
    let mut line = 0;
    while out.len() < 2000 {
        out.push_str(&format!(
            "   Compiling crate-{step}-{line} v0.{line}.{} (/home/dev/project/crates/crate-{line})\n",
            step % 10
        ));
        line += 1;
    }
    out
}

/// The session id of row `i`.
pub fn session(i: u64) -> String {
    format!("sess-{:06}", i / SESSION_ROWS)
}

/// Row `i` (0-based) of the synthetic log.
pub fn row(i: u64) -> AuditRecord {
    let step = i / 8;
    let tool = TOOLS[((step * 2_654_435_761) % 256).trailing_zeros().min(7) as usize];
    let call = format!("call-{step}");
    let base = AuditRecord::new(AuditKind::UserMessage, START + i as i64 * 50)
        .session(session(i))
        .turn(format!("turn-{}", step / 4));
    match i % 8 {
        0 => base.payload(json!({"text": format!("please run the tests for crate {step} and fix what fails")})),
        1 => AuditRecord { kind: AuditKind::ModelRequest, ..base }
            .latency_ms(800 + (step % 700) as i64)
            .payload(json!({"model": "gpt-4.1", "messages": 12 + step % 40, "usage": {"inputTokens": 5000 + step % 9000, "outputTokens": 120}})),
        2 => AuditRecord { kind: AuditKind::ToolCall, ..base }
            .call(call)
            .tool(tool)
            .payload(json!({"arguments": {"command": format!("cargo test -p crate-{step} -- --nocapture 2>&1 | tail -n 80"), "timeout_ms": 120000}})),
        3 => {
            let (decision, source) = match step % 100 {
                0..=2 => (Decision::Deny, DecisionSource::Guard),
                3..=9 => (Decision::Ask, DecisionSource::Mode),
                _ => (Decision::Allow, DecisionSource::Mode),
            };
            AuditRecord { kind: AuditKind::GuardDecision, ..base }
                .call(call)
                .tool(tool)
                .decision(decision, source)
                .payload(json!({"findings": [{"guardian": "shell", "rule": "pipe_to_shell", "severity": "low", "message": "reviewed"}]}))
        }
        4 => AuditRecord { kind: AuditKind::ToolStarted, ..base }.call(call).tool(tool),
        5 if step.is_multiple_of(10) => AuditRecord { kind: AuditKind::ToolFailed, ..base }
            .call(call)
            .tool(tool)
            .status("error")
            .latency_ms(4000)
            .payload(json!({"output": output(step), "exitCode": 101})),
        5 => AuditRecord { kind: AuditKind::ToolCompleted, ..base }
            .call(call)
            .tool(tool)
            .status("ok")
            .latency_ms(2500)
            .payload(json!({"output": output(step), "exitCode": 0})),
        6 => AuditRecord { kind: AuditKind::FileChanged, ..base }.call(call).tool("edit_file").payload(json!({
            "path": format!("crates/crate-{step}/src/lib.rs"),
            "diff": format!("@@ -10,3 +10,3 @@\n-    let x = {step};\n+    let x = {};\n", step + 1),
        })),
        _ => AuditRecord { kind: AuditKind::ModelRequest, ..base }
            .latency_ms(600)
            .payload(json!({"model": "gpt-4.1", "messages": 14 + step % 40})),
    }
}
