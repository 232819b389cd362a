//! A session's MCP servers while it runs, against the real `server-everything` from npm: a
//! server that dies is reported the moment it goes (an HTTP one at the first call that finds it
//! gone), its tools leave the next turn's request with a warning, and a restart brings them
//! back; an edited config restarts only what changed; the session never stops.

use std::time::Duration;

use bridle_core::config::{McpConfig, McpServerConfig};
use bridle_core::engine::SessionSpec;
use bridle_core::mcp::McpHub;
use bridle_core::tools::{DynTool, ToolContext};
use bridle_protocol::{Event, McpStatus};

use super::harness::*;

fn everything() -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(path.exists(), "server-everything is not installed at {}: run `npm install`", path.display());
    path.display().to_string()
}

fn status(hub: &McpHub, name: &str) -> (McpStatus, Option<String>, usize) {
    let report = hub.reports().into_iter().find(|r| r.name == name).unwrap();
    (report.status, report.error, report.tools.len())
}

fn has_mcp_tools(wire: Wire, body: &serde_json::Value) -> bool {
    wire.tool_names(body).iter().any(|t| t.starts_with("mcp__everything__"))
}

/// Whether a process whose command line holds `marker` runs (zombies aside).
fn running(marker: &str) -> bool {
    std::fs::read_dir("/proc").unwrap().flatten().any(|entry| {
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let zombie = stat.rsplit(") ").next().is_some_and(|rest| rest.starts_with('Z'));
        !zombie && String::from_utf8_lossy(&cmdline).contains(marker)
    })
}

#[tokio::test]
async fn a_dead_server_leaves_the_next_turn_with_a_warning_and_a_restart_brings_it_back() {
    let wire = Wire::OpenAi;
    let script = Script::new(["one", "two", "three"].map(|t| sse(wire.text(t))));
    let server = mock_server(wire, script).await;
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let marker = format!("bridle-mcp-core-victim-{}", std::process::id());
    let config = McpConfig {
        servers: [(
            "everything".to_string(),
            McpServerConfig {
                command: Some("bash".into()),
                args: vec!["-c".into(), format!("echo starting >&2; exec -a {marker} node {} stdio", everything())],
                env: Default::default(),
                url: None,
                headers: Default::default(),
                enabled: true,
                startup_timeout_secs: 20,
            },
        )]
        .into_iter()
        .collect(),
    };
    let hub = McpHub::start(&config, &ws, std::env::vars_os()).await;
    assert_eq!(status(&hub, "everything").0, McpStatus::Ready);
    let mut t = engine_with_mcp(dir, wire.provider(&server.uri()), SessionSpec::New, Some(hub.clone()), |_| {});

    t.say("first").await;
    t.turn().await;

    // The server dies between turns: the hub knows at once, with the end of its stderr.
    let mut changes = hub.subscribe();
    let killed = std::process::Command::new("pkill").args(["-KILL", "-f", &marker]).status().unwrap();
    assert!(killed.success());
    while status(&hub, "everything").0 != McpStatus::Failed {
        // A guard against a hung watch, not a timing assertion.
        tokio::time::timeout(Duration::from_secs(20), changes.changed()).await.unwrap().unwrap();
    }
    let (_, error, tools) = status(&hub, "everything");
    let error = error.unwrap();
    assert!(error.contains("stopped") && error.contains("its stderr ends: starting"), "{error}");
    assert_eq!(tools, 0);

    t.say("second").await;
    let events = t.turn().await;
    let warning = events.iter().find_map(|e| match e {
        Event::Warning { code, message, .. } if *code == bridle_protocol::WarningCode::McpServerStopped => {
            Some(message.clone())
        }
        _ => None,
    });
    let warning = warning.expect("the stopped server is announced");
    assert!(warning.contains("`everything`") && warning.contains("no longer offered"), "{warning}");

    hub.restart("everything").await.unwrap();
    assert_eq!(status(&hub, "everything").0, McpStatus::Ready);
    t.say("third").await;
    let events = t.turn().await;
    assert!(!events.iter().any(|e| matches!(e, Event::Warning { .. })), "{:?}", kinds(&events));

    let bodies = request_bodies(&server).await;
    let offered: Vec<bool> = bodies.iter().map(|b| has_mcp_tools(wire, b)).collect();
    assert_eq!(offered, [true, false, true], "the MCP tools per turn");
    // Built-ins were offered every time.
    assert!(bodies.iter().all(|b| wire.tool_names(b).iter().any(|t| t == "read_file")));

    drop(t);
    hub.shutdown().await;
    assert!(!running(&marker), "no server left");
}

fn server(marker: &str) -> McpServerConfig {
    McpServerConfig {
        command: Some("bash".into()),
        args: vec!["-c".into(), format!("exec -a {marker} node {} stdio", everything())],
        env: Default::default(),
        url: None,
        headers: Default::default(),
        enabled: true,
        startup_timeout_secs: 20,
    }
}

fn pids(marker: &str) -> String {
    let out = std::process::Command::new("pgrep").args(["-f", marker]).output().unwrap();
    String::from_utf8(out.stdout).unwrap()
}

