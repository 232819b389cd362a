//! The proxy's bounds (DESIGN §5.2), through `bridle` as a real process: a command that wants
//! fifty hosts raises eight questions and is told why the rest were refused; an editor is shown
//! at most sixteen permission prompts at once; two thousand idle connections to the proxy leave
//! Bridle's descriptors and memory bounded (the figures printed).

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::time::{Duration, Instant};

use bridle_core::calls::{CALL_QUESTIONS, PENDING_QUESTIONS};
use bridle_core::network::bounds::SESSION_CONNECTIONS;
use serde_json::{json, Value};

use super::super::bridle::*;
use super::super::sandbox::{Setup, User};
use super::{bash_output, http_server, model_running, network_requests, run, PINNED};

#[tokio::test]
async fn a_command_asking_for_fifty_hosts_raises_eight_questions_and_is_told_why_the_rest_were_refused() {
    let http = http_server();
    let dirs = Dirs::new();
    std::fs::create_dir_all(&dirs.data).unwrap();
    std::fs::write(
        dirs.data.join("config.toml"),
        "mode = \"auto\"\n[rules]\nallow = [\"bash(curl *)\"]\n[sandbox.network]\nmode = \"ask\"\n",
    )
    .unwrap();
    // curl's own globbing: fifty URLs, fifty hosts, one command.
    let command = format!("curl -sS \"http://h[1-50].test:{}/\"", http.port);
    let (mock, _f) = model_running("fetch fifty hosts", &command).await;
    let events = run(&dirs, &mock, "fetch fifty hosts", "deny", "").await;

    let asked = network_requests(&events);
    assert_eq!(asked.len(), CALL_QUESTIONS, "{events:?}");
    let said = bash_output(&events);
    let limit = "already asked about 8 hosts, the most one command may";
    // Each refused client is told in its own response, and the model in the hosts note.
    assert_eq!(said.matches(limit).count(), 2 * (50 - CALL_QUESTIONS), "{said}");
    assert!(said.contains("refused h50.test:"), "{said}");
    assert_eq!(said.matches("denied by the user").count(), 2 * CALL_QUESTIONS, "{said}");

    let out = bridle(&dirs, &["audit", "--kind", "approval_requested", "--json"]).await;
    let requests = json_lines(&out).into_iter().filter(|r| r["payload"]["subject"]["type"] == "host").count();
    assert_eq!(requests, CALL_QUESTIONS, "{}", stdout(&out));
    let out = bridle(&dirs, &["audit", "--kind", "network", "--json"]).await;
    let rows = json_lines(&out);
    assert_eq!(rows.len(), 50, "{}", stdout(&out));
    let by = |source: &str| rows.iter().filter(|r| r["payload"]["source"] == source).count();
    assert_eq!((by("user"), by("limit")), (CALL_QUESTIONS, 50 - CALL_QUESTIONS), "{}", stdout(&out));
    assert!(rows.iter().all(|r| r["decision"] == "deny"), "{}", stdout(&out));
    assert_eq!(http.served.load(std::sync::atomic::Ordering::SeqCst), 0);
}

/// Bridle's open descriptors and resident memory (KiB).
fn footprint(pid: u32) -> (usize, u64) {
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).map(|d| d.count()).unwrap_or(0);
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let rss = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0);
    (fds, rss)
}

/// The command of the idle test: through its proxy it tells the test's signal server `start`,
/// waits, opens a thousand tunnels to the holder and a thousand connections that say nothing,
/// tells it `ready`, waits, and prints how each was answered.
const IDLE_CLIENT: &str = r#"import base64, os, resource, socket, sys, time, urllib.parse
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 8192), hard))
p = urllib.parse.urlsplit(os.environ["HTTP_PROXY"])
auth = base64.b64encode(f"{p.username}:{p.password}".encode()).decode()
signal_port, holder_port = sys.argv[1], sys.argv[2]
def tunnel(port):
    s = socket.create_connection((p.hostname, p.port), timeout=30)
    s.sendall(f"CONNECT ok.test:{port} HTTP/1.1\r\nProxy-Authorization: Basic {auth}\r\n\r\n".encode())
    return s
