//! The agent's brief, its plan and the user's hooks, through `bridle run` and `bridle tool` as a
//! user sets them up: an `AGENTS.md` in the project and beside the config, a git repository,
//! hooks in `config.toml`, and a real aimock whose journal shows what the model was sent.

use serde_json::{json, Value};

use super::aimock::Aimock;
use super::bridle::*;

/// A model that answers `prompt` by calling `tool` with `args`, then says `done`.
async fn model(prompt: &str, tool: &str, args: Value, done: &str) -> (Aimock, tempfile::TempDir) {
    let fixtures = tempfile::tempdir().unwrap();
    let file = json!({"fixtures": [
        {"match": {"userMessage": prompt, "hasToolResult": false},
         "response": {"toolCalls": [{"id": "call_1", "name": tool, "arguments": args}]}},
        {"match": {"userMessage": prompt, "hasToolResult": true}, "response": {"content": done}}
    ]});
    std::fs::write(fixtures.path().join("f.json"), file.to_string()).unwrap();
    (Aimock::start_with(fixtures.path()).await, fixtures)
}

fn config(dirs: &Dirs, mock: &Aimock, body: &str) {
    std::fs::create_dir_all(&dirs.data).unwrap();
    let provider = format!("[provider]\nkind = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"mock-model\"\n", mock.url);
    std::fs::write(dirs.data.join("config.toml"), format!("{body}\n{provider}")).unwrap();
}

fn system_message(body: &Value) -> String {
    body["messages"][0]["content"].as_str().unwrap_or_default().to_string()
}

fn tool_result(body: &Value) -> String {
    let messages = body["messages"].as_array().unwrap();
    messages.iter().rev().find(|m| m["role"] == "tool").map(|m| m["content"].as_str().unwrap().to_string()).unwrap()
}

fn git(dir: &std::path::Path, args: &[&str]) {
    let ok = std::process::Command::new("git").args(args).current_dir(dir).status().unwrap();
    assert!(ok.success(), "git {args:?}");
}