#[tokio::test]
async fn reconfiguring_restarts_only_the_servers_that_changed() {
    let ws = tempfile::tempdir().unwrap();
    let (kept, edited, added) =
        ["kept", "edited", "added"].map(|n| format!("bridle-mcp-{n}-{}", std::process::id())).into();
    let mut config = McpConfig {
        servers: [("kept".to_string(), server(&kept)), ("edited".to_string(), server(&edited))].into_iter().collect(),
    };
    let hub = McpHub::start(&config, ws.path(), std::env::vars_os()).await;
    let (kept_pid, edited_pid) = (pids(&kept), pids(&edited));
    assert!(!kept_pid.is_empty() && !edited_pid.is_empty());

    config.servers.get_mut("edited").unwrap().startup_timeout_secs = 30;
    config.servers.insert("added".into(), server(&added));
    let generation = hub.generation();
    hub.reconfigure(&config).await;
    assert!(hub.generation() > generation);
    assert_eq!(pids(&kept), kept_pid, "an unchanged server keeps running as it was");
    assert!(!pids(&edited).is_empty() && pids(&edited) != edited_pid, "an edited server is restarted");
    assert!(hub.reports().iter().all(|r| r.status == McpStatus::Ready), "{:?}", hub.reports());

    config.servers.remove("kept");
    config.servers.get_mut("added").unwrap().enabled = false;
    hub.reconfigure(&config).await;
    let names: Vec<(String, McpStatus)> = hub.reports().into_iter().map(|r| (r.name, r.status)).collect();
    assert_eq!(names, [("added".into(), McpStatus::Disabled), ("edited".into(), McpStatus::Ready)]);
    assert!(pids(&kept).is_empty() && pids(&added).is_empty(), "removed and disabled servers are stopped");
    hub.shutdown().await;
    assert!(pids(&edited).is_empty());
}

#[tokio::test]
async fn a_streamable_http_server_that_goes_away_is_reported_failed() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut child = tokio::process::Command::new("node")
        .args([everything().as_str(), "streamableHttp"])
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    for _ in 0..200 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let config = McpConfig {
        servers: [(
            "web".to_string(),
            McpServerConfig {
                command: None,
                args: vec![],
                url: Some(format!("http://127.0.0.1:{port}/mcp")),
                ..server("x")
            },
        )]
        .into_iter()
        .collect(),
    };
    let ws = tempfile::tempdir().unwrap();
    let hub = McpHub::start(&config, ws.path(), std::env::vars_os()).await;
    assert_eq!(status(&hub, "web").0, McpStatus::Ready);
    child.kill().await.unwrap();
    child.wait().await.unwrap();

    // Nothing tells an HTTP client its server went away until a request fails: the first call
    // fails clearly, and the hub hears it from the call.
    let mut changes = hub.subscribe();
    let tool = hub.tools().into_iter().find(|t| t.name() == "mcp__web__get-sum").unwrap();
    let data = tempfile::tempdir().unwrap();
    let workspace =
        std::sync::Arc::new(bridle_core::workspace::Workspace::open(ws.path(), None, data.path(), &[]).unwrap());
    let clock = std::sync::Arc::new(bridle_core::clock::SystemClock);
    let ctx = ToolContext::new("s", "c", workspace, ws.path().to_path_buf(), clock, Duration::from_secs(30));
    let err = tool.bind(&serde_json::json!({"a": 1, "b": 2})).unwrap().run(&ctx).await.unwrap_err();
    assert!(err.to_string().contains("did not answer `get-sum`"), "{err}");
    while status(&hub, "web").0 != McpStatus::Failed {
        // A guard against a hung watch, not a timing assertion.
        tokio::time::timeout(Duration::from_secs(20), changes.changed()).await.unwrap().unwrap();
    }
    let (_, error, tools) = status(&hub, "web");
    assert!(error.as_deref().unwrap().contains("a call to it failed"), "{error:?}");
    assert_eq!(tools, 0, "its tools are no longer offered");
    hub.shutdown().await;
}

#[tokio::test]
async fn the_session_opens_while_servers_start_and_its_first_turn_waits_for_them() {
    let wire = Wire::OpenAi;
    let server_mock = mock_server(wire, Script::new([sse(wire.text("done"))])).await;
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let marker = format!("bridle-mcp-slow-{}", std::process::id());
    let silent = McpServerConfig {
        args: vec!["-c".into(), format!("exec -a {marker}-silent sleep 60")],
        startup_timeout_secs: 2,
        ..server(&marker)
    };
    let config = McpConfig {
        servers: [("everything".to_string(), server(&marker)), ("silent".to_string(), silent)].into_iter().collect(),
    };
    let hub = McpHub::launch(&config, &ws, std::env::vars_os());
    // Nothing waited: both are still starting when the session opens.
    let statuses: Vec<McpStatus> = hub.reports().into_iter().map(|r| r.status).collect();
    assert_eq!(statuses, [McpStatus::Starting, McpStatus::Starting]);
    let mut t = engine_with_mcp(dir, wire.provider(&server_mock.uri()), SessionSpec::New, Some(hub.clone()), |_| {});

    t.say("go").await;
    t.turn().await;
    // The first request waited for the servers: everything's tools are there; silent failed.
    let bodies = request_bodies(&server_mock).await;
    assert!(has_mcp_tools(wire, &bodies[0]), "{:?}", wire.tool_names(&bodies[0]));
    assert_eq!(status(&hub, "silent").0, McpStatus::Failed);
    assert!(!running(&format!("{marker}-silent")), "the silent server was killed at its timeout");
    drop(t);
    hub.shutdown().await;
    assert!(!running(&marker));
}
