//! The sandbox's second line: a symlink swapped in after the check cannot lead the I/O outside,
//! and the one exception to the boundary (the session's saved outputs) works end to end.

use std::os::unix::fs::symlink;

use bridle_core::calls::{Calls, Unrecorded};
use bridle_core::tools::ToolContext;
use bridle_protocol::{Decision, ToolCall};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::harness::{bypass_calls, tool_call, tool_context};

struct Setup {
    _tmp: tempfile::TempDir,
    ws: std::path::PathBuf,
    outside: std::path::PathBuf,
    calls: Calls,
}

fn setup() -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let top = tmp.path().canonicalize().unwrap();
    let ws = top.join("ws");
    let outside = top.join("outside");
    std::fs::create_dir_all(ws.join("swap")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(ws.join("swap/file.txt"), "inside\n").unwrap();
    std::fs::write(outside.join("file.txt"), "outside secret\n").unwrap();
    let calls = bypass_calls(&ws, &top.join("data"));
    Setup { _tmp: tmp, ws, outside, calls }
}

fn ctx(s: &Setup, call: &ToolCall) -> ToolContext {
    tool_context(&s.calls, call, &s.ws.parent().unwrap().join("data"))
}

#[tokio::test]
async fn a_symlink_swapped_in_after_the_check_cannot_lead_outside() {
    let attempts = [
        tool_call("read_file", json!({"path": "swap/file.txt"})),
        tool_call("write_file", json!({"path": "swap/file.txt", "content": "pwned\n"})),
        tool_call("write_file", json!({"path": "swap/new.txt", "content": "pwned\n"})),
        tool_call("append_file", json!({"path": "swap/file.txt", "content": "pwned\n"})),
        tool_call("edit_file", json!({"path": "swap/file.txt", "old_text": "outside secret", "new_text": "pwned"})),
        tool_call(
            "apply_patch",
            json!({"patch": "--- a/swap/file.txt\n+++ b/swap/file.txt\n@@ -1 +1 @@\n-outside secret\n+pwned\n"}),
        ),
    ];
    for attempt in attempts {
        let s = setup();
        // The check sees a real folder inside the workspace...
        let checked =
            s.calls.judge(&attempt, "session-1").unwrap_or_else(|o| panic!("{}: {:?}", attempt.name, o.result));
        assert_eq!(checked.verdict.decision, Decision::Allow);
        // ...which is swapped for a symlink to the outside before the tool runs.
        std::fs::rename(s.ws.join("swap"), s.ws.join("swap-moved")).unwrap();
        symlink(&s.outside, s.ws.join("swap")).unwrap();
        let mut context = ctx(&s, &attempt);
        let stream = s.calls.stream(&attempt, &mut context, std::sync::Arc::new(Unrecorded), None);
        let outcome = s.calls.run(&stream, checked, context).await;
        assert!(outcome.result.is_error, "{}: {}", attempt.name, outcome.result.output);
        assert!(outcome.result.output.contains("outside"), "{}: {}", attempt.name, outcome.result.output);
        assert!(
            !outcome.result.output.contains("outside secret"),
            "{}: leaked {}",
            attempt.name,
            outcome.result.output
        );
        assert_eq!(
            std::fs::read_to_string(s.outside.join("file.txt")).unwrap(),
            "outside secret\n",
            "{}",
            attempt.name
        );
        let names: Vec<_> = std::fs::read_dir(&s.outside).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, ["file.txt"], "{}: something was created outside", attempt.name);
    }
}

#[tokio::test]
async fn a_saved_output_can_be_paged_with_read_file_and_is_read_only() {
    let s = setup();
    let big = tool_call("bash", json!({"command": "seq 1 200000"}));
    let outcome = s.calls.check_and_run(&big, ctx(&s, &big)).await;
    let saved = serde_json::to_value(&outcome.result.details).unwrap()["outputFile"].as_str().unwrap().to_string();
    assert!(outcome.result.output.contains(&saved));

    let page = tool_call("read_file", json!({"path": saved, "start_line": 150000, "end_line": 150002}));
    let read = s.calls.check_and_run(&page, ctx(&s, &page)).await;
    assert_eq!(read.result.output, "150000\n150001\n150002\n", "{:?}", read.result);

    let overwrite = tool_call("write_file", json!({"path": saved, "content": "x"}));
    let denied = s.calls.check_and_run(&overwrite, ctx(&s, &overwrite)).await;
    assert_eq!(denied.verdict.decision, Decision::Deny);
    assert_eq!(denied.verdict.findings[0].rule, "tool-output-read-only");
}
