//! `bridle acp` from real clients no one here wrote: `acpx` (npm, a headless ACP client) drives a
//! turn against aimock — the answer streams back, a write in `ask` becomes a permission request,
//! approving writes the file (its diff in the tool call's content), rejecting leaves it
//! byte-identical and the model is told; the official TypeScript SDK drives a session through a
//! tool call, a cancel during a long command, the client's own MCP server, a restart of the agent
//! and `session/load`, and a switch to `plan`; and raw JSON-RPC lines that are not what they
//! should be get errors while the connection goes on.

use std::path::Path;

use serde_json::{json, Value};

use super::aimock::{repo_root, Aimock};
use super::bridle::*;
use super::processes::running;

/// An aimock with `fixtures`, kept with its folder.
async fn model(fixtures: Value) -> (Aimock, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("script.json"), json!({ "fixtures": fixtures }).to_string()).unwrap();
    (Aimock::start_with(dir.path()).await, dir)
}

fn write_config(dirs: &Dirs, mock: &Aimock, mode: &str) {
    std::fs::create_dir_all(&dirs.data).unwrap();
    let config =
        format!("mode = \"{mode}\"\n[provider]\nkind = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"m\"\n", mock.url);
    std::fs::write(dirs.data.join("config.toml"), config).unwrap();
}

/// `acpx exec PROMPT` against `bridle acp` with `policy` (`--approve-all` or `--deny-all`): every
/// JSON-RPC message it logged, in order.
pub(super) async fn acpx(dirs: &Dirs, policy: &str, prompt: &str) -> Vec<Value> {
    let agent = format!("{} acp --data-dir {}", env!("CARGO_BIN_EXE_bridle"), dirs.data.display());
    let out = tokio::process::Command::new("node")
        .arg(repo_root().join("tests/acp/node_modules/acpx/dist/cli.js"))
        .args(["--agent", &agent, "--cwd"])
        .arg(&dirs.workspace)
        .args([policy, "--format", "json", "--timeout", "60", "--ttl", "1", "exec", prompt])
        .current_dir(&dirs.workspace)
        .env("OPENAI_API_KEY", "sk-test")
        .env_remove("DBUS_SESSION_BUS_ADDRESS")
        .env("HOME", dirs.data.parent().unwrap())
        .output()
        .await
        .unwrap();
    // acpx exits 5 (its PERMISSION_DENIED) when it rejected a request; the turn still ended.
    let expected = if policy == "--deny-all" { 5 } else { 0 };
    assert_eq!(out.status.code(), Some(expected), "acpx: {}\n{}", stdout(&out), stderr(&out));
    stdout(&out).lines().filter_map(|l| serde_json::from_str(l).ok()).collect()
}

pub(super) fn updates<'a>(messages: &'a [Value], kind: &str) -> Vec<&'a Value> {
    messages
        .iter()
        .filter(|m| m["method"] == "session/update" && m["params"]["update"]["sessionUpdate"] == kind)
        .map(|m| &m["params"]["update"])
        .collect()
}

fn stop_reason(messages: &[Value]) -> Option<&str> {
    messages.iter().find_map(|m| m["result"]["stopReason"].as_str())
}

async fn audit_rows(dirs: &Dirs, kind: &str) -> Vec<Value> {
    json_lines(&bridle(dirs, &["audit", "--kind", kind, "--json"]).await)
}

