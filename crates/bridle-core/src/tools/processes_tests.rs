//! Background processes through the tools a model calls, with real processes in the real
//! sandbox: the start answers quickly, output is read once, the session's commands share a
//! loopback, a stop takes the children down, the ring stays bounded, the count is capped, and
//! leftovers of a dead Bridle are ended by pid and start time, never by name.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::processes::*;
use crate::shell_sandbox::SandboxKind;
use crate::store::{ProcessRow, Store};
use crate::tools::testing::context;
use crate::tools::{ToolContext, ToolOutput};

/// A workspace and a session's context with its processes, on an in-memory store.
fn session() -> (tempfile::TempDir, ToolContext, Arc<Store>) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("ws");
    std::fs::create_dir_all(&root).unwrap();
    let mut ctx = context(&root);
    let store = Arc::new(Store::open_in_memory().unwrap());
    store.create_session(&ctx.session_id, &root.display().to_string(), 0).unwrap();
    ctx.clock = Arc::new(crate::clock::SystemClock);
    crate::tools::testing::in_session(&mut ctx, store.clone(), "");
    (tmp, ctx, store)
}

/// Calls tool `name` with `args` the way the registry does.
async fn call(ctx: &ToolContext, name: &str, args: Value) -> Result<ToolOutput, String> {
    let registry = crate::tools::builtin_registry().unwrap();
    let prepared = registry.prepare(name, &args.to_string()).map_err(|e| e.to_string())?;
    prepared.call.run(ctx).await.map_err(|e| e.to_string())
}

fn data(out: &ToolOutput) -> Value {
    crate::tools::testing::details(out)
}

/// Live processes of `program` (by the name it was started under, path aside; a pyenv shim
/// starts a versioned python) whose arguments are exactly `args` (the sandbox's wrappers name the
/// command in theirs too, so a part of a command line would count them).
fn running_with(program: &str, args: &str) -> usize {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_string_lossy().parse::<u32>().ok())
        .filter(|pid| start_time(*pid).is_some())
        .filter(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let argv: Vec<String> = cmdline
                .split(|b| *b == 0)
                .filter(|a| !a.is_empty())
                .map(|a| String::from_utf8_lossy(a).into())
                .collect();
            let name = argv.first().map(|a| a.rsplit('/').next().unwrap_or(a)).unwrap_or_default();
            name.starts_with(program) && argv[1..].join(" ") == args
        })
        .count()
}

#[tokio::test]
async fn a_background_start_answers_at_once_and_each_read_returns_only_new_output() {
    let (_t, ctx, store) = session();
    let started = Instant::now();
    let command = "for i in $(seq 10); do echo line$i; sleep 0.4; done; exec sleep 71";
    let out = call(&ctx, "bash", json!({"command": command, "background": true})).await.unwrap();
    let answered = started.elapsed();
    assert!(answered < Duration::from_millis(2600), "answered after {answered:?}");
    assert_eq!(data(&out)["processId"], "p1");
    assert_eq!(data(&out)["state"], "running");
    assert!(out.output.contains("line1\n") && !out.output.contains("line10"), "{}", out.output);

    // Waits for new output, and returns only that.
    let next = call(&ctx, "process_output", json!({"process_id": "p1", "wait_secs": 5})).await.unwrap();
    assert!(next.output.contains("line") && !next.output.contains("line1\n"), "{}", next.output);
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let rest = call(&ctx, "process_output", json!({"process_id": "p1"})).await.unwrap();
    assert!(rest.output.contains("line10"), "{}", rest.output);
    let empty = call(&ctx, "process_output", json!({"process_id": "p1"})).await.unwrap();
    assert!(empty.output.contains("(no new output)"), "{}", empty.output);

    let list = call(&ctx, "process_list", json!({})).await.unwrap();
    assert!(list.output.contains("p1  running for"), "{}", list.output);
    assert_eq!(store.processes(&ctx.session_id).unwrap()[0].state, "running");

    let stopped = call(&ctx, "process_stop", json!({"process_id": "p1"})).await.unwrap();
    assert_eq!(data(&stopped)["state"], "stopped");
    assert!(marked(&ctx.call_id).is_empty(), "a process of p1 is still running");
    assert_eq!(running_with("sleep", "71"), 0);
    let row = &store.processes(&ctx.session_id).unwrap()[0];
    assert_eq!((row.state.as_str(), row.ended_at.is_some()), ("stopped", true));

    let unknown = call(&ctx, "process_output", json!({"process_id": "p9"})).await.unwrap_err();
    assert!(unknown.contains("this session's are p1"), "{unknown}");
}

