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
         [mcp.servers.silent]\ncommand = \"bash\"\n\
         args = [\"-c\", \"echo \\\"$PWD $BRIDLE_WORKSPACE\\\" > started-here.txt; exec sleep 30\"]\n\
         startup_timeout_secs = 1\n\
         [mcp.servers.off]\ncommand = \"true\"\nenabled = false\n",
        everything()
    );
    std::fs::write(dirs.data.join("config.toml"), body).unwrap();
}

/// Processes whose working folder is `dir` (stdio servers start in `<data-dir>/mcp`).
fn processes_in(dir: &std::path::Path) -> Vec<String> {
    // Not made yet: nothing can run there.
    let Ok(dir) = dir.canonicalize() else { return Vec::new() };
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
    // Stdio servers start in the data dir, not the workspace, and are told where it is.
    let mcp_dir = dirs.data.join("mcp").canonicalize().unwrap();
    let started = std::fs::read_to_string(mcp_dir.join("started-here.txt")).unwrap();
    assert_eq!(started, format!("{} {}\n", mcp_dir.display(), dirs.workspace.canonicalize().unwrap().display()));
    assert!(
        processes_in(&dirs.data.join("mcp")).is_empty(),
        "no server left: {:?}",
        processes_in(&dirs.data.join("mcp"))
    );
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
    // A large answer follows the large-output rule: head and tail shown, the whole saved.
    let long: String = (0..8000).map(|i| format!("line{i:05} ")).collect();
    let big = bridle(&dirs, &["tool", "mcp__everything__echo", "--args", &json!({"message": long}).to_string()]).await;
    assert_eq!(big.status.code(), Some(0), "{}", stderr(&big));
    let report: Value = serde_json::from_str(&stdout(&big)).unwrap();
    let shown = report["result"]["output"].as_str().unwrap();
    assert!(shown.contains("characters omitted") && shown.len() < 40_000, "{} chars", shown.len());
    let saved = shown.rsplit("saved in ").next().unwrap().split(';').next().unwrap();
    let whole = std::fs::read_to_string(saved).unwrap();
    assert!(whole.contains("line00000") && whole.contains("line07999") && whole.contains("line04000"));
    let audit = bridle(&dirs, &["audit", "--tool", "mcp__everything__get-sum", "--json"]).await;
    assert!(stdout(&audit).contains("tool_completed"), "{}", stdout(&audit));
    assert!(
        processes_in(&dirs.data.join("mcp")).is_empty(),
        "no server left: {:?}",
        processes_in(&dirs.data.join("mcp"))
    );
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
    assert!(processes_in(&dirs.data.join("mcp")).is_empty(), "no server left after the run");
}

/// A free loopback port (bound, read, released).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