#[tokio::test]
async fn acpx_gets_the_answer_and_a_write_asks_with_approve_writing_and_reject_leaving_the_file() {
    let dirs = Dirs::new();
    std::fs::write(dirs.workspace.join("notes.txt"), "kept as it was\n").unwrap();
    let write = json!({"path": "notes.txt", "content": "rewritten by the agent\n"});
    let (mock, _f) = model(json!([
        {"match": {"userMessage": "say hello", "hasToolResult": false}, "response": {"content": "Hello from Bridle"}},
        {"match": {"userMessage": "rewrite the notes", "hasToolResult": false},
         "response": {"toolCalls": [{"id": "w1", "name": "write_file", "arguments": write}]}},
        {"match": {"userMessage": "rewrite the notes", "hasToolResult": true}, "response": {"content": "over"}}
    ]))
    .await;
    write_config(&dirs, &mock, "ask");

    let hello = acpx(&dirs, "--approve-all", "say hello").await;
    let text: String =
        updates(&hello, "agent_message_chunk").iter().map(|u| u["content"]["text"].as_str().unwrap()).collect();
    assert_eq!(text, "Hello from Bridle");
    assert_eq!(stop_reason(&hello), Some("end_turn"));

    // Rejected: the permission request names the call and offers the four answers; nothing is
    // written and the model is told.
    let rejected = acpx(&dirs, "--deny-all", "rewrite the notes").await;
    let asked: Vec<&Value> = rejected.iter().filter(|m| m["method"] == "session/request_permission").collect();
    assert_eq!(asked.len(), 1, "{rejected:?}");
    let kinds: Vec<&str> =
        asked[0]["params"]["options"].as_array().unwrap().iter().map(|o| o["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["allow_once", "allow_always", "reject_once", "reject_always"]);
    assert_eq!(asked[0]["params"]["toolCall"]["kind"], "edit");
    assert_eq!(std::fs::read(dirs.workspace.join("notes.txt")).unwrap(), b"kept as it was\n");
    let ended = updates(&rejected, "tool_call_update");
    assert_eq!(ended.last().unwrap()["status"], "failed", "{ended:?}");
    assert_eq!(stop_reason(&rejected), Some("end_turn"));
    let told = mock.journal().await.last().unwrap().to_string();
    assert!(told.contains("rejected in the editor"), "the model was not told: {told}");

    // Approved: written, and the diff of the whole file arrives in the tool call's content.
    let approved = acpx(&dirs, "--approve-all", "rewrite the notes").await;
    assert_eq!(std::fs::read_to_string(dirs.workspace.join("notes.txt")).unwrap(), "rewritten by the agent\n");
    let ended = updates(&approved, "tool_call_update");
    let last = ended.last().unwrap();
    assert_eq!(last["status"], "completed", "{last}");
    let diff = last["content"].as_array().unwrap().iter().find(|c| c["type"] == "diff").expect("a diff in the content");
    assert_eq!(Path::new(diff["path"].as_str().unwrap()), dirs.workspace.canonicalize().unwrap().join("notes.txt"));
    assert_eq!(
        (diff["oldText"].as_str(), diff["newText"].as_str()),
        (Some("kept as it was\n"), Some("rewritten by the agent\n"))
    );
    assert_eq!(stop_reason(&approved), Some("end_turn"));

    // The audit names the front end and who answered.
    let started = audit_rows(&dirs, "session_started").await;
    assert!(started.iter().all(|r| r["payload"]["frontEnd"] == "acp"), "{started:?}");
    let resolved = audit_rows(&dirs, "approval_resolved").await;
    let answers: Vec<(&str, &str)> =
        resolved.iter().map(|r| (r["decision"].as_str().unwrap_or(""), r["source"].as_str().unwrap_or(""))).collect();
    assert!(answers.contains(&("deny", "user")) && answers.contains(&("allow", "user")), "{answers:?}");
}

/// A raw JSON-RPC client of a `bridle acp` child: each request answered by the message with its id
/// (what comes between, notifications and the agent's own requests, is passed over).
pub(super) struct RawClient {
    _child: tokio::process::Child,
    input: tokio::process::ChildStdin,
    lines: tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>,
}

impl RawClient {
    pub(super) fn of(mut child: tokio::process::Child) -> RawClient {
        use tokio::io::AsyncBufReadExt;
        let input = child.stdin.take().unwrap();
        let lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
        RawClient { _child: child, input, lines }
    }

    /// Sends `request` and waits (at most 60 s) for its answer.
    pub(super) async fn ask(&mut self, request: Value) -> Value {
        use tokio::io::AsyncWriteExt;
        self.input.write_all(format!("{request}\n").as_bytes()).await.unwrap();
        self.input.flush().await.unwrap();
        loop {
            let line = tokio::time::timeout(std::time::Duration::from_secs(60), self.lines.next_line());
            let line = line.await.unwrap().unwrap().unwrap();
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == request["id"] {
                return message;
            }
        }
    }
}

/// `bridle acp` on `data` with `env` too, its stdin and stdout piped for a raw JSON-RPC client.
pub(super) fn raw_acp(data: &Path, env: &[(&str, &std::ffi::OsStr)]) -> tokio::process::Child {
    tokio::process::Command::new(env!("CARGO_BIN_EXE_bridle"))
        .args(["acp", "--data-dir"])
        .arg(data)
        .env("OPENAI_API_KEY", "sk-test")
        .env_remove("DBUS_SESSION_BUS_ADDRESS")
        .envs(env.iter().copied())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap()
}

/// Lines a client should never send get JSON-RPC errors; the connection answers what follows, and
/// closing stdin ends `bridle acp` cleanly. Stdout holds nothing but protocol messages. A frame
/// that is not UTF-8, and one of 64 MiB, are refused with a parse error, the big one without
/// being held (Bridle's memory is measured after it).
#[tokio::test]
async fn malformed_input_gets_errors_and_the_connection_goes_on() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let dirs = Dirs::new();
    let (mock, _f) = model(json!([{"match": {"userMessage": "hi"}, "response": {"content": "hello"}}])).await;
    write_config(&dirs, &mock, "ask");
    let mut child = raw_acp(dirs.data.as_path(), &[]);
    let mut input = child.stdin.take().unwrap();
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let mut next = async || -> Value {
        let line = tokio::time::timeout(std::time::Duration::from_secs(10), lines.next_line())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("stdout carried a line that is not JSON ({e}): {line}"))
    };
    let sent = [
        "this is not json".to_string(),
        json!({"jsonrpc": "2.0", "id": 1, "method": "session/prompt", "params": {"sessionId": "nope", "prompt": [{"type": "text", "text": "hi"}]}}).to_string(),
        json!({"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {"protocolVersion": 1}}).to_string(),
        json!({"jsonrpc": "2.0", "id": 3, "method": "no/such/method", "params": {}}).to_string(),
        json!({"jsonrpc": "2.0", "id": 4, "method": "session/prompt", "params": {"sessionId": "nope", "prompt": [{"type": "text", "text": "hi"}]}}).to_string(),
        json!({"jsonrpc": "2.0", "id": 5, "method": "session/new", "params": {"cwd": "/no/such/folder", "mcpServers": []}}).to_string(),
    ];
    let huge = format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"initialize","params":{{"protocolVersion":1,"pad":"{}"}}}}"#,
        "a".repeat(64 << 20)
    );
    let unknown = |id: u32| json!({"jsonrpc": "2.0", "id": id, "method": "no/such/method", "params": {}}).to_string();
    let mut sent: Vec<Vec<u8>> = sent.iter().map(|l| l.clone().into_bytes()).collect();
    sent.extend([
        b"\xff\xfe{\"jsonrpc\":\"2.0\",\"id\":9}".to_vec(),
        unknown(6).into_bytes(),
        huge.into_bytes(),
        unknown(8).into_bytes(),
    ]);
    let code = |a: &Value| (a["id"].clone(), a["error"]["code"].clone());
    let mut answers = Vec::new();
    for line in &sent {
        input.write_all(line).await.unwrap();
        input.write_all(b"\n").await.unwrap();
        input.flush().await.unwrap();
        answers.push(next().await);
    }
    let rss_kib = std::fs::read_to_string(format!("/proc/{}/status", child.id().unwrap()))
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:").map(|v| v.trim().trim_end_matches(" kB").parse::<u64>().unwrap()))
        .unwrap();
    eprintln!("bridle acp after a 64 MiB frame: VmRSS {} MiB", rss_kib / 1024);
    assert!(rss_kib < 200 * 1024, "a refused frame was held: VmRSS {rss_kib} KiB");
    assert_eq!(answers[6]["error"]["code"], -32700, "not UTF-8: {:?}", answers[6]);
    assert_eq!(code(&answers[7]), (json!(6), json!(-32601)), "after a frame that is not UTF-8: {:?}", answers[7]);
    assert_eq!(
        answers[8]["error"]["code"],
        -32700,
        "64 MiB: {}",
        &answers[8].to_string()[..200.min(answers[8].to_string().len())]
    );
    assert!(
        answers[8]["error"]["data"]["line"].as_str().unwrap().contains("at most 16777216 bytes"),
        "{:?}",
        answers[8]
    );
    assert_eq!(code(&answers[9]), (json!(8), json!(-32601)), "after a 64 MiB frame: {:?}", answers[9]);
    assert_eq!(answers[0]["error"]["code"], -32700, "not JSON: {:?}", answers[0]);
    assert_eq!(code(&answers[1]), (json!(1), json!(-32600)), "before initialize: {:?}", answers[1]);
    assert_eq!((answers[2]["id"].clone(), answers[2]["result"]["protocolVersion"].clone()), (json!(2), json!(1)));
    assert_eq!(answers[2]["result"]["agentCapabilities"]["loadSession"], true);
    assert_eq!(code(&answers[3]), (json!(3), json!(-32601)), "unknown method: {:?}", answers[3]);
    assert_eq!(code(&answers[4]), (json!(4), json!(-32002)), "unknown session: {:?}", answers[4]);
    assert_eq!(answers[4]["error"]["data"]["sessionId"], "nope", "{:?}", answers[4]);
    assert_eq!(code(&answers[5]), (json!(5), json!(-32602)), "a missing folder: {:?}", answers[5]);
    drop(input);
    let status = tokio::time::timeout(std::time::Duration::from_secs(10), child.wait()).await.unwrap().unwrap();
    assert_eq!(status.code(), Some(0));
}