signal = tunnel(signal_port)
assert signal.recv(1024).startswith(b"HTTP/1.1 200"), "no signal"
signal.sendall(b"start\n"); signal.recv(16)
held = [tunnel(holder_port) for _ in range(1000)]
held += [socket.create_connection((p.hostname, p.port), timeout=30) for _ in range(1000)]
signal.sendall(b"ready\n"); signal.recv(16)
time.sleep(0.5)
counts = {}
for i, s in enumerate(held):
    try:
        said = s.recv(256, socket.MSG_DONTWAIT)
        status = said.split(b" ")[1].decode() if said.startswith(b"HTTP/") else ("closed" if not said else "other")
    except BlockingIOError:
        status = "waiting"
    except OSError:
        status = "reset"
    key = ("tunnel " if i < 1000 else "silent ") + status
    counts[key] = counts.get(key, 0) + 1
print("answers", sorted(counts.items()))
"#;

#[tokio::test]
async fn two_thousand_idle_connections_leave_bridles_descriptors_and_memory_bounded() {
    // The test's own loopback: a signal server and a holder that keeps what connects.
    let signal = TcpListener::bind("127.0.0.1:0").unwrap();
    let holder = TcpListener::bind("127.0.0.1:0").unwrap();
    let (signal_port, holder_port) = (signal.local_addr().unwrap().port(), holder.local_addr().unwrap().port());
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        for stream in holder.incoming().flatten() {
            kept.push(stream);
        }
    });
    let config = "mode = \"auto\"\n[sandbox]\nbackend = \"bwrap\"\n[sandbox.network]\nmode = \"allow\"\n\
                  allow = [\"ok.test\", \"127.0.0.1\"]\n";
    let t = Setup::new(User::Invoking, config).with_env("BRIDLE_NET_RESOLVE", PINNED);
    t.hide("ports", &format!("{signal_port} {holder_port}"));
    let command = format!("/usr/bin/python3 - $(cat .t/ports) <<'EOF'\n{IDLE_CLIENT}EOF");
    let args = json!({"command": command, "timeout_secs": 120}).to_string();
    let child = t
        .bridle(&["tool", "bash", "--mode", "auto", "--approve", "--args", &args])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id().unwrap();

    // Measured while the command holds its connections open.
    let measuring = std::thread::spawn(move || {
        signal.set_nonblocking(true).unwrap();
        let until = Instant::now() + Duration::from_secs(60);
        let stream = loop {
            match signal.accept() {
                Ok((s, _)) => break s,
                Err(_) if Instant::now() < until => std::thread::sleep(Duration::from_millis(20)),
                Err(e) => panic!("the command never signalled: {e}"),
            }
        };
        stream.set_nonblocking(false).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        let mut lines = BufReader::new(stream.try_clone().unwrap()).lines();
        let mut stream = stream;
        assert_eq!(lines.next().unwrap().unwrap(), "start");
        let before = footprint(pid);
        stream.write_all(b"go\n").unwrap();
        assert_eq!(lines.next().unwrap().unwrap(), "ready");
        // The most over two seconds: the proxy may still be taking connections in.
        let mut after = (0, 0);
        for _ in 0..20 {
            let now = footprint(pid);
            after = (after.0.max(now.0), after.1.max(now.1));
            std::thread::sleep(Duration::from_millis(100));
        }
        stream.write_all(b"go\n").unwrap();
        (before, after)
    });
    let out = child.wait_with_output().await.unwrap();
    let measured = measuring.join();
    let ((fds_before, rss_before), (fds_after, rss_after)) =
        measured.unwrap_or_else(|_| panic!("not measured: {} {}", stdout(&out), stderr(&out)));
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap_or_else(|e| panic!("{e}: {}", stderr(&out)));
    let said = report["result"]["output"].as_str().unwrap_or_default().to_string();
    eprintln!(
        "2,000 idle connections: Bridle's descriptors {fds_before} -> {fds_after}, VmRSS {rss_before} KiB -> {rss_after} KiB; {}",
        said.lines().find(|l| l.starts_with("answers")).unwrap_or("(no answers line)")
    );
    assert!(said.contains("answers"), "{said}");
    // The session's bound (256) and some slack: this call's bound (64) holds each tunnel's two ends.
    assert!(fds_after < fds_before + SESSION_CONNECTIONS + 32, "descriptors {fds_before} -> {fds_after}");
    assert!(rss_after < rss_before + 64 * 1024, "VmRSS {rss_before} KiB -> {rss_after} KiB");
}

