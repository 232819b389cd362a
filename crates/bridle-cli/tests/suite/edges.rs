//! Bridle's own edges (DESIGN §5, §15), through real front ends as root and as `nobody`: what
//! Bridle itself reads for an editor or for the brief is read through its one door, so a FIFO or a
//! link to `/dev/zero` in the workspace, or as `.git`, never hangs it or grows it.

use std::os::unix::fs::symlink;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

use super::aimock::Aimock;
use super::bridle::*;
use super::sandbox::{users, Setup, ONE_NOBODY_AT_A_TIME};

/// A bound no honest run comes near: Bridle's peak resident memory stays under it.
const MEMORY_LIMIT_KIB: u64 = 200 * 1024;

/// An aimock with `fixtures`, kept with its folder.
async fn model(fixtures: Value) -> (Aimock, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("script.json"), json!({ "fixtures": fixtures }).to_string()).unwrap();
    (Aimock::start_with(dir.path()).await, dir)
}

fn config(mock: &Aimock, mode: &str) -> String {
    format!("mode = \"{mode}\"\n[provider]\nkind = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"m\"\n", mock.url)
}

fn mkfifo(path: &std::path::Path) {
    assert!(std::process::Command::new("mkfifo").arg(path).status().unwrap().success());
}

/// `VmHWM` (peak resident memory) of `pid`, in KiB, while it lives.
fn peak_kib(pid: u32) -> Option<u64> {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:").map(|v| v.trim().trim_end_matches(" kB").parse().unwrap_or(0)))
}

/// Waits up to `limit` for `child`, sampling its peak memory: its status and the last peak seen.
async fn wait_measured(child: &mut tokio::process::Child, limit: Duration) -> (std::process::ExitStatus, u64) {
    let pid = child.id().unwrap();
    let mut peak = 0;
    let started = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return (status, peak);
        }
        peak = peak_kib(pid).unwrap_or(peak).max(peak);
        assert!(started.elapsed() < limit, "still running after {limit:?} (peak {peak} KiB)");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// One raw ACP session on `setup`'s workspace: `prompt` sent, every permission request allowed
/// once; every message read until the prompt's answer, and Bridle's peak memory then.
async fn acp_turn(setup: &Setup, prompt: &str) -> (Vec<Value>, u64) {
    let mut child = setup
        .bridle(&["acp"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let pid = child.id().unwrap();
    let mut input = child.stdin.take().unwrap();
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let cwd = setup.dirs.workspace.display().to_string();
    let requests = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": cwd, "mcpServers": []}}),
    ];
    let mut messages = Vec::new();
    let mut peak = 0;
    for (n, request) in requests.iter().enumerate() {
        input.write_all(format!("{request}\n").as_bytes()).await.unwrap();
        let answer = loop {
            let line =
                tokio::time::timeout(Duration::from_secs(30), lines.next_line()).await.unwrap().unwrap().unwrap();
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == json!(n + 1) {
                break message;
            }
        };
        assert!(answer.get("result").is_some(), "{request}: {answer}");
        messages.push(answer);
    }
    let session = messages[1]["result"]["sessionId"].clone();
    let prompt = json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt",
        "params": {"sessionId": session, "prompt": [{"type": "text", "text": prompt}]}});
    input.write_all(format!("{prompt}\n").as_bytes()).await.unwrap();
    let started = std::time::Instant::now();
    loop {
        let line = tokio::time::timeout(Duration::from_secs(5), lines.next_line()).await;
        peak = peak_kib(pid).unwrap_or(peak).max(peak);
        assert!(started.elapsed() < Duration::from_secs(60), "the turn did not end within 60 s: {messages:?}");
        let Ok(line) = line else { continue };
        let message: Value = serde_json::from_str(&line.unwrap().unwrap()).unwrap();
        if message["method"] == "session/request_permission" {
            let answer = json!({"jsonrpc": "2.0", "id": message["id"],
                "result": {"outcome": {"outcome": "selected", "optionId": "allow_once"}}});
            input.write_all(format!("{answer}\n").as_bytes()).await.unwrap();
        }
        let done = message["id"] == 3;
        messages.push(message);
        if done {
            break;
        }
    }
    (messages, peak)
}