/// `tests/acp/sdk-client.mjs` (the official TypeScript SDK as the client) running `plan`: its
/// transcript.
async fn sdk_client(dirs: &Dirs, plan: Value) -> Value {
    let file = dirs.data.parent().unwrap().join("plan.json");
    std::fs::write(&file, plan.to_string()).unwrap();
    let out = tokio::process::Command::new("node")
        .arg(repo_root().join("tests/acp/sdk-client.mjs"))
        .arg(&file)
        .env_remove("DBUS_SESSION_BUS_ADDRESS")
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    serde_json::from_str(&stdout(&out)).unwrap_or_else(|e| panic!("no transcript ({e}): {}", stdout(&out)))
}

#[tokio::test]
async fn the_typescript_sdk_runs_a_turn_cancels_a_command_uses_its_mcp_server_and_loads_the_session() {
    let dirs = Dirs::new();
    let (mock, _f) = model(json!([
        {"match": {"userMessage": "run it", "hasToolResult": false},
         "response": {"toolCalls": [{"id": "c1", "name": "bash", "arguments": {"command": "echo ran"}}]}},
        {"match": {"userMessage": "run it", "hasToolResult": true}, "response": {"content": "it ran"}},
        {"match": {"userMessage": "wait long", "hasToolResult": false},
         "response": {"toolCalls": [{"id": "c2", "name": "bash", "arguments": {"command": "sleep 37"}}]}},
        {"match": {"userMessage": "echo it", "hasToolResult": false},
         "response": {"toolCalls": [{"id": "c3", "name": "mcp__everything__echo", "arguments": {"message": "from the client"}}]}},
        {"match": {"userMessage": "echo it", "hasToolResult": true}, "response": {"content": "echoed"}},
        {"match": {"userMessage": "write in plan", "hasToolResult": false},
         "response": {"toolCalls": [{"id": "c4", "name": "write_file", "arguments": {"path": "out.txt", "content": "x"}}]}},
        {"match": {"userMessage": "write in plan", "hasToolResult": true}, "response": {"content": "could not"}},
        {"match": {"userMessage": "leave one running", "hasToolResult": false},
         "response": {"toolCalls": [{"id": "c5", "name": "bash", "arguments": {"command": "exec sleep 38", "background": true}}]}},
        {"match": {"userMessage": "leave one running", "hasToolResult": true}, "response": {"content": "left"}},
        {"match": {"userMessage": "plan it", "hasToolResult": false},
         "response": {"toolCalls": [{"id": "c6", "name": "update_plan", "arguments": {"items": [
             {"step": "read the code", "status": "done"}, {"step": "change it", "status": "in_progress"}]}}]}},
        {"match": {"userMessage": "plan it", "hasToolResult": true}, "response": {"content": "planned"}}
    ]))
    .await;
    write_config(&dirs, &mock, "auto");
    let everything = repo_root().join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let server = json!({"name": "everything", "command": "node", "args": [everything, "stdio"], "env": []});
    let plan = json!({
        "agent": [env!("CARGO_BIN_EXE_bridle"), "acp", "--data-dir", dirs.data],
        "env": {"OPENAI_API_KEY": "sk-test"},
        "cwd": dirs.workspace,
        "permission": "allow_once",
        "steps": [
            {"op": "start"}, {"op": "initialize"},
            {"op": "new", "mcpServers": [server]},
            {"op": "prompt", "text": "run it"},
            {"op": "prompt", "text": "wait long", "cancelAfterMs": 1500},
            {"op": "prompt", "text": "echo it"},
            {"op": "prompt", "text": "leave one running"},
            {"op": "restart"},
            {"op": "load"},
            {"op": "setMode", "mode": "plan"},
            {"op": "prompt", "text": "write in plan"},
            {"op": "prompt", "text": "plan it"}
        ]
    });
    let t = sdk_client(&dirs, plan).await;
    let steps = t["steps"].as_array().unwrap();
    assert!(steps.iter().all(|s| s["ok"] == true), "{steps:?}");
    assert_eq!(t["invalid"], json!([]), "updates the SDK's schema refuses");
    assert_eq!(t["stdoutNoise"], json!([]), "stdout carried more than protocol messages");
    let stop = |i: usize| steps[i]["result"]["stopReason"].as_str().unwrap_or_default().to_string();
    let during = |i: usize, kind: &str| -> Vec<Value> {
        t["updates"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|u| u["step"] == i && u["update"]["sessionUpdate"] == kind)
            .map(|u| u["update"].clone())
            .collect()
    };

    // A turn with a tool call.
    assert_eq!(stop(3), "end_turn");
    assert_eq!(during(3, "tool_call")[0]["kind"], "execute");
    assert_eq!(during(3, "tool_call")[0]["title"], "Run `echo ran`", "the tool's own title");
    let ended = during(3, "tool_call_update");
    assert_eq!(ended.last().unwrap()["status"], "completed");
    assert!(ended.last().unwrap()["content"].to_string().contains("ran"), "{ended:?}");

    // Cancelled during a long command: answered at once, the command gone.
    assert_eq!(stop(4), "cancelled");
    let cancel_ms = t["cancelToAnswerMs"].as_f64().unwrap();
    assert!(cancel_ms < 500.0, "the cancel took {cancel_ms} ms");
    assert_eq!(running("sleep", "37").len(), 0, "the cancelled command still runs");

    // The client's MCP server, used in a turn: announced by its server and its own name, of kind
    // other (the schema's default, so not written).
    let announced = &during(5, "tool_call")[0];
    assert_eq!((announced["title"].as_str(), announced.get("kind")), (Some("everything: echo"), None), "{announced}");
    let echoed = during(5, "tool_call_update");
    assert!(echoed.last().unwrap()["content"].to_string().contains("Echo: from the client"), "{echoed:?}");

    // Closing stdin (the restart) closed the session: what it left running ended.
    assert_eq!(steps[6]["result"]["stopReason"], "end_turn");
    assert_eq!(running("sleep", "38").len(), 0, "a background process outlived the client's connection");

    // After a restart of the agent, the stored history comes back as updates.
    let replayed: Vec<String> = during(8, "user_message_chunk")
        .iter()
        .map(|u| u["content"]["text"].as_str().unwrap().to_string())
        .filter(|t| !t.starts_with("[Bridle]"))
        .collect();
    assert_eq!(replayed, ["run it", "wait long", "echo it", "leave one running"]);
    assert!(!during(8, "tool_call").is_empty() && !during(8, "agent_message_chunk").is_empty());

    // `plan` refuses the write.
    assert_eq!(during(9, "current_mode_update").len() + during(10, "current_mode_update").len(), 1);
    let refused = during(10, "tool_call_update");
    assert_eq!(refused.last().unwrap()["status"], "failed", "{refused:?}");
    assert!(!dirs.workspace.join("out.txt").exists());

    // The model's plan.
    let plan = during(11, "plan");
    let entries: Vec<(&str, &str)> = plan[0]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["content"].as_str().unwrap(), e["status"].as_str().unwrap()))
        .collect();
    assert_eq!(entries, [("read the code", "completed"), ("change it", "in_progress")]);
    assert_eq!(t["exitCode"], 0);
}

