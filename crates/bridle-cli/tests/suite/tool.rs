//! `bridle tool` and `bridle guard`: the JSON shape and exit codes of DESIGN section 12.

use std::collections::BTreeSet;

use pretty_assertions::assert_eq;
use serde_json::Value;

use super::bridle::*;

fn one_object(out: &std::process::Output) -> Value {
    let lines = json_lines(out);
    assert_eq!(lines.len(), 1, "exactly one JSON object: {}", stdout(out));
    lines.into_iter().next().unwrap()
}

fn keys(v: &Value) -> BTreeSet<&str> {
    v.as_object().unwrap().keys().map(String::as_str).collect()
}

#[tokio::test]
async fn tool_get_current_time_prints_the_contract_shape_and_exits_0() {
    let dirs = Dirs::new();
    let out =
        bridle(&dirs, &["tool", "get_current_time", "--args", r#"{"timezone":"Asia/Tokyo"}"#, "--mode", "auto"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = one_object(&out);
    assert_eq!(keys(&report), BTreeSet::from(["decision", "source", "findings", "executed", "result"]));
    assert_eq!((report["decision"].as_str(), report["source"].as_str()), (Some("allow"), Some("mode")));
    assert_eq!(report["findings"], serde_json::json!([]));
    assert_eq!(report["executed"], true);
    let result = &report["result"];
    assert_eq!(keys(result), BTreeSet::from(["toolCallId", "output", "isError", "details", "data", "diff"]));
    assert_eq!(result["isError"], false);
    assert_eq!(result["diff"], Value::Null, "nulls are serialised, never omitted");
    assert!(result["output"].as_str().unwrap().ends_with("+09:00 (Asia/Tokyo)"));
    assert_eq!(result["details"]["timezone"], "Asia/Tokyo");
}

#[tokio::test]
async fn global_options_work_after_and_before_the_subcommand() {
    let dirs = Dirs::new();
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_bridle"))
        .arg("--data-dir")
        .arg(&dirs.data)
        .args(["--workspace"])
        .arg(&dirs.workspace)
        .args(["tool", "get_token_usage"])
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(one_object(&out)["result"]["output"].as_str().unwrap().starts_with("Session totals: 0 input"));
}

#[tokio::test]
async fn arguments_that_are_not_json_even_after_repair_exit_2_with_a_message() {
    let dirs = Dirs::new();
    for bad in [r#"{"timezone": "UTC""#, "timezone=UTC", "{}[]"] {
        let out = bridle(&dirs, &["tool", "get_current_time", "--args", bad]).await;
        assert_eq!(out.status.code(), Some(2), "{bad}");
        assert_eq!(stdout(&out), "", "{bad}");
        assert!(stderr(&out).contains("not valid JSON"), "{bad}: {}", stderr(&out));
        let out = bridle(&dirs, &["guard", "get_current_time", "--args", bad]).await;
        assert_eq!(out.status.code(), Some(2), "guard {bad}");
    }
}

#[tokio::test]
async fn glued_objects_and_stringly_values_are_repaired_and_the_repair_is_said() {
    let dirs = Dirs::new();
    let out = bridle(&dirs, &["tool", "get_current_time", "--args", r#"{"timezone":"UTC"}{"timezone":"UTC"}"#]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let output = one_object(&out)["result"]["output"].as_str().unwrap().to_string();
    assert!(
        output.contains("(UTC)\n\n[note: your arguments were repaired: 2 JSON objects were glued together"),
        "{output}"
    );
}

#[tokio::test]
async fn unknown_tools_and_invalid_arguments_are_validation_denials_with_exit_1() {
    let dirs = Dirs::new();
    let out = bridle(&dirs, &["tool", "launch_rockets", "--args", "{}"]).await;
    assert_eq!(out.status.code(), Some(1));
    let report = one_object(&out);
    assert_eq!((report["decision"].as_str(), report["source"].as_str()), (Some("deny"), Some("validation")));
    assert_eq!(report["executed"], false);
    assert!(report["result"]["output"].as_str().unwrap().contains("unknown tool `launch_rockets`"));

    let out = bridle(&dirs, &["tool", "get_current_time", "--args", r#"{"timezone":42}"#]).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(one_object(&out)["result"]["output"].as_str().unwrap().contains("/timezone"));

    let out = bridle(&dirs, &["guard", "launch_rockets"]).await;
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(keys(&one_object(&out)), BTreeSet::from(["decision", "source", "findings"]));
}

#[tokio::test]
async fn a_tool_error_exits_1_and_deny_exits_4() {
    let dirs = Dirs::new();
    let out = bridle(&dirs, &["tool", "get_current_time", "--args", r#"{"timezone":"Mars/Base"}"#]).await;
    assert_eq!(out.status.code(), Some(1));
    let report = one_object(&out);
    assert_eq!(report["executed"], true);
    assert_eq!(report["result"]["isError"], true);

    let out = bridle(&dirs, &["tool", "get_current_time", "--deny"]).await;
    assert_eq!(out.status.code(), Some(4));
    let report = one_object(&out);
    assert_eq!((report["source"].as_str(), report["executed"].as_bool()), (Some("user"), Some(false)));

    let out = bridle(&dirs, &["tool", "get_current_time", "--approve", "--deny"]).await;
    assert_eq!(out.status.code(), Some(2));
}

#[tokio::test]
async fn guard_prints_the_decision_only() {
    let dirs = Dirs::new();
    let out = bridle(&dirs, &["guard", "get_current_time", "--args", "{}", "--mode", "read-only"]).await;
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(one_object(&out), serde_json::json!({"decision": "allow", "source": "mode", "findings": []}));
}

#[tokio::test]
async fn read_only_mode_denies_writes_and_commands_but_not_reads() {
    let dirs = Dirs::new();
    let out =
        bridle(&dirs, &["tool", "write_file", "--args", r#"{"path":"a.txt","content":"x"}"#, "--mode", "read-only"])
            .await;
    assert_eq!(out.status.code(), Some(4));
    let report = one_object(&out);
    assert_eq!((report["decision"].as_str(), report["source"].as_str()), (Some("deny"), Some("mode")));
    assert!(report["result"]["output"].as_str().unwrap().starts_with("Denied:"));
    assert!(!dirs.workspace.join("a.txt").exists());
    let out = bridle(&dirs, &["guard", "bash", "--args", r#"{"command":"ls"}"#, "--mode", "read-only"]).await;
    assert_eq!(out.status.code(), Some(4));
    let out = bridle(&dirs, &["tool", "list_files", "--mode", "read-only"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// A 324-byte line that doubles a variable 40 times once held 24 GB before the OOM killer
/// ended it: the guard now stops following it at a fixed multiple of its length and asks (3),
/// even in `auto`, where a plain command is allowed.
#[tokio::test]
async fn guard_asks_at_once_for_a_line_that_doubles_a_value_forty_times() {
    let dirs = Dirs::new();
    let line = format!("a=x;{}", " a=$a$a;".repeat(40));
    let args = serde_json::json!({ "command": line }).to_string();
    let argv = ["guard", "bash", "--args", &args, "--mode", "auto"];
    // A hang detector, not a timing check: the run takes well under a second.
    let out = tokio::time::timeout(std::time::Duration::from_secs(60), bridle(&dirs, &argv)).await.expect("it ended");
    assert_eq!(out.status.code(), Some(3), "{}{}", stdout(&out), stderr(&out));
    let report = one_object(&out);
    assert_eq!(report["decision"], "ask");
    let rules: Vec<&str> = report["findings"].as_array().unwrap().iter().filter_map(|f| f["rule"].as_str()).collect();
    assert!(rules.contains(&"too-large"), "{report}");

    let plain = bridle(&dirs, &["guard", "bash", "--args", r#"{"command":"a=x; a=$a$a; echo $a"}"#, "--mode", "auto"]);
    assert_eq!(plain.await.status.code(), Some(0), "a value doubled once is followed and allowed");
}