#[tokio::test]
async fn a_streamable_http_server_is_listed_and_called() {
    let port = free_port();
    let mut server = tokio::process::Command::new("node")
        .args([everything().as_str(), "streamableHttp"])
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    // Wait until it listens (a guard against a slow start, not a timing assertion).
    for _ in 0..200 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let dirs = Dirs::new();
    std::fs::create_dir_all(&dirs.data).unwrap();
    let body = format!(
        "mode = \"auto\"\n[mcp.servers.web]\nurl = \"http://127.0.0.1:{port}/mcp\"\n\
         headers = {{ Authorization = \"Bearer test-token\" }}\n\
         [mcp.servers.badheader]\nurl = \"http://127.0.0.1:{port}/mcp\"\nheaders = {{ \"bad header\" = \"x\" }}\n"
    );
    std::fs::write(dirs.data.join("config.toml"), body).unwrap();
    let list = bridle(&dirs, &["mcp", "list", "--json"]).await;
    let list: Value = serde_json::from_str(&stdout(&list)).unwrap();
    let listed = |name: &str| list["servers"].as_array().unwrap().iter().find(|s| s["name"] == name).unwrap().clone();
    assert_eq!(listed("web")["status"], "ready", "{list}");
    let bad = listed("badheader");
    assert_eq!(bad["status"], "failed");
    assert!(bad["error"].as_str().unwrap().contains("`bad header` is not a valid header name"), "{bad}");
    let out = bridle(&dirs, &["tool", "mcp__web__get-sum", "--args", r#"{"a": 2, "b": 40}"#]).await;
    assert_eq!(out.status.code(), Some(0), "{}\n{}", stdout(&out), stderr(&out));
    assert!(stdout(&out).contains("The sum of 2 and 40 is 42."), "{}", stdout(&out));
    server.kill().await.unwrap();
}

#[tokio::test]
async fn a_server_killed_mid_session_fails_its_calls_clearly_and_built_ins_go_on() {
    // The model asks for an MCP echo and the time at once; a pre-tool hook kills the server
    // (found by a marker in its process name) just before the echo runs.
    let fixtures = tempfile::tempdir().unwrap();
    let file = json!({"fixtures": [
        {"match": {"userMessage": "echo and time", "hasToolResult": false},
         "response": {"toolCalls": [
             {"id": "call_echo", "name": "mcp__everything__echo", "arguments": {"message": "lost"}},
             {"id": "call_time", "name": "get_current_time", "arguments": {"timezone": "UTC"}}]}},
        {"match": {"userMessage": "echo and time", "hasToolResult": true}, "response": {"content": "Half done."}}
    ]});
    std::fs::write(fixtures.path().join("f.json"), file.to_string()).unwrap();
    let mock = Aimock::start_with(fixtures.path()).await;
    let dirs = Dirs::new();
    std::fs::create_dir_all(&dirs.data).unwrap();
    let marker = format!("bridle-mcp-victim-{}", std::process::id());
    // `[m]` keeps pkill from matching the hook's own command line.
    let pattern = marker.replacen("victim", "victi[m]", 1);
    let body = format!(
        "mode = \"auto\"\n[provider]\nkind = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"m\"\n\
         [mcp.servers.everything]\ncommand = \"bash\"\nargs = [\"-c\", \"exec -a {marker} node {} stdio\"]\n\
         [[hooks.pre_tool_use]]\nmatcher = \"mcp__everything__echo\"\ncommand = \"pkill -KILL -f '{pattern}'; sleep 0.3\"\n\
         sandbox = false\n",
        mock.url,
        everything()
    );
    std::fs::write(dirs.data.join("config.toml"), body).unwrap();
    let out = bridle(&dirs, &["run", "echo and time", "--json"]).await;
    assert_eq!(out.status.code(), Some(0), "the session goes on: {}", stderr(&out));
    let ends: Vec<Value> = json_lines(&out).into_iter().filter(|e| e["type"] == "toolCallEnd").collect();
    let echo =
        ends.iter().find(|e| e["result"]["output"].as_str().unwrap_or("").contains("MCP server `everything`")).unwrap();
    assert_eq!(echo["status"], "error", "{echo}");
    assert!(echo["result"]["output"].as_str().unwrap().contains("did not answer `echo`"), "{echo}");
    let time = ends.iter().find(|e| e["status"] == "ok").expect("the built-in still ran");
    assert!(time["result"]["output"].as_str().unwrap().contains("UTC"), "{time}");
    assert!(stdout(&out).contains("Half done."));
}

/// The venv of scripts/setup-mcp.sh (PyPI's mcp-server-time and mcp-server-git).
fn pypi_server(name: &str) -> String {
    let venv = std::env::var("BRIDLE_MCP_VENV")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|_| std::path::PathBuf::from(std::env::var("HOME").unwrap()).join(".cache/bridle/mcp-venv"));
    let bin = venv.join("bin").join(name);
    assert!(bin.exists(), "{} is missing: run scripts/setup-mcp.sh", bin.display());
    bin.display().to_string()
}

#[tokio::test]
async fn the_pypi_time_and_git_servers_and_the_npm_filesystem_server_answer_through_bridle_tool() {
    let dirs = Dirs::new();
    std::fs::create_dir_all(&dirs.data).unwrap();
    std::fs::write(dirs.workspace.join("note.txt"), "filesystem says hi\n").unwrap();
    let git = |args: &[&str]| {
        let ok = std::process::Command::new("git").args(args).current_dir(&dirs.workspace).status().unwrap();
        assert!(ok.success());
    };
    git(&["init", "-q", "-b", "main"]);
    let ws = dirs.workspace.canonicalize().unwrap().display().to_string();
    let filesystem = repo_root().join("node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
    let body = format!(
        "mode = \"auto\"\n[mcp.servers.time]\ncommand = \"{}\"\nargs = [\"--local-timezone\", \"UTC\"]\n\
         [mcp.servers.git]\ncommand = \"{}\"\nargs = [\"--repository\", \"{ws}\"]\n\
         [mcp.servers.fs]\ncommand = \"node\"\nargs = [\"{}\", \"{ws}\"]\n",
        pypi_server("mcp-server-time"),
        pypi_server("mcp-server-git"),
        filesystem.display()
    );
    std::fs::write(dirs.data.join("config.toml"), body).unwrap();

    let list = bridle(&dirs, &["mcp", "list", "--json"]).await;
    let list: Value = serde_json::from_str(&stdout(&list)).unwrap();
    for server in list["servers"].as_array().unwrap() {
        assert_eq!(server["status"], "ready", "{server}");
    }
    let call = |name: &'static str, args: String| {
        let dirs = &dirs;
        async move {
            let out = bridle(dirs, &["tool", name, "--args", &args]).await;
            assert_eq!(out.status.code(), Some(0), "{name}: {}\n{}", stdout(&out), stderr(&out));
            let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
            report["result"]["output"].as_str().unwrap().to_string()
        }
    };
    let time = call("mcp__time__get_current_time", json!({"timezone": "Europe/Paris"}).to_string()).await;
    assert!(time.contains("Europe/Paris"), "{time}");
    let status = call("mcp__git__git_status", json!({"repo_path": ws}).to_string()).await;
    assert!(status.contains("note.txt"), "{status}");
    let read = call("mcp__fs__read_text_file", json!({"path": format!("{ws}/note.txt")}).to_string()).await;
    assert!(read.contains("filesystem says hi"), "{read}");

    // The filesystem server has a tool called `read_file` too: it is `mcp__fs__read_file`, and
    // the built-in `read_file` is still Bridle's own (workspace-relative, paged).
    let tools: Vec<&str> = list["servers"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["tools"].as_array().unwrap())
        .map(|t| t.as_str().unwrap())
        .collect();
    assert!(tools.contains(&"mcp__fs__read_file"), "{tools:?}");
    let own = bridle(&dirs, &["tool", "read_file", "--args", r#"{"path": "note.txt"}"#]).await;
    let own: Value = serde_json::from_str(&stdout(&own)).unwrap();
    assert_eq!(own["result"]["output"].as_str().unwrap(), "filesystem says hi\n", "{own}");
    assert!(
        processes_in(&dirs.data.join("mcp")).is_empty(),
        "no server left: {:?}",
        processes_in(&dirs.data.join("mcp"))
    );
}

#[tokio::test]
async fn a_bridle_killed_outright_leaves_no_server_behind() {
    // SIGKILL gives bridle no chance to stop its servers: the kernel closes its end of each
    // server's stdin, and a stdio server ends on that (the MCP shutdown for stdio).
    let dirs = Dirs::new();
    std::fs::create_dir_all(&dirs.data).unwrap();
    let marker = format!("bridle-mcp-orphan-{}", std::process::id());
    // A provider that refuses connections keeps the turn retrying while the server runs.
    let body = format!(
        "mode = \"auto\"\n[provider]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\n\
         [mcp.servers.everything]\ncommand = \"bash\"\nargs = [\"-c\", \"exec -a {marker} node {} stdio\"]\n",
        everything()
    );
    std::fs::write(dirs.data.join("config.toml"), body).unwrap();
    let mut run = tokio::process::Command::new(env!("CARGO_BIN_EXE_bridle"))
        .args(["run", "hello", "--data-dir"])
        .arg(&dirs.data)
        .arg("--workspace")
        .arg(&dirs.workspace)
        .env_remove("BRIDLE_CONFIG")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let running = || processes_in(&dirs.data.join("mcp")).iter().any(|p| p.contains(&marker));
    // Guards against a hung start or exit, not timing assertions.
    for _ in 0..400 {
        if running() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(running(), "the server started");
    run.start_kill().unwrap();
    run.wait().await.unwrap();
    // Up to a minute: under the whole suite's load (a llama.cpp server busy on both cores) node
    // once took more than ten seconds to start reading its stdin and see it closed.
    for _ in 0..1200 {
        if !running() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(!running(), "left behind: {:?}", processes_in(&dirs.data.join("mcp")));
}
