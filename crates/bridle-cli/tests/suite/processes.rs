//! Processes that outlive a call, from the user's side: `bridle run` with a scripted model starts
//! a real server in the background, a later command of the session fetches a page from it over
//! the sandbox's shared loopback, the model reads only the new output and stops it; what a turn
//! leaves running ends when `bridle run` exits, and the resumed session's model is told. A
//! `kill -9` of Bridle leaves a process behind only until the next start of a front end, which
//! ends it by pid and start time and leaves a process with the same command line alone. As the
//! invoking user and (as root) as `nobody`.

use serde_json::{json, Value};

use super::aimock::Aimock;
use super::bridle::*;
use super::sandbox::{users, Setup, User, ONE_NOBODY_AT_A_TIME};

/// An aimock with `fixtures`, kept with its folder.
async fn model(fixtures: Value) -> (Aimock, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("script.json"), json!({ "fixtures": fixtures }).to_string()).unwrap();
    (Aimock::start_with(dir.path()).await, dir)
}

/// `bridle run PROMPT --json` as the setup's user against `mock`, continuing `session`.
fn run(t: &Setup, mock: &Aimock, prompt: &str, session: Option<&str>) -> tokio::process::Command {
    let base = format!("{}/v1", mock.url);
    let mut args = vec!["run", prompt, "--json", "--on-ask", "deny", "--provider", "openai", "--model", "m"];
    args.extend(["--base-url", &base]);
    if let Some(id) = session {
        args.extend(["--session", id]);
    }
    t.bridle(&args)
}

async fn finished(mut command: tokio::process::Command) -> Vec<Value> {
    let out = command.output().await.unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    json_lines(&out)
}

/// The outputs of the turn's calls, in order.
fn outputs(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .filter(|e| e["type"] == "toolCallEnd")
        .map(|e| e["result"]["output"].as_str().unwrap().to_string())
        .collect()
}

/// Live processes started as `program` (path aside) with exactly `args`.
pub(super) fn running(program: &str, args: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_string_lossy().parse::<u32>().ok())
        .filter(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let zombie = stat.rfind(')').is_some_and(|i| stat[i + 2..].starts_with('Z'));
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let argv: Vec<String> = cmdline
                .split(|b| *b == 0)
                .filter(|a| !a.is_empty())
                .map(|a| String::from_utf8_lossy(a).into())
                .collect();
            let name = argv.first().map(|a| a.rsplit('/').next().unwrap_or(a).to_string()).unwrap_or_default();
            !zombie && name.starts_with(program) && argv.get(1..).is_some_and(|a| a.join(" ") == args)
        })
        .collect()
}

/// Whether `pid`'s environment carries Bridle's call marker (a process a command started).
fn marked(pid: u32) -> bool {
    std::fs::read(format!("/proc/{pid}/environ"))
        .map(|env| env.split(|b| *b == 0).any(|v| v.starts_with(b"BRIDLE_TOOL_CALL=")))
        .unwrap_or(false)
}

async fn process_rows(t: &Setup) -> Vec<Value> {
    json_lines(&bridle(&t.dirs, &["audit", "--kind", "process", "--json"]).await)
}

