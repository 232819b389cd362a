//! MCP servers as a user configures them, against a real server from npm
//! (`@modelcontextprotocol/server-everything` over stdio), through `bridle mcp list`,
//! `bridle tool mcp__...` and a `bridle run` against aimock.

use serde_json::{json, Value};

use super::aimock::{repo_root, Aimock};
use super::bridle::*;

fn everything() -> String {
    let path = repo_root().join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(path.exists(), "server-everything is not installed at {}: run `npm install`", path.display());
    path.display().to_string()
}

/// `[mcp.servers]` with the real server, one that never answers `initialize`, one disabled.
fn config(dirs: &Dirs, extra: &str) {
    std::fs::create_dir_all(&dirs.data).unwrap();
    let body = format!(
        "mode = \"auto\"\n{extra}\n[mcp.servers.everything]\ncommand = \"node\"\nargs = [\"{}\", \"stdio\"]\n\
         [mcp.servers.silent]\ncommand = \"sleep\"\nargs = [\"30\"]\nstartup_timeout_secs = 1\n\
         [mcp.servers.off]\ncommand = \"true\"\nenabled = false\n",
        everything()
    );
    std::fs::write(dirs.data.join("config.toml"), body).unwrap();
}

/// Processes whose working folder is `dir` (the servers a test started there).
fn processes_in(dir: &std::path::Path) -> Vec<String> {
    let dir = dir.canonicalize().unwrap();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let pid = entry.file_name().to_string_lossy().into_owned();
        if !pid.chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        // A zombie (killed, not yet reaped by init) is gone for good: skip it.
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let zombie = stat.rsplit(") ").next().is_some_and(|rest| rest.starts_with('Z'));
        if !zombie && std::fs::read_link(entry.path().join("cwd")).ok().as_deref() == Some(dir.as_path()) {
            found.push(std::fs::read_to_string(entry.path().join("cmdline")).unwrap_or_default().replace('\0', " "));
        }
    }
    found
}

#[tokio::test]
async fn servers_are_listed_with_their_status_and_a_silent_one_holds_up_nobody() {
    let dirs = Dirs::new();
    config(&dirs, "");
    let out = bridle(&dirs, &["mcp", "list", "--json"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let list: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let server = |name: &str| list["servers"].as_array().unwrap().iter().find(|s| s["name"] == name).unwrap().clone();
    let ready = server("everything");
    assert_eq!(ready["status"], "ready");
    let tools: Vec<&str> = ready["tools"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
    assert!(tools.contains(&"mcp__everything__echo") && tools.contains(&"mcp__everything__get-sum"), "{tools:?}");
    assert!(tools.iter().all(|t| t.starts_with("mcp__everything__") && t.len() <= 64));
    let silent = server("silent");
    assert_eq!(silent["status"], "failed");
    assert!(silent["error"].as_str().unwrap().contains("did not answer `initialize` within 1 s"), "{silent}");
    assert_eq!(server("off")["status"], "disabled");
    assert!(processes_in(&dirs.workspace).is_empty(), "no server left: {:?}", processes_in(&dirs.workspace));
}

#[tokio::test]
async fn an_mcp_tool_runs_through_the_whole_pipeline_in_bridle_tool() {
    let dirs = Dirs::new();
    config(&dirs, "");
    let out = bridle(&dirs, &["tool", "mcp__everything__get-sum", "--args", r#"{"a": 2, "b": 40}"#]).await;
    assert_eq!(out.status.code(), Some(0), "{}\n{}", stdout(&out), stderr(&out));
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let output = report["result"]["output"].as_str().unwrap();
    assert!(output.contains("The sum of 2 and 40 is 42."), "{output}");
    assert!(output.starts_with("[The following came from the MCP server `everything`"), "marked untrusted: {output}");
    // Invalid arguments are refused against the server's own schema before anything is sent.
    let bad = bridle(&dirs, &["tool", "mcp__everything__get-sum", "--args", r#"{"a": "two"}"#]).await;
    assert_eq!(bad.status.code(), Some(1), "{}", stdout(&bad));
    // In ask mode an MCP call asks (the server's own read-only hints are not trusted).
    let ask =
        bridle(&dirs, &["tool", "mcp__everything__echo", "--args", r#"{"message": "hi"}"#, "--mode", "ask"]).await;
    assert_eq!(ask.status.code(), Some(3), "{}", stdout(&ask));
    let audit = bridle(&dirs, &["audit", "--tool", "mcp__everything__get-sum", "--json"]).await;
    assert!(stdout(&audit).contains("tool_completed"), "{}", stdout(&audit));
    assert!(processes_in(&dirs.workspace).is_empty(), "no server left: {:?}", processes_in(&dirs.workspace));
}

#[tokio::test]
async fn the_model_calls_an_mcp_tool_in_bridle_run_and_reads_its_answer() {
    let fixtures = tempfile::tempdir().unwrap();
    let file = json!({"fixtures": [
        {"match": {"userMessage": "echo through mcp", "hasToolResult": false},
         "response": {"toolCalls": [{"id": "call_1", "name": "mcp__everything__echo", "arguments": {"message": "from the model"}}]}},
        {"match": {"userMessage": "echo through mcp", "hasToolResult": true}, "response": {"content": "Echoed."}}
    ]});
    std::fs::write(fixtures.path().join("f.json"), file.to_string()).unwrap();
    let mock = Aimock::start_with(fixtures.path()).await;
    let dirs = Dirs::new();
    config(&dirs, "");
    let provider = format!("[provider]\nkind = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"m\"\n", mock.url);
    let path = dirs.data.join("config.toml");
    let body = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, format!("{body}{provider}")).unwrap();

    let out = bridle(&dirs, &["run", "echo through mcp", "--json"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let journal = mock.journal().await;
    let tools: Vec<&str> =
        journal[0]["tools"].as_array().unwrap().iter().map(|t| t["function"]["name"].as_str().unwrap()).collect();
    assert!(tools.contains(&"mcp__everything__echo") && tools.contains(&"read_file"), "{tools:?}");
    let last = journal.last().unwrap();
    let result = last["messages"].as_array().unwrap().iter().rev().find(|m| m["role"] == "tool").unwrap();
    assert!(result["content"].as_str().unwrap().contains("Echo: from the model"), "{result}");
    assert!(processes_in(&dirs.workspace).is_empty(), "no server left after the run");
}