/// An editor's diff of an edit call is never read from the paths the call names: a FIFO, an
/// absolute `/dev/zero` and a link to it are refused by the tools, and the session answers at
/// once, in a few MB.
#[tokio::test]
async fn acp_edits_naming_a_fifo_or_dev_zero_answer_at_once_in_bounded_memory() {
    for user in users() {
        let _alone = ONE_NOBODY_AT_A_TIME.lock().await;
        let calls = json!([
            {"id": "w1", "name": "write_file", "arguments": {"path": "pipe", "content": "x"}},
            {"id": "w2", "name": "write_file", "arguments": {"path": "/dev/zero", "content": "x"}},
            {"id": "e1", "name": "edit_file", "arguments": {"path": "zero", "old_string": "a", "new_string": "b"}},
            {"id": "e2", "name": "edit_file", "arguments": {"path": "/dev/zero", "old_string": "a", "new_string": "b"}},
            {"id": "w3", "name": "write_file", "arguments": {"path": "notes.txt", "content": "new\n"}}
        ]);
        let (mock, _f) = model(json!([
            {"match": {"userMessage": "poke", "hasToolResult": false}, "response": {"toolCalls": calls}},
            {"match": {"userMessage": "poke", "hasToolResult": true}, "response": {"content": "done"}}
        ]))
        .await;
        let setup = Setup::new(user, &config(&mock, "auto"));
        let ws = &setup.dirs.workspace;
        mkfifo(&ws.join("pipe"));
        symlink("/dev/zero", ws.join("zero")).unwrap();
        std::fs::write(ws.join("notes.txt"), "old\n").unwrap();
        setup.own();
        let (messages, peak) = acp_turn(&setup, "poke").await;
        eprintln!("{user:?}: bridle acp peak {} MiB", peak / 1024);
        assert_eq!(messages.last().unwrap()["result"]["stopReason"], "end_turn", "{user:?}: {messages:?}");
        assert!(peak < MEMORY_LIMIT_KIB, "{user:?}: peak {peak} KiB");
        let ends: Vec<&Value> = messages
            .iter()
            .map(|m| &m["params"]["update"])
            .filter(|u| u["sessionUpdate"] == "tool_call_update" && u["status"].is_string())
            .collect();
        // The calls run side by side (the ids are Bridle's own): four refused, the honest edit done.
        let mut statuses: Vec<&str> = ends.iter().map(|u| u["status"].as_str().unwrap()).collect();
        statuses.sort();
        assert_eq!(statuses, ["completed", "failed", "failed", "failed", "failed"], "{user:?}: {ends:?}");
        assert!(ends.iter().any(|u| u.to_string().contains("FIFO")), "{user:?}: {ends:?}");
        // The honest edit still shows its whole diff, its old side taken back from the diff.
        let done = ends.iter().find(|u| u["status"] == "completed").unwrap();
        let diff = done["content"].as_array().unwrap().iter().find(|c| c["type"] == "diff").expect("a diff");
        assert_eq!((diff["oldText"].as_str(), diff["newText"].as_str()), (Some("old\n"), Some("new\n")));
        let told = mock.journal().await.last().unwrap().to_string();
        assert!(told.contains("FIFO"), "{user:?}: the model was not told: {told}");
    }
}

/// What a command can leave as `.git` (it lands as git's own data): `HEAD` linked to `/dev/zero`,
/// or a FIFO named `.git`. The next `bridle run` starts, answers and stays small.
#[tokio::test]
async fn a_poisoned_git_folder_never_hangs_or_grows_the_next_run() {
    for user in users() {
        let _alone = ONE_NOBODY_AT_A_TIME.lock().await;
        let (mock, _f) = model(json!([{"match": {"userMessage": "hi"}, "response": {"content": "hello there"}}])).await;
        let setup = Setup::new(user, &config(&mock, "auto"));
        let ws = setup.dirs.workspace.clone();
        let plants: [(&str, &dyn Fn()); 3] = [
            ("HEAD -> /dev/zero", &|| {
                std::fs::create_dir_all(ws.join(".git")).unwrap();
                symlink("/dev/zero", ws.join(".git/HEAD")).unwrap();
            }),
            ("HEAD a FIFO", &|| {
                std::fs::remove_file(ws.join(".git/HEAD")).unwrap();
                mkfifo(&ws.join(".git/HEAD"));
            }),
            (".git a FIFO", &|| {
                std::fs::remove_dir_all(ws.join(".git")).unwrap();
                mkfifo(&ws.join(".git"));
            }),
        ];
        for (name, plant) in plants {
            plant();
            setup.own();
            let mut child = setup
                .bridle(&["run", "hi"])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .kill_on_drop(true)
                .spawn()
                .unwrap();
            let (status, peak) = wait_measured(&mut child, Duration::from_secs(60)).await;
            let out = child.wait_with_output().await.unwrap();
            eprintln!("{user:?} {name}: bridle run peak {} MiB", peak / 1024);
            assert!(status.success(), "{user:?} {name}: {} {}", stdout(&out), stderr(&out));
            assert!(stdout(&out).contains("hello there"), "{user:?} {name}: {}", stdout(&out));
            assert!(peak < MEMORY_LIMIT_KIB, "{user:?} {name}: peak {peak} KiB");
        }
    }
}