#[tokio::test]
async fn a_process_that_ends_at_once_answers_with_its_exit_and_its_changes_are_listed() {
    let (_t, ctx, _store) = session();
    std::fs::write(ctx.workspace.root().join("old.txt"), "old").unwrap();
    let out = call(&ctx, "bash", json!({"command": "echo made > new.txt; rm old.txt; exit 4", "background": true}))
        .await
        .unwrap();
    assert_eq!(data(&out)["state"], "exited");
    assert_eq!(data(&out)["exitCode"], 4);
    assert!(out.output.contains("exited with code 4"), "{}", out.output);
    let read = call(&ctx, "process_output", json!({"process_id": "p1"})).await.unwrap();
    assert_eq!(data(&read)["changed"], json!(["new.txt (created)", "old.txt (deleted)"]));
    assert!(read.output.contains("undo cannot restore them"), "{}", read.output);
}

#[tokio::test]
async fn the_sessions_commands_share_one_loopback_and_a_stop_ends_the_servers_children() {
    let (_t, ctx, _store) = session();
    if ctx.workspace.shell.kind() != SandboxKind::Bwrap {
        eprintln!("skipped: the shared loopback is bubblewrap's");
        return;
    }
    std::fs::write(ctx.workspace.root().join("page.html"), "served from the background").unwrap();
    // The server runs as a child of a shell, so the stop must take a child down too.
    let server = "python3 -m http.server 8765 --bind 127.0.0.1 & wait";
    let out = call(&ctx, "bash", json!({"command": server, "background": true})).await.unwrap();
    assert_eq!(data(&out)["state"], "running", "{}", out.output);
    let fetch = "for i in $(seq 50); do python3 -c 'import urllib.request as u; print(u.urlopen(\"http://127.0.0.1:8765/page.html\").read().decode())' 2>/dev/null && exit 0; sleep 0.1; done; exit 1";
    let mut second = ctx.clone();
    second.call_id = uuid::Uuid::new_v4().to_string();
    let fetched = call(&second, "bash", json!({"command": fetch})).await.unwrap();
    assert!(fetched.output.contains("served from the background"), "{}", fetched.output);
    assert_eq!(running_with("python3", "-m http.server 8765 --bind 127.0.0.1"), 1);
    call(&ctx, "process_stop", json!({"process_id": "p1"})).await.unwrap();
    assert_eq!(running_with("python3", "-m http.server 8765 --bind 127.0.0.1"), 0, "the server outlived its stop");
}

#[tokio::test]
async fn a_writer_without_end_keeps_only_the_last_mebibyte() {
    let (_t, ctx, _store) = session();
    call(&ctx, "bash", json!({"command": "yes", "background": true})).await.unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let read = call(&ctx, "process_output", json!({"process_id": "p1"})).await.unwrap();
    let dropped = data(&read)["dropped"].as_u64().unwrap();
    assert!(dropped > 0, "yes wrote less than a MiB in 2.5 s?");
    assert!(read.output.contains("bytes of output were lost"), "{}", &read.output[..200]);
    // The model gets head and tail; the whole read (at most the ring) is saved for read_file.
    assert!(read.output.len() < 40_000, "{} bytes came back", read.output.len());
    let saved = ctx.workspace.sandbox.tool_output_dir(&ctx.session_id).join(format!("{}.txt", ctx.call_id));
    let whole = std::fs::metadata(&saved).unwrap().len();
    assert!(whole > 40_000 && whole <= RING_BYTES as u64, "{whole} bytes saved");
    call(&ctx, "process_stop", json!({"process_id": "p1"})).await.unwrap();
}

