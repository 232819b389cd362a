//! Many sessions at one desk (DESIGN §16), through real `bridle` processes against aimock:
//! several runs on one fresh data dir at once keep the store and the audit chain whole, and the
//! questions of two live sessions are one inbox that `bridle approvals` answers session by
//! session while `bridle sessions list` says which one waits for what.

use std::process::Stdio;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::process::Child;

use super::aimock::Aimock;
use super::bridle::*;

/// aimock whose model, asked `prompt`, runs `command` with bash and then says `done`, for each
/// `(prompt, command)`; with no command it only says `hi`.
pub(super) async fn model(scripts: &[(&str, &str)]) -> (Aimock, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let mut fixtures = Vec::new();
    for (i, (prompt, command)) in scripts.iter().enumerate() {
        if command.is_empty() {
            fixtures.push(json!({"match": {"userMessage": prompt}, "response": {"content": "hi"}}));
            continue;
        }
        fixtures.push(json!({"match": {"userMessage": prompt, "hasToolResult": false},
            "response": {"toolCalls": [{"id": format!("c{i}"), "name": "bash", "arguments": {"command": command}}]}}));
        fixtures
            .push(json!({"match": {"userMessage": prompt, "hasToolResult": true}, "response": {"content": "done"}}));
    }
    std::fs::write(dir.path().join("script.json"), json!({ "fixtures": fixtures }).to_string()).unwrap();
    (Aimock::start_with(dir.path()).await, dir)
}

/// `bridle ARGS` on `dirs` as a live child: stdin stays open and silent (a terminal nobody
/// answers), stdout and stderr are kept.
pub(super) fn spawn(dirs: &Dirs, args: &[&str]) -> Child {
    command(&dirs.data, &dirs.workspace, args)
        .env("BRIDLE_NET_RESOLVE", "new.test=127.0.0.1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap()
}

pub(super) fn run_args<'a>(prompt: &'a str, mode: &'a str, base: &'a str) -> Vec<&'a str> {
    run_args_asking(prompt, mode, "prompt", base)
}

/// `bridle run PROMPT --json` in `mode` against the model at `base`, answering questions as
/// `on_ask` says.
pub(super) fn run_args_asking<'a>(prompt: &'a str, mode: &'a str, on_ask: &'a str, base: &'a str) -> Vec<&'a str> {
    vec![
        "run",
        prompt,
        "--json",
        "--mode",
        mode,
        "--on-ask",
        on_ask,
        "--provider",
        "openai",
        "--base-url",
        base,
        "--model",
        "m",
    ]
}

pub(super) async fn listed(dirs: &Dirs, what: &[&str]) -> Vec<Value> {
    let out = bridle(dirs, what).await;
    assert_eq!(out.status.code(), Some(0), "{what:?}: {}", stderr(&out));
    json_lines(&out)
}

/// Polls `bridle approvals list --json` until `n` requests wait.
pub(super) async fn pending(dirs: &Dirs, n: usize) -> Vec<Value> {
    for _ in 0..300 {
        let requests = listed(dirs, &["approvals", "list", "--json"]).await;
        if requests.len() >= n {
            return requests;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{n} requests never waited: {:?}", listed(dirs, &["approvals", "list", "--json"]).await);
}

/// Fresh folders whose config lets `curl` run and asks before any host but loopback's address.
fn asking_about_hosts() -> Dirs {
    let dirs = Dirs::new();
    std::fs::create_dir_all(&dirs.data).unwrap();
    let config = "[rules]\nallow = [\"bash(curl *)\"]\n[sandbox.network]\nmode = \"ask\"\nallow = [\"127.0.0.1\"]\n";
    std::fs::write(dirs.data.join("config.toml"), config).unwrap();
    dirs
}

pub(super) fn session_of<'a>(sessions: &'a [Value], id: &str) -> &'a Value {
    sessions.iter().find(|s| s["id"] == id).unwrap_or_else(|| panic!("no session {id} in {sessions:?}"))
}

