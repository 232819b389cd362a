//! FIFOs, sockets and devices in the workspace, given to every file tool through the call path:
//! each call ends with a clear error naming the path and what it is, none of them blocks, and a
//! search over the folder holding them still searches the regular files.
//!
//! Regression: `read_file` or `write_file` of a FIFO a shell command made hung the turn forever,
//! past the tool timeout.

use std::os::unix::fs::{symlink, FileTypeExt};
use std::path::PathBuf;
use std::time::Duration;

use bridle_core::calls::{CallOutcome, Calls};
use bridle_protocol::Decision;
use serde_json::{json, Value};

use super::harness::{bypass_calls, tool_call, tool_context};

struct Setup {
    _tmp: tempfile::TempDir,
    ws: PathBuf,
    calls: Calls,
    _listener: std::os::unix::net::UnixListener,
    /// The special files made, with what the refusal must call them.
    special: Vec<(&'static str, &'static str)>,
}

fn setup() -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let top = tmp.path().canonicalize().unwrap();
    let ws = top.join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("notes.txt"), "a needle in a haystack\n").unwrap();
    rustix::fs::mkfifoat(rustix::fs::CWD, ws.join("fifo"), rustix::fs::Mode::from_raw_mode(0o644)).unwrap();
    let listener = std::os::unix::net::UnixListener::bind(ws.join("sock")).unwrap();
    symlink("/dev/zero", ws.join("zero-link")).unwrap();
    let mut special = vec![("fifo", "a FIFO (named pipe)"), ("sock", "a socket")];
    // A node like /dev/zero (1, 5) inside the workspace: mknod needs root (CAP_MKNOD).
    let device = rustix::fs::mknodat(
        rustix::fs::CWD,
        ws.join("zero"),
        rustix::fs::FileType::CharacterDevice,
        rustix::fs::Mode::from_raw_mode(0o666),
        rustix::fs::makedev(1, 5),
    );
    match device {
        Ok(()) => special.push(("zero", "a device")),
        Err(e) => eprintln!("skipping the device node: mknod needs root ({e})"),
    }
    let calls = bypass_calls(&ws, &top.join("data"));
    Setup { _tmp: tmp, ws, calls, _listener: listener, special }
}

/// Runs `name(args)` through the whole call path on its own task; a call still running after 10 s
/// fails the test (the hang detector: the call's own timeout is 60 s here).
async fn run(s: &Setup, name: &str, args: Value) -> CallOutcome {
    let call = tool_call(name, args.clone());
    let ctx = tool_context(&s.calls, &call, &s.ws.parent().unwrap().join("data"));
    let calls = s.calls.clone();
    let task = tokio::spawn(async move { calls.check_and_run(&call, ctx).await });
    tokio::time::timeout(Duration::from_secs(10), task)
        .await
        .unwrap_or_else(|_| panic!("{name} {args} blocked for 10 s"))
        .unwrap()
}

// Several worker threads: a call that blocked one would not stop the hang detector's timer.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_file_tool_refuses_fifos_sockets_and_devices_by_name_without_blocking() {
    let s = setup();
    for &(path, kind) in &s.special {
        let attempts = [
            ("read_file", json!({"path": path})),
            ("write_file", json!({"path": path, "content": "x\n"})),
            ("edit_file", json!({"path": path, "old_text": "a", "new_text": "b"})),
            ("append_file", json!({"path": path, "content": "x\n"})),
            ("apply_patch", json!({"patch": format!("--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-a\n+b\n")})),
            ("grep_search", json!({"pattern": "needle", "path": path})),
        ];
        for (tool, args) in attempts {
            let outcome = run(&s, tool, args).await;
            let output = &outcome.result.output;
            assert!(outcome.result.is_error, "{tool} {path}: {output}");
            assert!(output.contains(&format!("`{path}` is {kind}")), "{tool} {path}: {output}");
        }
    }
    let fifo = std::fs::symlink_metadata(s.ws.join("fifo")).unwrap();
    assert!(fifo.file_type().is_fifo(), "the FIFO is left as it was, not replaced by a write");
    if s.special.iter().any(|(p, _)| *p == "zero") {
        assert!(std::fs::symlink_metadata(s.ws.join("zero")).unwrap().file_type().is_char_device());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_device_reached_through_a_symlink_is_outside_the_workspace() {
    let s = setup();
    for (tool, args) in [
        ("read_file", json!({"path": "zero-link"})),
        ("write_file", json!({"path": "zero-link", "content": "x"})),
        ("grep_search", json!({"pattern": "x", "path": "zero-link"})),
    ] {
        let outcome = run(&s, tool, args).await;
        assert_eq!(outcome.verdict.decision, Decision::Deny, "{tool}");
        assert_eq!(outcome.verdict.findings[0].rule, "outside-workspace", "{tool}");
        assert!(outcome.result.output.contains("resolves to /dev/zero"), "{tool}: {}", outcome.result.output);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_search_over_a_folder_holding_them_still_searches_the_regular_files() {
    let s = setup();
    let outcome = run(&s, "grep_search", json!({"pattern": "needle|x"})).await;
    assert!(!outcome.result.is_error, "{}", outcome.result.output);
    assert_eq!(outcome.result.output, "notes.txt:1:a needle in a haystack");
    let data = serde_json::to_value(outcome.result.details.unwrap()).unwrap();
    assert_eq!((data["filesMatched"].as_u64(), data["unreadable"].as_u64()), (Some(1), Some(0)), "{data}");

    let listed = run(&s, "list_files", json!({})).await;
    assert!(!listed.result.is_error, "{}", listed.result.output);
    assert!(listed.result.output.contains("fifo"), "listed, not read: {}", listed.result.output);
    let globbed = run(&s, "glob_search", json!({"pattern": "*"})).await;
    assert!(!globbed.result.is_error, "{}", globbed.result.output);
}
