//! bash with real processes: exit codes, timeouts that take grandchildren down, background
//! children, huge output, and the environment scrub. The process-group tests run unconfined
//! (as an escalated or unsandboxed command does): inside bwrap's PID namespace the same
//! guarantees come from the namespace, tested at the end.
#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use super::*;
use crate::tools::testing::context;

fn setup() -> (tempfile::TempDir, ToolContext) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("ws");
    std::fs::create_dir_all(&root).unwrap();
    let ctx = context(&root);
    (tmp, ctx)
}

/// A context whose commands run without the OS sandbox, so they can record their real pids
/// outside the workspace.
fn setup_unconfined() -> (tempfile::TempDir, ToolContext) {
    let (tmp, mut ctx) = setup();
    let root = ctx.workspace.root().to_path_buf();
    let data_dir = ctx.data_dir.clone();
    let workspace = crate::workspace::Workspace::open(&root, None, &data_dir, &[]).unwrap();
    ctx.workspace = std::sync::Arc::new(workspace);
    (tmp, ctx)
}

async fn bash(ctx: &ToolContext, command: &str, timeout_secs: Option<u64>) -> ToolOutput {
    Bash.run(
        &BashArgs { command: command.into(), timeout_secs, escalate: false, justification: None, background: false },
        ctx,
    )
    .await
    .unwrap()
}

fn alive(pid: i32) -> bool {
    // A zombie counts as gone: it runs nothing.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| !s[s.rfind(')').unwrap() + 2..].starts_with('Z'))
        .unwrap_or(false)
}

#[tokio::test]
async fn a_non_zero_exit_is_reported_with_its_output_and_is_not_an_error() {
    let (_t, ctx) = setup();
    let out = bash(&ctx, "echo to-out; echo to-err >&2; exit 3", None).await;
    assert_eq!(out.output, "exit code 3\nto-out\nto-err\n");
    assert_eq!(crate::tools::testing::details(&out)["exitCode"], 3);
}

#[tokio::test]
async fn it_runs_in_the_workspace() {
    let (_t, ctx) = setup();
    let out = bash(&ctx, "pwd", None).await;
    assert_eq!(out.output, format!("exit code 0\n{}\n", ctx.workspace.root().display()));
}

#[tokio::test]
async fn a_timeout_kills_the_children_and_grandchildren_too() {
    let (tmp, ctx) = setup_unconfined();
    let pids = tmp.path().join("pids");
    // A child and a grandchild (which also escapes into its own session), each recording its pid.
    let command = format!(
        "sleep 300 & echo $! >> {p}; setsid bash -c 'sleep 300 & echo $! >> {p}; wait' & echo $! >> {p}; echo started; wait",
        p = pids.display()
    );
    let started = Instant::now();
    let out = bash(&ctx, &command, Some(1)).await;
    assert!(started.elapsed() < Duration::from_secs(20), "{:?}", started.elapsed());
    assert!(out.output.starts_with("timed out after 1 s and was stopped; output so far\nstarted\n"), "{}", out.output);
    assert_eq!(crate::tools::testing::details(&out)["timedOut"], true);
    let recorded: Vec<i32> =
        std::fs::read_to_string(&pids).unwrap().lines().map(|l| l.trim().parse().unwrap()).collect();
    assert_eq!(recorded.len(), 3, "{recorded:?}");
    for pid in recorded {
        assert!(!alive(pid), "process {pid} outlived the timeout");
    }
}

#[tokio::test]
async fn a_command_that_backgrounds_a_child_returns_promptly_and_the_child_is_stopped() {
    let (tmp, ctx) = setup_unconfined();
    let pid_file = tmp.path().join("bg.pid");
    let started = Instant::now();
    let out = bash(&ctx, &format!("sleep 300 & echo $! > {}; echo done", pid_file.display()), Some(60)).await;
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    assert!(
        out.output.starts_with("exit code 0; 1 background process(es) it left running were stopped\ndone\n"),
        "{}",
        out.output
    );
    let pid: i32 = std::fs::read_to_string(&pid_file).unwrap().trim().parse().unwrap();
    assert!(!alive(pid));
}