#[tokio::test]
async fn several_runs_on_one_fresh_data_dir_at_once_keep_the_store_and_the_audit_chain() {
    const RUNS: usize = 6;
    let prompts: Vec<String> = (0..RUNS).map(|i| format!("run number {i}")).collect();
    let scripts: Vec<(&str, String)> =
        prompts.iter().enumerate().map(|(i, p)| (p.as_str(), format!("echo {p} > out-{i}.txt"))).collect();
    let commands: Vec<(&str, &str)> = scripts.iter().map(|(p, c)| (*p, c.as_str())).collect();
    let (mock, _f) = model(&commands).await;
    let dirs = Dirs::new();
    let base = format!("{}/v1", mock.url);
    let init =
        std::process::Command::new("git").args(["init", "-q", "-b", "trunk"]).current_dir(&dirs.workspace).status();
    assert!(init.unwrap().success());
    // Nothing exists yet: every process may be the one that creates the stores.
    assert!(!dirs.data.exists());
    let mut children = Vec::new();
    for prompt in &prompts {
        children.push(spawn(&dirs, &run_args(prompt, "auto", &base)));
        children.push(spawn(&dirs, &["approvals", "list", "--json"]));
        children.push(spawn(&dirs, &["sessions", "list", "--json"]));
    }
    for child in children {
        let out = child.wait_with_output().await.unwrap();
        assert_eq!(out.status.code(), Some(0), "{}\n{}", stderr(&out), stdout(&out));
    }
    let sessions = listed(&dirs, &["sessions", "list", "--json"]).await;
    assert_eq!(sessions.len(), RUNS, "{sessions:?}");
    for s in &sessions {
        assert_eq!((s["state"].as_str(), &s["waitingFor"]), (Some("idle"), &Value::Null), "{s}");
        assert_eq!(s["branch"], "trunk", "{s}");
    }
    let out = bridle(&dirs, &["audit", "verify"]).await;
    assert_eq!(out.status.code(), Some(0), "{}\n{}", stdout(&out), stderr(&out));
    // Every run's turn is on the record, each with its own session.
    let out = bridle(&dirs, &["audit", "--kind", "user_message", "--json"]).await;
    let rows = json_lines(&out);
    assert_eq!(rows.len(), RUNS, "{rows:?}");
    let mut ids: Vec<&str> = rows.iter().map(|r| r["sessionId"].as_str().unwrap()).collect();
    ids.dedup();
    assert_eq!(ids.len(), RUNS);
}