/// DESIGN §15: in `review`, what a command changed is offered to the editor as keep or discard,
/// with its diff, through the official SDK; keep lands it, discard leaves the file as it was.
#[tokio::test]
async fn the_typescript_sdk_is_offered_a_commands_changes_to_keep_or_discard() {
    for (answer, kept) in [("allow_once", true), ("reject_once", false)] {
        let dirs = Dirs::new();
        std::fs::write(dirs.workspace.join("f.txt"), "old line\n").unwrap();
        let (mock, _f) = model(json!([
            {"match": {"userMessage": "fix it", "hasToolResult": false},
             "response": {"toolCalls": [{"id": "s1", "name": "bash", "arguments": {"command": "sed -i 's/old/new/' f.txt"}}]}},
            {"match": {"userMessage": "fix it", "hasToolResult": true}, "response": {"content": "fixed"}}
        ]))
        .await;
        write_config(&dirs, &mock, "review");
        let plan = json!({
            "agent": [env!("CARGO_BIN_EXE_bridle"), "acp", "--data-dir", dirs.data],
            "env": {"OPENAI_API_KEY": "sk-test"},
            "cwd": dirs.workspace,
            "permission": answer,
            "steps": [{"op": "start"}, {"op": "initialize"}, {"op": "new"}, {"op": "prompt", "text": "fix it"}]
        });
        let t = sdk_client(&dirs, plan).await;
        assert!(t["steps"].as_array().unwrap().iter().all(|s| s["ok"] == true), "{t}");
        assert_eq!(t["invalid"], json!([]), "messages the SDK's schema refuses");
        let asked = t["permissions"].as_array().unwrap();
        assert_eq!(asked.len(), 1, "{t}");
        let call = &asked[0]["toolCall"];
        assert_eq!(call["kind"], "edit", "{call}");
        assert!(call["title"].as_str().unwrap().starts_with("Keep what `sed -i"), "{call}");
        assert!(call["content"].to_string().contains("+new line"), "{call}");
        let options: Vec<&str> =
            asked[0]["options"].as_array().unwrap().iter().map(|o| o["optionId"].as_str().unwrap()).collect();
        assert_eq!(options, ["allow_once", "reject_once"]);
        let now = std::fs::read_to_string(dirs.workspace.join("f.txt")).unwrap();
        assert_eq!(now, if kept { "new line\n" } else { "old line\n" });
    }
}