/// An editor (a raw ACP client) whose model writes twenty files at once in `ask`: it is shown
/// sixteen prompts, the other four calls are denied without one and the model is told why.
#[tokio::test]
async fn an_editor_is_shown_at_most_the_bound_of_permission_prompts_at_once() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let dirs = Dirs::new();
    let writes: Vec<Value> = (0..20)
        .map(|i| json!({"id": format!("w{i}"), "name": "write_file", "arguments": {"path": format!("f{i}.txt"), "content": "x\n"}}))
        .collect();
    let fixtures = tempfile::tempdir().unwrap();
    let script = json!({"fixtures": [
        {"match": {"userMessage": "write twenty", "hasToolResult": false}, "response": {"toolCalls": writes}},
        {"match": {"userMessage": "write twenty", "hasToolResult": true}, "response": {"content": "done"}}
    ]});
    std::fs::write(fixtures.path().join("script.json"), script.to_string()).unwrap();
    let mock = super::super::aimock::Aimock::start_with(fixtures.path()).await;
    std::fs::create_dir_all(&dirs.data).unwrap();
    let config =
        format!("mode = \"ask\"\n[provider]\nkind = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"m\"\n", mock.url);
    std::fs::write(dirs.data.join("config.toml"), config).unwrap();

    let mut child = super::super::acp::raw_acp(dirs.data.as_path(), &[]);
    let mut input = child.stdin.take().unwrap();
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let mut next = async |wait: Duration| -> Option<Value> {
        let line = tokio::time::timeout(wait, lines.next_line()).await.ok()?.unwrap()?;
        Some(serde_json::from_str(&line).unwrap())
    };
    let mut send = async |message: Value| {
        input.write_all(format!("{message}\n").as_bytes()).await.unwrap();
        input.flush().await.unwrap();
    };
    send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}})).await;
    while next(Duration::from_secs(10)).await.unwrap()["id"] != 1 {}
    let cwd = dirs.workspace.display().to_string();
    send(json!({"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": cwd, "mcpServers": []}})).await;
    let session = loop {
        let m = next(Duration::from_secs(20)).await.unwrap();
        if m["id"] == 2 {
            break m["result"]["sessionId"].as_str().unwrap().to_string();
        }
    };
    let prompt = json!([{"type": "text", "text": "write twenty"}]);
    send(json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": {"sessionId": session, "prompt": prompt}}))
        .await;
    // Prompts are left open while the rest arrive: no more than the bound are shown, and every
    // write past it fails at once. Read until all twenty are accounted for (however slow the
    // machine), then a moment more: a prompt past the bound would show there.
    let (mut prompts, mut failed) = (Vec::new(), 0);
    let mut wait = Duration::from_secs(60);
    while let Some(m) = next(wait).await {
        if m["method"] == "session/request_permission" {
            prompts.push(m["id"].clone());
        } else if m["params"]["update"]["sessionUpdate"] == "tool_call_update"
            && m["params"]["update"]["status"] == "failed"
        {
            failed += 1;
        }
        if prompts.len() + failed >= 20 {
            wait = Duration::from_secs(2);
        }
    }
    assert_eq!((prompts.len(), failed), (PENDING_QUESTIONS, 20 - PENDING_QUESTIONS));
    for id in &prompts {
        let outcome = json!({"outcome": "selected", "optionId": "reject_once"});
        send(json!({"jsonrpc": "2.0", "id": id, "result": {"outcome": outcome}})).await;
    }
    let stop = loop {
        let m = next(Duration::from_secs(30)).await.expect("the prompt was answered");
        assert_ne!(m["method"], "session/request_permission", "a prompt past the bound: {m}");
        if m["id"] == 3 {
            break m["result"]["stopReason"].clone();
        }
    };
    assert_eq!(stop, "end_turn");
    let told = mock.journal().await.last().unwrap().to_string();
    assert_eq!(told.matches("16 permission prompts are already open in the editor").count(), 4, "{told}");
    assert_eq!(told.matches("rejected in the editor").count(), PENDING_QUESTIONS, "{told}");
    assert!((0..20).all(|i| !dirs.workspace.join(format!("f{i}.txt")).exists()));
}