#[tokio::test]
async fn two_live_sessions_ask_into_one_inbox_and_an_answer_resumes_only_its_own() {
    let (mock, _f) = model(&[
        ("fetch the page", "curl -sS --max-time 120 http://new.test:9/"),
        ("fix it", "sed -i 's/old/new/' f.txt"),
    ])
    .await;
    let dirs = asking_about_hosts();
    std::fs::write(dirs.workspace.join("f.txt"), "old line\n").unwrap();
    let base = format!("{}/v1", mock.url);
    // A asks to reach a host; B's command changed a file, held for review.
    let a = spawn(&dirs, &run_args("fetch the page", "auto", &base));
    let requests = pending(&dirs, 1).await;
    let b = spawn(&dirs, &run_args("fix it", "review", &base));
    let requests = {
        let mut all = pending(&dirs, 2).await;
        all.retain(|r| !requests.contains(r));
        [requests, all].concat()
    };
    let (host, changes) = (&requests[0], &requests[1]);
    assert_eq!(host["subject"]["type"], "host", "{host}");
    assert_eq!(changes["subject"]["type"], "changes", "{changes}");
    let (a_id, b_id) = (host["sessionId"].as_str().unwrap(), changes["sessionId"].as_str().unwrap());
    assert_ne!(a_id, b_id);
    let text = stdout(&bridle(&dirs, &["approvals", "list"]).await);
    assert!(text.contains(a_id) && text.contains(b_id), "{text}");

    let sessions = listed(&dirs, &["sessions", "list", "--json"]).await;
    for (id, kind) in [(a_id, "host"), (b_id, "changes")] {
        let s = session_of(&sessions, id);
        assert_eq!(
            (s["state"].as_str(), s["waitingFor"].as_str(), s["waiting"].as_u64()),
            (Some("needs-you"), Some(kind), Some(1)),
            "{s}"
        );
    }
    assert_eq!(std::fs::read_to_string(dirs.workspace.join("f.txt")).unwrap(), "old line\n");

    // Approving B resumes B in its own process, which finishes its turn; A still waits.
    let out = bridle(&dirs, &["approvals", "approve", changes["id"].as_str().unwrap()]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let b = tokio::time::timeout(Duration::from_secs(60), b.wait_with_output()).await.expect("B finished").unwrap();
    assert_eq!(b.status.code(), Some(0), "{}", stderr(&b));
    assert!(json_lines(&b).iter().any(|e| e["type"] == "turnCompleted"), "{}", stdout(&b));
    assert_eq!(std::fs::read_to_string(dirs.workspace.join("f.txt")).unwrap(), "new line\n");
    let left = listed(&dirs, &["approvals", "list", "--json"]).await;
    assert_eq!(left.len(), 1, "{left:?}");
    assert_eq!(left[0]["id"], host["id"]);
    let sessions = listed(&dirs, &["sessions", "list", "--json"]);
    let sessions = sessions.await;
    assert_eq!(session_of(&sessions, a_id)["state"], "needs-you");
    assert_eq!(session_of(&sessions, b_id)["state"], "idle");
    let text = stdout(&bridle(&dirs, &["sessions", "list"]).await);
    assert!(text.lines().any(|l| l.starts_with(a_id) && l.contains("needs-you (1 waiting, first: a host)")), "{text}");

    // A's answer, a deny from here, ends A's turn too; nothing of it ran.
    let out = bridle(&dirs, &["approvals", "deny", host["id"].as_str().unwrap()]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let a = tokio::time::timeout(Duration::from_secs(60), a.wait_with_output()).await.expect("A finished").unwrap();
    assert_eq!(a.status.code(), Some(0), "{}", stderr(&a));
    let sessions = listed(&dirs, &["sessions", "list", "--json"]).await;
    assert!(sessions.iter().all(|s| s["state"] == "idle"), "{sessions:?}");
}

#[tokio::test]
async fn a_run_killed_mid_turn_is_listed_failed_until_a_turn_of_it_ends() {
    let (mock, _f) = model(&[("fetch the page", "curl -sS --max-time 120 http://new.test:9/"), ("say hi", "")]).await;
    let dirs = asking_about_hosts();
    let base = format!("{}/v1", mock.url);
    let mut a = spawn(&dirs, &run_args("fetch the page", "auto", &base));
    let requests = pending(&dirs, 1).await;
    let id = requests[0]["sessionId"].as_str().unwrap().to_string();
    assert_eq!(session_of(&listed(&dirs, &["sessions", "list", "--json"]).await, &id)["state"], "needs-you");

    // Killed while its command waits on the host: the question died with the command that
    // asked it, and the turn never ended.
    a.kill().await.unwrap();
    a.wait().await.unwrap();
    let s = session_of(&listed(&dirs, &["sessions", "list", "--json"]).await, &id).clone();
    assert_eq!((s["state"].as_str(), &s["waitingFor"]), (Some("failed"), &Value::Null), "{s}");
    assert!(listed(&dirs, &["approvals", "list", "--json"]).await.is_empty());

    // A new turn of it ends: idle again.
    let out = bridle(&dirs, &[run_args("say hi", "auto", &base), vec!["--session", &id]].concat()).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(session_of(&listed(&dirs, &["sessions", "list", "--json"]).await, &id)["state"], "idle");
}