/// Every file under `root` (path, mode, bytes), hashed: two trees that hash alike are the same
/// byte for byte.
fn tree_hash(root: &std::path::Path) -> String {
    use sha2::Digest as _;
    use std::os::unix::fs::PermissionsExt as _;
    let mut entries = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let meta = path.symlink_metadata().unwrap();
            if meta.is_dir() {
                stack.push(path.clone());
            }
            let content = if meta.is_file() { std::fs::read(&path).unwrap() } else { Vec::new() };
            entries.push((path, meta.permissions().mode(), content));
        }
    }
    entries.sort();
    let mut hash = sha2::Sha256::new();
    for (path, mode, content) in &entries {
        hash.update(format!("{}\0{mode:o}\0{}\0", path.display(), content.len()));
        hash.update(content);
    }
    format!("{} entries, sha256 {:x}", entries.len(), hash.finalize())
}

/// A 20,000-file `apply_patch` with a 1 s timeout: the call returns once what it had written (if
/// anything) is put back, the tree is byte-identical, and the result and the audit say what
/// happened. (The rollback of a write stopped midway is shown deterministically in
/// `tools::changes_tests`; here the second may end in the plan, the checkpoint or the writes.)
#[tokio::test]
async fn a_huge_patch_stopped_by_its_timeout_leaves_the_tree_as_it_was() {
    const FILES: usize = 20_000;
    let dirs = Dirs::new();
    std::fs::create_dir_all(dirs.workspace.join("f")).unwrap();
    let mut patch = String::new();
    for n in 0..FILES {
        std::fs::write(dirs.workspace.join(format!("f/{n:05}.txt")), format!("old {n}\n")).unwrap();
        patch.push_str(&format!("--- a/f/{n:05}.txt\n+++ b/f/{n:05}.txt\n@@ -1 +1 @@\n-old {n}\n+new {n}\n"));
    }
    let before = tree_hash(&dirs.workspace);
    let (mock, _f) = model(json!([
        {"match": {"userMessage": "patch all", "hasToolResult": false},
         "response": {"toolCalls": [{"id": "p1", "name": "apply_patch", "arguments": {"patch": patch}}]}},
        {"match": {"userMessage": "patch all", "hasToolResult": true}, "response": {"content": "done"}}
    ]))
    .await;
    std::fs::create_dir_all(&dirs.data).unwrap();
    let config = format!("{}[limits]\ntool_timeout_secs = 1\n", config(&mock, "auto"));
    std::fs::write(dirs.data.join("config.toml"), config).unwrap();
    let started = std::time::Instant::now();
    let out = bridle(&dirs, &["run", "patch all", "--json"]).await;
    let took = started.elapsed();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let ended = json_lines(&out).into_iter().find(|e| e["type"] == "toolCallEnd").expect("the call ended");
    let said: String = ended["result"]["output"].as_str().unwrap().chars().take(300).collect();
    eprintln!("the turn took {took:?}; the call said: {said}");
    assert!(said.contains("timed out"), "{said}");
    assert_eq!(tree_hash(&dirs.workspace), before, "the tree changed: {said}");
    let rows = json_lines(&bridle(&dirs, &["audit", "--kind", "tool_failed", "--json"]).await);
    let row = rows.iter().map(Value::to_string).find(|r| r.contains("timed out")).expect("a tool_failed row");
    let named = ["rolled back", "before anything was written", "not begun writing"];
    assert!(named.iter().any(|n| row.contains(n)), "{}", &row[..row.len().min(600)]);
}