#[tokio::test]
async fn the_model_is_told_where_it_works_and_the_projects_rules_and_keeps_a_plan_across_a_restart() {
    let plan = json!({"items": [
        {"step": "read the parser", "status": "done"},
        {"step": "fix the offsets", "status": "in_progress"},
        {"step": "run the tests", "status": "pending"}
    ]});
    let (mock, _f) = model("plan the fix", "update_plan", plan, "Planned.").await;
    let dirs = Dirs::new();
    config(&dirs, &mock, "mode = \"ask\"");
    std::fs::write(dirs.data.join("AGENTS.md"), "Answer in British English.\n").unwrap();
    std::fs::write(dirs.workspace.join("AGENTS.md"), "Run `cargo test -p atlas` before saying done.\n").unwrap();
    git(&dirs.workspace, &["init", "-q", "-b", "feature/offsets"]);
    std::fs::write(dirs.workspace.join("notes.txt"), "x").unwrap();

    let out = bridle(&dirs, &["run", "plan the fix", "--json"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let first = &mock.journal().await[0];
    let system = system_message(first);
    let workspace = dirs.workspace.canonicalize().unwrap().display().to_string();
    let today = chrono::Utc::now().format("%Y-%m-%d").to_string();
    for expected in [
        "Run `cargo test -p atlas` before saying done.",
        "Answer in British English.",
        &format!("## {workspace}/AGENTS.md"),
        &format!("- Workspace: {workspace}"),
        &format!("- Today's date: {today} (UTC)"),
        "- Git: branch feature/offsets, 2 changed or untracked files",
        &format!("- Operating system: {}", std::env::consts::OS),
        "`edit_file` replaces `old_text` that must occur exactly once",
    ] {
        assert!(system.contains(expected), "the system message lacks {expected:?}:\n{system}");
    }
    let tools: Vec<&str> =
        first["tools"].as_array().unwrap().iter().map(|t| t["function"]["name"].as_str().unwrap()).collect();
    assert!(tools.contains(&"update_plan"), "{tools:?}");

    // update_plan is a read-only tool: it ran without asking, in ask mode, and was announced.
    let events = json_lines(&out);
    let planned: Vec<&Value> = events.iter().filter(|e| e["type"] == "planUpdated").collect();
    assert_eq!(planned.len(), 1, "{events:?}");
    assert_eq!(planned[0]["items"][1], json!({"step": "fix the offsets", "status": "in_progress"}));

    // The plan is stored with the session: a later process reads it back.
    let session = events.iter().find_map(|e| e["sessionId"].as_str()).unwrap().to_string();
    let show = bridle(&dirs, &["sessions", "show", &session, "--json"]).await;
    let snapshot: Value = serde_json::from_str(&stdout(&show)).unwrap();
    assert_eq!(snapshot["plan"].as_array().unwrap().len(), 3, "{snapshot}");
    assert_eq!(snapshot["plan"][0]["status"], "done");
}

#[tokio::test]
async fn a_plan_with_two_steps_in_progress_is_refused_with_a_reason() {
    let dirs = Dirs::new();
    let args = json!({"items": [{"step": "a", "status": "in_progress"}, {"step": "b", "status": "in_progress"}]});
    let out = bridle(&dirs, &["tool", "update_plan", "--args", &args.to_string()]).await;
    assert_eq!(out.status.code(), Some(1));
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert!(report["result"]["output"].as_str().unwrap().contains("at most one may be"), "{report}");
}

/// A hook script where a user keeps one: outside the data dir (masked in the sandbox hooks run
/// in) and outside /tmp (private there; the build's own temp folder may be under it too).
fn hook_script(dirs: &Dirs, name: &str, body: &str) -> String {
    std::fs::create_dir_all(&dirs.data).unwrap();
    let unique = dirs.workspace.parent().and_then(|p| p.file_name()).unwrap().to_string_lossy().into_owned();
    let folder = std::path::Path::new("/var/tmp/bridle-test-hooks").join(unique);
    std::fs::create_dir_all(&folder).unwrap();
    let path = folder.join(name);
    std::fs::write(&path, format!("#!/usr/bin/env bash\n{body}\n")).unwrap();
    path.display().to_string()
}

/// The audit rows of hook runs (source `hook`, naming the hook); the call's verdict row that
/// a hook changed carries source `hook` too, without `payload.hook`.
fn audit_hook_rows(out: &std::process::Output) -> Vec<Value> {
    stdout(out)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|r| r["source"] == "hook" && r["payload"]["hook"].is_string())
        .collect()
}

#[tokio::test]
async fn a_pre_hook_that_exits_2_blocks_the_call_and_the_model_reads_its_reason() {
    let (mock, _f) = model("clean up", "bash", json!({"command": "touch cleaned.txt"}), "Cleaned.").await;
    let dirs = Dirs::new();
    let seen = dirs.workspace.join(".hook-input.json");
    let script = hook_script(
        &dirs,
        "no-touch.sh",
        &format!("cat > {}\necho 'touching files is off today' >&2\nexit 2", seen.display()),
    );
    config(
        &dirs,
        &mock,
        &format!("mode = \"auto\"\n[[hooks.pre_tool_use]]\nmatcher = \"bash\"\ncommand = \"bash {script}\"\n"),
    );

    let out = bridle(&dirs, &["run", "clean up", "--json"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!dirs.workspace.join("cleaned.txt").exists(), "the blocked command did not run");
    let journal = mock.journal().await;
    let told = tool_result(journal.last().unwrap());
    assert!(told.contains("touching files is off today"), "{told}");
    let end = json_lines(&out).into_iter().find(|e| e["type"] == "toolCallEnd").unwrap();
    assert_eq!(end["status"], "denied");
    let input: Value = serde_json::from_str(&std::fs::read_to_string(&seen).unwrap()).unwrap();
    assert_eq!(
        (input["tool_name"].as_str(), input["tool_input"]["command"].as_str()),
        (Some("bash"), Some("touch cleaned.txt"))
    );

    let audit = bridle(&dirs, &["audit", "--json"]).await;
    let rows = audit_hook_rows(&audit);
    assert_eq!(rows.len(), 1, "{}", stdout(&audit));
    assert_eq!((rows[0]["decision"].as_str(), rows[0]["status"].as_str()), (Some("deny"), Some("decided")));
}

#[tokio::test]
async fn a_pre_hook_that_exits_0_lets_the_call_run_and_a_post_hook_gets_the_response() {
    let (mock, _f) =
        model("clean up", "bash", json!({"command": "echo swept > cleaned.txt && echo done-sweeping"}), "Cleaned.")
            .await;
    let dirs = Dirs::new();
    // The hook runs in the sandbox: it writes where a command may, in the workspace.
    let seen = dirs.workspace.join(".post.json");
    let pre = hook_script(&dirs, "pre.sh", "cat >/dev/null; exit 0");
    let post = hook_script(&dirs, "post.sh", &format!("cat > {}", seen.display()));
    config(
        &dirs,
        &mock,
        &format!(
            "mode = \"auto\"\n[[hooks.pre_tool_use]]\nmatcher = \"bash|edit_file\"\ncommand = \"bash {pre}\"\n\
             [[hooks.post_tool_use]]\nmatcher = \"*\"\ncommand = \"bash {post}\"\n"
        ),
    );
    let out = bridle(&dirs, &["run", "clean up", "--json"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(dirs.workspace.join("cleaned.txt")).unwrap(), "swept\n");
    let got: Value = serde_json::from_str(&std::fs::read_to_string(&seen).unwrap()).unwrap();
    assert_eq!(got["hook_event_name"], "PostToolUse");
    assert!(got["tool_response"]["output"].as_str().unwrap().contains("done-sweeping"), "{got}");
    let audit = bridle(&dirs, &["audit", "--json"]).await;
    let statuses: Vec<_> = audit_hook_rows(&audit).iter().map(|r| r["status"].as_str().unwrap().to_string()).collect();
    assert_eq!(statuses, ["continue", "continue"], "{}", stdout(&audit));
}

#[tokio::test]
async fn a_hook_that_times_out_makes_the_call_ask_in_bridle_tool_and_in_bridle_run() {
    let (mock, _f) = model("clean up", "bash", json!({"command": "touch cleaned.txt"}), "Left alone.").await;
    let dirs = Dirs::new();
    let slow = hook_script(&dirs, "slow.sh", "sleep 30");
    config(
        &dirs,
        &mock,
        &format!("mode = \"auto\"\n[[hooks.pre_tool_use]]\ncommand = \"bash {slow}\"\ntimeout_secs = 1\n"),
    );

    // `bridle tool`: the call would be allowed in auto mode, but the hook failed closed.
    let args = json!({"command": "touch cleaned.txt"}).to_string();
    let tool = bridle(&dirs, &["tool", "bash", "--args", &args]).await;
    assert_eq!(tool.status.code(), Some(3), "{}", stdout(&tool));
    let report: Value = serde_json::from_str(&stdout(&tool)).unwrap();
    assert_eq!((report["decision"].as_str(), report["source"].as_str()), (Some("ask"), Some("hook")));
    assert!(report["findings"][0]["message"].as_str().unwrap().contains("did not finish within 1 s"));

    // `bridle run` with nobody to answer: the asked call is denied, nothing ran.
    let out = bridle(&dirs, &["run", "clean up", "--json", "--on-ask", "deny"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!dirs.workspace.join("cleaned.txt").exists());
    let audit = bridle(&dirs, &["audit", "--json"]).await;
    let failed = audit_hook_rows(&audit).iter().filter(|r| r["status"] == "failed").count();
    assert_eq!(failed, 2, "one per front end: {}", stdout(&audit));
}

#[tokio::test]
async fn bridle_never_runs_outside_the_sandbox_what_a_command_planted_in_the_workspace() {
    let (mock, _f) = model("look around", "bash", json!({"command": "echo hi"}), "Looked.").await;
    // Outside the workspace and outside /tmp (the sandbox's own /tmp is private).
    let outside = tempfile::tempdir_in("/var/tmp").unwrap();
    let canary = outside.path().join("ran");
    let dirs = Dirs::new();
    let ws = &dirs.workspace;
    git(ws, &["init", "-q", "-b", "trunk"]);
    // What a command could have written: a git dir of its own whose config names a program, and
    // `.git/commondir` pointing at it (git reads the config from there); a `json` package that
    // `python3 -m json.tool` would import from the workspace; a module an MCP server would run.
    let planted = format!("open({:?}, 'a').write('ran\\n')\n", canary.display().to_string());
    let copy = std::process::Command::new("cp").arg("-r").arg(ws.join(".git")).arg(ws.join("planted-git")).status();
    assert!(copy.unwrap().success());
    let fsmonitor = format!("echo pwned >> {}; false", canary.display());
    git(ws, &["config", "--file", "planted-git/config", "core.fsmonitor", &fsmonitor]);
    std::fs::write(ws.join(".git/commondir"), "../planted-git\n").unwrap();
    std::fs::create_dir_all(ws.join("json")).unwrap();
    std::fs::write(ws.join("json/__init__.py"), &planted).unwrap();
    std::fs::write(ws.join("json/tool.py"), &planted).unwrap();
    std::fs::write(ws.join("planted_server.py"), &planted).unwrap();
    config(
        &dirs,
        &mock,
        "mode = \"auto\"\n\
         [[hooks.post_tool_use]]\nmatcher = \"bash\"\ncommand = \"python3 -m json.tool\"\n\
         [mcp.servers.planted]\ncommand = \"python3\"\nargs = [\"-m\", \"planted_server\"]\n",
    );

    // A session opens (the brief reads the repository), the model runs a command (the hook
    // runs), the MCP server starts.
    let out = bridle(&dirs, &["run", "look around", "--json"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let servers = bridle(&dirs, &["mcp", "list", "--json"]).await;
    assert!(stdout(&servers).contains("failed"), "the planted module was found: {}", stdout(&servers));
    assert!(!canary.exists(), "planted code ran outside the sandbox: {:?}", std::fs::read_to_string(&canary));

    // The plants are live: run by hand, unsandboxed, in the workspace, they do run.
    let status = std::process::Command::new("git").args(["status", "--short"]).current_dir(ws).output().unwrap();
    assert!(canary.exists(), "git status did not run the planted fsmonitor: {status:?}");
}
