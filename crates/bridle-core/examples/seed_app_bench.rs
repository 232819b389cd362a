//! Data for the desktop app's benchmarks (`scripts/bench-app.sh`), written through the real
//! store and audit log: a session of 5,000 messages (user questions and markdown answers with
//! code), a session whose one edit is a 10,000-line diff, and 100,000 audit rows of the long
//! session. Prints `{"long": ID, "diff": ID}` as JSON.
//!
//! `cargo run --release -p bridle-core --example seed_app_bench -- DATA_DIR WORKSPACE`
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../benches/support/audit_data.rs"]
mod audit_data;

use bridle_core::audit::AuditLog;
use bridle_core::store::Store;
use bridle_protocol::{HistoryItem, ToolCall, ToolResult};

const MESSAGES: usize = 5_000;
const DIFF_LINES: usize = 10_000;
const AUDIT_ROWS: u64 = 100_000;

fn answer(i: usize) -> String {
    format!(
        "Step {i}: the **parser** now keeps `offsets` per token.\n\n- checked `src/lexer.rs`\n- ran the tests\n\n\
         ```rust\nfn offset_{i}(tokens: &[Token]) -> usize {{\n    tokens.iter().map(|t| t.len).sum()\n}}\n```\n"
    )
}

/// A unified diff that rewrites every line of a `lines`-line file.
fn big_diff(lines: usize) -> String {
    let mut diff = format!("--- a/src/generated.rs\n+++ b/src/generated.rs\n@@ -1,{} +1,{} @@\n", lines / 2, lines / 2);
    for i in 0..lines / 2 {
        diff.push_str(&format!("-pub const VALUE_{i}: u32 = {i};\n"));
        diff.push_str(&format!("+pub const VALUE_{i}: u64 = {};\n", i * 2));
    }
    diff
}

fn main() {
    let mut args = std::env::args().skip(1);
    let data = std::path::PathBuf::from(args.next().expect("DATA_DIR"));
    let workspace = std::path::PathBuf::from(args.next().expect("WORKSPACE")).canonicalize().unwrap();
    let workspace = workspace.display().to_string();
    std::fs::create_dir_all(&data).unwrap();
    let store = Store::open(&data.join("bridle.db")).unwrap();
    let now = 1_790_000_000_000_i64;

    let long = "bench-long-session".to_string();
    store.create_session(&long, &workspace, now).unwrap();
    for i in 0..MESSAGES / 2 {
        let turn = format!("turn-{i}");
        let at = now + i as i64 * 1000;
        store
            .append(&long, &turn, &HistoryItem::User { text: format!("question {i}: what does step {i} change?") }, at)
            .unwrap();
        let item = HistoryItem::Assistant { text: answer(i), tool_calls: vec![], cut_off: false };
        store.append(&long, &turn, &item, at + 1).unwrap();
    }

    let diff_session = "bench-diff-session".to_string();
    store.create_session(&diff_session, &workspace, now + 10_000_000).unwrap();
    let turn = "turn-diff";
    let call = ToolCall {
        id: "call-diff".into(),
        provider_id: "call-diff".into(),
        name: "apply_patch".into(),
        arguments: "{}".into(),
    };
    let at = now + 10_000_001;
    store.append(&diff_session, turn, &HistoryItem::User { text: "regenerate the constants".into() }, at).unwrap();
    let item = HistoryItem::Assistant { text: String::new(), tool_calls: vec![call], cut_off: false };
    store.append(&diff_session, turn, &item, at + 1).unwrap();
    let result = ToolResult {
        tool_call_id: "call-diff".into(),
        output: "Changed 1 file".into(),
        is_error: false,
        details: None,
        data: None,
        diff: Some(big_diff(DIFF_LINES)),
    };
    store.append(&diff_session, turn, &HistoryItem::ToolResult { result }, at + 2).unwrap();
    store
        .append(
            &diff_session,
            turn,
            &HistoryItem::Assistant { text: "Done.".into(), tool_calls: vec![], cut_off: false },
            at + 3,
        )
        .unwrap();

    let log = AuditLog::open(&data).unwrap();
    for from in (0..AUDIT_ROWS).step_by(10_000) {
        let batch: Vec<_> =
            (from..(from + 10_000).min(AUDIT_ROWS)).map(|i| audit_data::row(i).session(long.clone())).collect();
        log.append(&batch).unwrap();
    }
    println!("{}", serde_json::json!({ "long": long, "diff": diff_session }));
}