#[tokio::test]
async fn at_most_eight_run_at_once_and_the_session_closing_ends_them_all() {
    let (_t, ctx, store) = session();
    for _ in 0..MAX_PER_SESSION {
        call(&ctx, "bash", json!({"command": "exec sleep 72", "background": true})).await.unwrap();
    }
    let refused = call(&ctx, "bash", json!({"command": "exec sleep 72", "background": true})).await.unwrap_err();
    assert!(refused.contains("at most 8 background processes"), "{refused}");
    assert_eq!(running_with("sleep", "72"), MAX_PER_SESSION);
    ctx.processes().unwrap().stop_all().await;
    assert_eq!(running_with("sleep", "72"), 0);
    let rows = store.processes(&ctx.session_id).unwrap();
    assert!(rows.iter().all(|r| r.state == "stopped"), "{rows:?}");
    // Closed by the session's end: told when it resumes, once.
    assert_eq!(store.untold_processes(&ctx.session_id).unwrap().len(), MAX_PER_SESSION);
    assert!(store.untold_processes(&ctx.session_id).unwrap().is_empty());
    let late = call(&ctx, "bash", json!({"command": "true", "background": true})).await.unwrap_err();
    assert!(late.contains("closing"), "{late}");
}

#[tokio::test]
async fn outside_a_session_there_is_no_background() {
    let tmp = tempfile::tempdir().unwrap();
    let ctx = context(tmp.path());
    let refused = call(&ctx, "bash", json!({"command": "sleep 1", "background": true})).await.unwrap_err();
    assert!(refused.contains("needs a session"), "{refused}");
    let list = call(&ctx, "process_list", json!({})).await.unwrap_err();
    assert!(list.contains("live in a session"), "{list}");
}

/// Leftovers of a dead owner are ended; a process with the same command line that no row names
/// is not, and neither are the processes of an owner that still runs.
#[test]
fn leftovers_are_ended_by_pid_and_start_time_never_by_name() {
    use std::os::unix::process::CommandExt as _;
    let store = Store::open_in_memory().unwrap();
    store.create_session("s1", "/w", 0).unwrap();
    let spawn = |marker: &str| {
        let mut command = std::process::Command::new("sleep");
        command.arg("73").env(MARKER, marker).process_group(0);
        command.spawn().unwrap()
    };
    let mut left = spawn("call-left");
    let mut unrelated = spawn("call-other");
    let mut owned = spawn("call-owned");
    let mut dead_owner = std::process::Command::new("sleep").arg("30").spawn().unwrap();
    let dead = (dead_owner.id(), start_time(dead_owner.id()).unwrap());
    dead_owner.kill().unwrap();
    dead_owner.wait().unwrap();
    let me = (std::process::id(), start_time(std::process::id()).unwrap());
    let row = |id: &str, child: &std::process::Child, call: &str, owner: (u32, u64)| ProcessRow {
        session_id: "s1".into(),
        id: id.into(),
        call_id: call.into(),
        command: "sleep 73".into(),
        pid: i64::from(child.id()),
        pid_start: start_time(child.id()).unwrap() as i64,
        owner_pid: i64::from(owner.0),
        owner_start: owner.1 as i64,
        started_at: 1,
        ended_at: None,
        state: "running".into(),
        exit_code: None,
    };
    store.insert_process(&row("p1", &left, "call-left", dead)).unwrap();
    store.insert_process(&row("p2", &owned, "call-owned", me)).unwrap();
    assert_eq!(end_leftovers(&store, 5), 1);
    assert!(left.wait().is_ok());
    assert!(start_time(left.id()).is_none(), "the leftover still runs");
    assert!(start_time(unrelated.id()).is_some(), "a process no row names was ended");
    assert!(start_time(owned.id()).is_some(), "a live Bridle's process was ended");
    let rows = store.processes("s1").unwrap();
    assert_eq!((rows[0].state.as_str(), rows[0].ended_at), ("stopped", Some(5)));
    assert_eq!(rows[1].ended_at, None);
    for child in [&mut unrelated, &mut owned] {
        child.kill().unwrap();
        child.wait().unwrap();
    }
}