async fn a_server_in_the_background_serves_the_next_command_and_ends_with_the_run(user: User) {
    let _alone = ONE_NOBODY_AT_A_TIME.lock().await;
    // Commands may reach hosts: the proxy's variables are set, and loopback must stay direct.
    let config =
        "mode = \"auto\"\n[rules]\nallow = [\"bash(curl *)\"]\n[sandbox]\nbackend = \"bwrap\"\n[sandbox.network]\nmode = \"allow\"\nallow = [\"*\"]\n";
    let t = Setup::new(user, config);
    t.hide("page.html", "served from the background\n");
    let server = "python3 -m http.server 8766 --bind 127.0.0.1";
    let fetch =
        "curl -sS --retry 50 --retry-connrefused --retry-delay 0 --max-time 20 http://127.0.0.1:8766/.t/page.html";
    let (mock, _f) = model(json!([
        {"match": {"userMessage": "serve", "hasToolResult": false},
         "response": {"toolCalls": [{"id": "b1", "name": "bash", "arguments": {"command": server, "background": true}}]}},
        {"match": {"userMessage": "serve", "toolCallId": "b1"},
         "response": {"toolCalls": [{"id": "f1", "name": "bash", "arguments": {"command": fetch}}]}},
        {"match": {"userMessage": "serve", "toolCallId": "f1"},
         "response": {"toolCalls": [{"id": "o1", "name": "process_output", "arguments": {"process_id": "p1", "wait_secs": 5}}]}},
        {"match": {"userMessage": "serve", "toolCallId": "o1"},
         "response": {"toolCalls": [{"id": "s1", "name": "process_stop", "arguments": {"process_id": "p1"}}]}},
        {"match": {"userMessage": "serve", "toolCallId": "s1"}, "response": {"content": "served"}},
        {"match": {"userMessage": "leave", "hasToolResult": false},
         "response": {"toolCalls": [{"id": "b2", "name": "bash", "arguments": {"command": server, "background": true}}]}},
        {"match": {"userMessage": "leave", "toolCallId": "b2"}, "response": {"content": "left running"}},
        {"match": {"userMessage": "what ran"}, "response": {"content": "nothing runs"}}
    ]))
    .await;

    let events = finished(run(&t, &mock, "serve", None)).await;
    let session = events[0]["sessionId"].as_str().unwrap().to_string();
    let outs = outputs(&events);
    assert_eq!(outs.len(), 4, "{outs:?}");
    assert!(outs[0].contains("started in the background as p1"), "{user:?}: {}", outs[0]);
    assert!(outs[1].contains("served from the background"), "{user:?}: the page was not fetched: {}", outs[1]);
    // The server's own log line for that request, read once.
    assert!(outs[2].contains("GET /.t/page.html"), "{user:?}: {}", outs[2]);
    assert!(outs[3].contains("p1 `python3 -m http.server 8766") && outs[3].contains("stopped"), "{}", outs[3]);
    assert!(
        running("python", "-m http.server 8766 --bind 127.0.0.1").is_empty(),
        "{user:?}: the server outlived its stop"
    );

    // A second run leaves one running: it ends when `bridle run` exits.
    let events = finished(run(&t, &mock, "leave", Some(&session))).await;
    assert!(outputs(&events)[0].contains("as p2"), "{:?}", outputs(&events));
    assert!(running("python", "-m http.server 8766 --bind 127.0.0.1").is_empty(), "{user:?}: p2 outlived bridle run");
    let listed = bridle(&t.dirs, &["processes", "list", "--session", &session, "--json"]).await;
    let states: Vec<Value> = json_lines(&listed).iter().map(|p| json!([p["id"], p["state"]])).collect();
    assert_eq!(states, [json!(["p1", "stopped"]), json!(["p2", "stopped"])]);

    // The resumed session's model is told p2 ended when the session closed (and p1 is not news).
    finished(run(&t, &mock, "what ran", Some(&session))).await;
    let journal = mock.journal().await;
    let last = journal.last().unwrap().to_string();
    assert!(last.contains("background processes ended when it was last closed: p2"), "{last}");
    assert!(!last.contains("p1 (`python3"), "{last}");

    let rows = process_rows(&t).await;
    let seen: Vec<String> = rows
        .iter()
        .map(|r| format!("{} {}", r["payload"]["processId"].as_str().unwrap(), r["status"].as_str().unwrap()))
        .collect();
    for expected in ["p1 started", "p1 stopped", "p2 started", "p2 stopped"] {
        assert!(seen.iter().any(|s| s == expected), "{user:?}: no `{expected}` row in {seen:?}");
    }
}

#[tokio::test]
async fn a_server_in_the_background_serves_the_next_command_for_root_and_for_a_user() {
    for user in users() {
        a_server_in_the_background_serves_the_next_command_and_ends_with_the_run(user).await;
    }
}