#[tokio::test]
async fn huge_output_is_cut_and_the_whole_of_it_is_saved() {
    let (_t, ctx) = setup();
    let out = bash(&ctx, "seq 1 400000", None).await;
    let saved = crate::tools::testing::details(&out)["outputFile"].as_str().unwrap().to_string();
    assert!(out.output.starts_with("exit code 0\n1\n2\n3\n"));
    assert!(out.output.contains("bytes omitted"));
    assert!(out.output.contains("399999\n400000\n"));
    assert!(out.output.ends_with(&output::saved_note(std::path::Path::new(&saved))));
    let whole = std::fs::read_to_string(&saved).unwrap();
    let expected: String = (1..=400_000).map(|i| format!("{i}\n")).collect();
    assert!(whole == expected, "the saved output is not the complete output");
    // It is in the session's tool-output folder, which read_file may read.
    assert!(saved.starts_with(&ctx.workspace.sandbox.tool_output_dir(&ctx.session_id).display().to_string()));
}

#[tokio::test]
async fn secrets_are_not_in_the_environment() {
    let (_t, ctx) = setup();
    let out = bash(&ctx, "env | cut -d= -f1 | sort", None).await;
    let names: Vec<&str> = out.output.lines().skip(1).collect();
    assert!(names.contains(&"PATH"));
    assert!(names.contains(&processes::MARKER));
    for name in &names {
        let ours = [processes::MARKER, "GIT_DISCOVERY_ACROSS_FILESYSTEM", "PWD", "SHLVL", "_", "OLDPWD"];
        assert!(crate::shell_sandbox::allows_name(name, &[]) || ours.contains(name), "{name} is not on the allow-list");
    }
}

#[tokio::test]
async fn an_interrupt_drops_the_call_and_kills_the_group() {
    let (tmp, ctx) = setup_unconfined();
    let pid_file = tmp.path().join("pid");
    let command = format!("sleep 300 & echo $! > {}; wait", pid_file.display());
    let args = BashArgs { command, timeout_secs: Some(600), escalate: false, justification: None, background: false };
    let run = Bash.run(&args, &ctx);
    // Dropping the future is what an interrupt does (the pipeline stops polling it).
    let _ = tokio::time::timeout(Duration::from_millis(800), run).await;
    let pid: i32 = std::fs::read_to_string(&pid_file).unwrap().trim().parse().unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!alive(pid), "the group survived the interrupt");
}

#[tokio::test]
async fn inside_the_sandbox_nothing_a_command_leaves_behind_survives_it() {
    let (_t, ctx) = setup();
    let out = bash(&ctx, "sleep 300 & setsid sleep 301 & echo started", Some(60)).await;
    assert_eq!(crate::tools::testing::details(&out)["sandbox"], "bwrap", "{}", out.output);
    assert!(out.output.starts_with("exit code 0"), "{}", out.output);
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(processes::marked(&ctx.call_id).is_empty(), "a process of the call is still running");
}

#[tokio::test]
async fn every_result_says_how_it_ran() {
    let (_t, ctx) = setup();
    let out = bash(&ctx, "true", None).await;
    let data = crate::tools::testing::details(&out);
    assert_eq!(
        (data["sandbox"].as_str(), data["escalated"].as_bool(), data["network"].as_bool()),
        (Some("bwrap"), Some(false), Some(false))
    );
    let (_t, ctx) = setup_unconfined();
    let out = bash(&ctx, "true", None).await;
    assert_eq!(crate::tools::testing::details(&out)["sandbox"], "none");
    assert!(out.output.contains("[note: ran without an OS sandbox: no shell sandbox was set up"), "{}", out.output);
}

#[tokio::test]
async fn a_fast_writer_stops_at_the_cap_and_the_saved_output_is_exactly_the_cap() {
    let (_t, ctx) = setup();
    // Three times the cap, as fast as the kernel can copy it.
    let out = bash(&ctx, &format!("head -c {} /dev/zero; echo never", OUTPUT_CAP_BYTES * 3), Some(60)).await;
    let data = crate::tools::testing::details(&out);
    assert_eq!(data["outputTooLarge"], true, "{}", out.output);
    let saved = data["outputFile"].as_str().unwrap();
    assert_eq!(std::fs::metadata(saved).unwrap().len(), OUTPUT_CAP_BYTES);
    assert!(out.output.starts_with(&format!("stopped: its output passed {} MB", OUTPUT_CAP_BYTES >> 20)));
}

#[tokio::test]
async fn a_background_child_holding_the_output_open_does_not_hold_the_call() {
    let (_t, ctx) = setup();
    let started = Instant::now();
    let out = bash(&ctx, "(sleep 30; echo late) & echo now", Some(60)).await;
    assert!(started.elapsed() < Duration::from_secs(20), "the call waited for the background child");
    assert!(out.output.contains("now\n") && !out.output.contains("late"), "{}", out.output);
}