/// An ACP workspace is a project folder: `session/new` refuses `/`, system folders, the home
/// folder itself and the data dir's folders with invalid params naming why, and makes nothing;
/// `session/load` answers only in the session's own workspace.
#[tokio::test]
async fn a_workspace_is_a_project_folder_and_a_session_loads_only_in_its_own() {
    let dirs = Dirs::new();
    let (mock, _f) = model(json!([{"match": {"userMessage": "hi"}, "response": {"content": "hello"}}])).await;
    write_config(&dirs, &mock, "ask");
    let home = dirs.data.parent().unwrap().join("home");
    let other = home.join("other-project");
    std::fs::create_dir_all(&other).unwrap();
    let mut client = RawClient::of(raw_acp(dirs.data.as_path(), &[("HOME", home.as_os_str())]));
    let mut ask = async |request: Value| client.ask(request).await;
    let answer =
        ask(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}})).await;
    assert_eq!(answer["result"]["protocolVersion"], 1, "{answer}");

    let refused: Vec<(std::path::PathBuf, &str)> = vec![
        ("/".into(), "system folder"),
        ("/etc".into(), "system folder"),
        ("/proc".into(), "system folder"),
        ("/root".into(), "system folder"),
        (home.clone(), "home folder"),
        (dirs.data.clone(), "data dir"),
        (dirs.data.parent().unwrap().to_path_buf(), "data dir"),
    ];
    for (id, (folder, why)) in refused.iter().enumerate() {
        let request = json!({"jsonrpc": "2.0", "id": id + 1, "method": "session/new",
                             "params": {"cwd": folder, "mcpServers": []}});
        let answer = ask(request).await;
        assert_eq!(answer["error"]["code"], -32602, "{}: {answer}", folder.display());
        assert!(answer["error"]["data"].to_string().contains(why), "{}: {answer}", folder.display());
    }
    let sessions = json_lines(&bridle(&dirs, &["sessions", "list", "--json"]).await);
    assert!(sessions.is_empty(), "a refused folder made a session: {sessions:?}");

    // A session made in its workspace loads there, and is refused from another folder.
    let new = json!({"jsonrpc": "2.0", "id": 20, "method": "session/new",
                     "params": {"cwd": dirs.workspace, "mcpServers": []}});
    let answer = ask(new).await;
    let id = answer["result"]["sessionId"].as_str().unwrap_or_else(|| panic!("{answer}")).to_string();
    let load = |n: u32, cwd: &Path| {
        json!({"jsonrpc": "2.0", "id": n, "method": "session/load",
               "params": {"sessionId": id, "cwd": cwd, "mcpServers": []}})
    };
    let answer = ask(load(21, &other)).await;
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert!(answer["error"]["data"].to_string().contains("belongs to the workspace"), "{answer}");
    let answer = ask(load(22, &dirs.workspace)).await;
    assert!(answer.get("error").is_none(), "{answer}");
}