/// `bridle run PROMPT` against a model that starts `command` in the background, then asks for an
/// escalation: an escalation always asks, so Bridle waits on its prompt with no command running.
/// Returns the running `bridle run` and the model once the process is listed as running.
async fn started_and_waiting(
    t: &Setup,
    prompt: &str,
    command: &str,
) -> (tokio::process::Child, Aimock, tempfile::TempDir) {
    let (mock, fixtures) = model(json!([
        {"match": {"userMessage": prompt, "hasToolResult": false},
         "response": {"toolCalls": [{"id": "b1", "name": "bash", "arguments": {"command": command, "background": true}}]}},
        {"match": {"userMessage": prompt, "toolCallId": "b1"},
         "response": {"toolCalls": [{"id": "e1", "name": "bash", "arguments": {"command": "true", "escalate": true, "justification": "wait"}}]}}
    ]))
    .await;
    let base = format!("{}/v1", mock.url);
    let args =
        ["run", prompt, "--json", "--on-ask", "prompt", "--provider", "openai", "--model", "m", "--base-url", &base];
    let child =
        t.bridle(&args).stdin(std::process::Stdio::piped()).stdout(std::process::Stdio::null()).spawn().unwrap();
    // Listed as running once recorded (the row is written when the process has started).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !json_lines(&bridle(&t.dirs, &["processes", "list", "--json"]).await).iter().any(|p| p["state"] == "running")
    {
        assert!(std::time::Instant::now() < deadline, "`{command}` never ran");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    (child, mock, fixtures)
}

/// Under Landlock a process outlives a `kill -9` of Bridle (no namespace dies with it): the next
/// start of a front end ends it.
#[tokio::test]
async fn what_a_killed_bridle_left_running_is_ended_at_the_next_start_and_nothing_else() {
    let _alone = ONE_NOBODY_AT_A_TIME.lock().await;
    let t = Setup::new(User::Invoking, "mode = \"auto\"\n[sandbox]\nbackend = \"landlock\"\n");
    // A duration of this test run's own, so another run on the machine (another checkout's)
    // is neither counted nor ended here.
    let secs = format!("301.{}", std::process::id());
    let command = format!("exec sleep {secs}");
    let (mut bridle_run, _mock, _f) = started_and_waiting(&t, "start", &command).await;
    let listed = json_lines(&bridle(&t.dirs, &["processes", "list", "--json"]).await);
    assert_eq!((&listed[0]["id"], &listed[0]["state"]), (&json!("p1"), &json!("running")), "{listed:?}");
    let session = listed[0]["sessionId"].as_str().unwrap().to_string();
    bridle_run.start_kill().unwrap();
    bridle_run.wait().await.unwrap();
    let left: Vec<u32> = running("sleep", &secs).into_iter().filter(|p| marked(*p)).collect();
    assert_eq!(left.len(), 1, "under Landlock the process outlives Bridle until the next start");
    let mut unrelated = std::process::Command::new("sleep").arg(&secs).spawn().unwrap();

    // Any front end's start ends it; the process with the same command line stays.
    let listed = json_lines(&bridle(&t.dirs, &["processes", "list", "--session", &session, "--json"]).await);
    assert_eq!(listed[0]["state"], "stopped", "{listed:?}");
    assert!(running("sleep", &secs).iter().all(|p| !marked(*p)), "the leftover still runs");
    assert!(running("sleep", &secs).contains(&unrelated.id()), "an unrelated process was ended");
    unrelated.kill().unwrap();
    unrelated.wait().unwrap();

    // Stopping by hand, from another process, while the owner runs: `bridle processes stop`.
    let again = format!("302.{}", std::process::id());
    let (mut bridle_run, _mock, _f) = started_and_waiting(&t, "again", &format!("exec sleep {again}")).await;
    let out = bridle(&t.dirs, &["processes", "stop", "p1"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let stopped: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(stopped["state"], "stopped");
    assert!(running("sleep", &again).is_empty(), "the stopped process still runs");
    let missing = bridle(&t.dirs, &["processes", "stop", "p7"]).await;
    assert_eq!(missing.status.code(), Some(1));
    assert!(stderr(&missing).contains("no process `p7` runs"), "{}", stderr(&missing));
    bridle_run.start_kill().unwrap();
    bridle_run.wait().await.unwrap();
}
