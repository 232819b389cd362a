//! The network, by host, from the user's side: real commands (`curl`, `git` over SSH, `npm`)
//! run through `bridle tool bash` and `bridle run` reach servers the test runs on loopback,
//! named by host names the test pins (`BRIDLE_NET_RESOLVE`), only as `[sandbox.network]` says;
//! under bubblewrap and under Landlock, as the invoking user and (as root) as `nobody`. What is
//! refused is refused at once, and every connection leaves a `network` row in the audit log.
//! A command's proxy listener serves that command only, and the host ports the config lists are
//! reached (with the network off) while no other is. The address judgement is [`addresses`]'s,
//! the bounds [`bounds`]'.

mod addresses;
mod bounds;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};

use super::aimock::Aimock;
use super::boundary::{eventually, BACKENDS};
use super::bridle::*;
use super::sandbox::{output, users, Setup, User, ONE_NOBODY_AT_A_TIME};

const PINNED: &str =
    "ok.test=127.0.0.1,bad.test=127.0.0.1,ssh.test=127.0.0.1,registry.test=127.0.0.1,new.test=127.0.0.1";

/// A plain HTTP server on loopback: `/demo` is an npm packument, anything else a greeting; it
/// counts the requests it answered.
struct Http {
    port: u16,
    served: Arc<AtomicUsize>,
}

fn http_server() -> Http {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let served = Arc::new(AtomicUsize::new(0));
    let count = served.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let count = count.clone();
            std::thread::spawn(move || {
                let mut stream = stream;
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap_or(0) == 1 {
                    head.push(byte[0]);
                }
                let head = String::from_utf8_lossy(&head).into_owned();
                let body = if head.starts_with("GET /demo ") {
                    json!({"name": "demo", "dist-tags": {"latest": "1.2.3"},
                           "versions": {"1.2.3": {"name": "demo", "version": "1.2.3"}}})
                    .to_string()
                } else {
                    "hello from ok.test\n".to_string()
                };
                count.fetch_add(1, Ordering::SeqCst);
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            });
        }
    });
    Http { port, served }
}

/// A TLS server (Python's, with a certificate the test makes for `ok.test`): its port, and the
/// certificate a client trusts it by.
struct Tls {
    port: u16,
    cert: String,
    _child: std::process::Child,
    _dir: tempfile::TempDir,
}

impl Drop for Tls {
    fn drop(&mut self) {
        let _ = self._child.kill();
        let _ = self._child.wait();
    }
}

fn tls_server() -> Tls {
    let dir = tempfile::tempdir().unwrap();
    let (cert, key) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    let made = std::process::Command::new("openssl")
        .args(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=ok.test"])
        .args(["-addext", "subjectAltName=DNS:ok.test"])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(made.success());
    let script = format!(
        "import http.server, ssl, sys\n\
         class H(http.server.BaseHTTPRequestHandler):\n    \
             def do_GET(self):\n        \
                 b = b'hello over tls\\n'\n        \
                 self.send_response(200); self.send_header('Content-Length', str(len(b))); self.end_headers(); self.wfile.write(b)\n    \
             def log_message(self, *a): pass\n\
         s = http.server.HTTPServer(('127.0.0.1', 0), H)\n\
         c = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER); c.load_cert_chain('{}', '{}')\n\
         s.socket = c.wrap_socket(s.socket, server_side=True)\n\
         print(s.server_address[1], flush=True)\n\
         s.serve_forever()\n",
        cert.display(),
        key.display()
    );
    let mut child = std::process::Command::new("python3")
        .args(["-c", &script])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    std::io::BufRead::read_line(&mut out, &mut line).unwrap();
    let port = line.trim().parse().unwrap_or_else(|_| panic!("the TLS server said {line:?}"));
    Tls { port, cert: std::fs::read_to_string(&cert).unwrap(), _child: child, _dir: dir }
}

/// A stand-in for an SSH server: it keeps the first bytes a client sends and answers with a
/// banner.
fn ssh_stand_in() -> (u16, Arc<Mutex<Vec<u8>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let heard = Arc::new(Mutex::new(Vec::new()));
    let keep = heard.clone();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let _ = stream.write_all(b"SSH-2.0-standin\r\n");
            let mut buf = [0u8; 256];
            stream.set_read_timeout(Some(std::time::Duration::from_secs(5))).unwrap();
            if let Ok(n) = stream.read(&mut buf) {
                keep.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        }
    });
    (port, heard)
}

async fn network_rows(t: &Setup) -> Vec<Value> {
    let out = bridle(&t.dirs, &["audit", "--kind", "network", "--json"]).await;
    json_lines(&out)
}

async fn hosts_reach_only_as_the_policy_says(backend: &str, user: User) {
    let _alone = ONE_NOBODY_AT_A_TIME.lock().await;
    let http = http_server();
    let tls = tls_server();
    let (ssh_port, heard) = ssh_stand_in();
    let config = format!(
        "mode = \"auto\"\n[sandbox]\nbackend = \"{backend}\"\n[sandbox.network]\nmode = \"allow\"\n\
         allow = [\"ok.test\", \"registry.test\", \"ssh.test:{ssh_port}\", \"127.0.0.1\"]\ndeny = [\"bad.test\"]\n"
    );
    let t = Setup::new(user, &config).with_env("BRIDLE_NET_RESOLVE", PINNED);
    t.hide("ca.pem", &tls.cert);
    t.hide("http", &http.port.to_string());
    t.hide("tls", &tls.port.to_string());
    t.hide("ssh", &ssh_port.to_string());

    // Plain HTTP and HTTPS (a CONNECT tunnel: the proxy never sees inside) to an allowed host.
    let r = t
        .bash("curl -sS http://ok.test:$(cat .t/http)/ && curl -sS --cacert .t/ca.pem https://ok.test:$(cat .t/tls)/")
        .await;
    assert_eq!(r["details"]["sandbox"], backend, "{r}");
    assert!(output(&r).contains("hello from ok.test\nhello over tls\n"), "{r}");
    let reached: Vec<&Value> =
        r["details"]["hosts"].as_array().unwrap().iter().filter(|h| h["allowed"] == true).collect();
    assert_eq!(reached.len(), 2, "{r}");
    assert!(reached.iter().all(|h| h["host"] == "ok.test" && h["received"].as_u64().unwrap() > 0), "{r}");

    // A denied host is refused before anything is sent, at once, and the model is told why.
    let before = http.served.load(Ordering::SeqCst);
    let r = t
        .bash("curl -sS -o /dev/null -w '%{http_code}\\n' http://bad.test:$(cat .t/http)/; curl -sS --cacert .t/ca.pem https://bad.test:$(cat .t/tls)/; echo end")
        .await;
    assert!(output(&r).contains("403\n"), "{r}");
    assert!(output(&r).contains("refused bad.test:"), "{r}");
    assert!(r["details"]["durationMs"].as_u64().unwrap() < 5000, "{r}");
    assert_eq!(http.served.load(Ordering::SeqCst), before, "bad.test reached the server: {r}");

    // git over SSH, through the same proxy (git's ssh is told to): the SSH client's banner
    // arrives at the allowed host and port.
    let r = t.bash("git ls-remote ssh://git@ssh.test:$(cat .t/ssh)/repo.git 2>&1 | tail -3; echo done").await;
    std::thread::sleep(std::time::Duration::from_millis(200));
    let banner = String::from_utf8_lossy(&heard.lock().unwrap()).into_owned();
    assert!(banner.starts_with("SSH-2.0-"), "the SSH client's banner did not arrive ({banner:?}): {r}");

    // A package manager against a registry the test serves, named by an allowed host.
    let r = t
        .bash("npm_config_cache=/tmp/npm-cache-$$ npm_config_update_notifier=false npm view demo version --registry http://registry.test:$(cat .t/http)/")
        .await;
    assert!(output(&r).contains("1.2.3"), "{r}");

    // Around the proxy there is nothing: a direct connection to the server fails.
    let r = t.bash("curl -sS --noproxy '*' --max-time 5 http://127.0.0.1:$(cat .t/http)/ || echo failed").await;
    assert!(output(&r).contains("failed"), "{r}");

    // Every connection is on the record.
    let rows = network_rows(&t).await;
    let bad: Vec<&Value> = rows.iter().filter(|r| r["payload"]["host"] == "bad.test").collect();
    assert_eq!(bad.len(), 2, "{rows:?}");
    assert!(bad.iter().all(|r| r["decision"] == "deny" && r["status"] == "refused"), "{bad:?}");
    assert!(bad[0]["payload"]["source"].as_str().unwrap().contains("deny bad.test"), "{bad:?}");
    let ok: Vec<&Value> = rows.iter().filter(|r| r["payload"]["host"] == "ok.test").collect();
    assert_eq!(ok.len(), 2, "{rows:?}");
    assert!(ok.iter().all(|r| r["decision"] == "allow" && r["payload"]["bytesReceived"].as_u64().unwrap() > 0));
    assert!(rows.iter().any(|r| r["payload"]["host"] == "ssh.test" && r["status"] == "reached"), "{rows:?}");
    assert!(rows.iter().all(|r| r["callId"].as_str().is_some_and(|c| !c.is_empty())), "{rows:?}");
}

#[tokio::test]
async fn under_bubblewrap_commands_reach_only_the_hosts_allowed_for_root_and_for_a_user() {
    for user in users() {
        hosts_reach_only_as_the_policy_says("bwrap", user).await;
    }
}

#[tokio::test]
async fn under_landlock_commands_reach_only_the_hosts_allowed_for_root_and_for_a_user() {
    for user in users() {
        hosts_reach_only_as_the_policy_says("landlock", user).await;
    }
}

/// An address of this machine that is not loopback, when it has one.
fn own_address() -> Option<std::net::IpAddr> {
    let probe = std::net::UdpSocket::bind("0.0.0.0:0").ok()?;
    probe.connect("192.0.2.1:9").ok()?;
    Some(probe.local_addr().ok()?.ip()).filter(|a| !a.is_loopback() && !a.is_unspecified())
}

/// (That no UDP datagram leaves, with every host allowed, is the escape suite's: it runs with
/// `allow = ["*"]`.)
#[tokio::test]
async fn loopback_metadata_and_this_machines_addresses_are_refused_even_when_every_host_is_allowed() {
    for backend in ["bwrap", "landlock"] {
        let http = http_server();
        let config = format!(
            "mode = \"auto\"\n[sandbox]\nbackend = \"{backend}\"\n[sandbox.network]\nmode = \"allow\"\nallow = [\"*\"]\n"
        );
        let t = Setup::new(User::Invoking, &config).with_env("BRIDLE_NET_RESOLVE", PINNED);
        t.hide("http", &http.port.to_string());
        let mut targets = vec![
            "http://127.0.0.1:$P/".to_string(),
            "http://localhost:$P/".into(),
            "http://ok.test:$P/".into(),
            "http://169.254.169.254/latest/meta-data/".into(),
            "http://[::1]:$P/".into(),
        ];
        if let Some(own) = own_address() {
            targets.push(format!("http://{own}:$P/"));
        }
        for target in targets {
            // Through the proxy even where `NO_PROXY` would send the client direct (loopback).
            let r = t
                .bash(&format!("P=$(cat .t/http); curl -sS --noproxy '' -o /dev/null -w '%{{http_code}}\\n' {target}"))
                .await;
            assert!(output(&r).starts_with("exit code 0\n403\n"), "{backend} {target}: {r}");
            assert!(r["details"]["durationMs"].as_u64().unwrap() < 5000, "{r}");
        }
        // Direct, loopback is the sandbox's own (bwrap) or closed but for the proxy (Landlock):
        // the host's server is not there.
        let r = t.bash("P=$(cat .t/http); curl -sS --max-time 5 http://127.0.0.1:$P/").await;
        assert!(output(&r).starts_with("exit code 7\n"), "{backend}: the host's loopback was reached: {r}");
        assert_eq!(http.served.load(Ordering::SeqCst), 0, "{backend}: a refused address was reached");
        let rows = network_rows(&t).await;
        let metadata = rows.iter().find(|r| r["payload"]["host"] == "169.254.169.254").unwrap();
        assert!(metadata["payload"]["reason"].as_str().unwrap().contains("link-local"), "{metadata}");
        let localhost = rows.iter().find(|r| r["payload"]["host"] == "localhost").unwrap();
        assert!(localhost["payload"]["reason"].as_str().unwrap().contains("resolves to"), "{localhost}");
    }
}

/// An aimock whose model runs `command` with bash once, then says `done`.
async fn model_running(prompt: &str, command: &str) -> (Aimock, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let fixtures = json!({"fixtures": [
        {"match": {"userMessage": prompt, "hasToolResult": false},
         "response": {"toolCalls": [{"id": "n1", "name": "bash", "arguments": {"command": command}}]}},
        {"match": {"userMessage": prompt, "hasToolResult": true}, "response": {"content": "done"}}
    ]});
    std::fs::write(dir.path().join("script.json"), fixtures.to_string()).unwrap();
    (Aimock::start_with(dir.path()).await, dir)
}

/// `bridle run PROMPT --on-ask ON_ASK --json` with `stdin`, pinned names in its environment.
async fn run(dirs: &Dirs, mock: &Aimock, prompt: &str, on_ask: &str, stdin: &str) -> Vec<Value> {
    run_in(dirs, mock, prompt, on_ask, stdin, None).await
}

/// [`run`], continuing `session` when given.
async fn run_in(
    dirs: &Dirs,
    mock: &Aimock,
    prompt: &str,
    on_ask: &str,
    stdin: &str,
    session: Option<&str>,
) -> Vec<Value> {
    let mut args = vec!["run", prompt, "--json", "--on-ask", on_ask, "--provider", "openai", "--model", "m"];
    if let Some(id) = session {
        args.extend(["--session", id]);
    }
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_bridle"))
        .args(args)
        .arg("--base-url")
        .arg(format!("{}/v1", mock.url))
        .arg("--data-dir")
        .arg(&dirs.data)
        .arg("--workspace")
        .arg(&dirs.workspace)
        .env_remove("OPENAI_API_KEY")
        .env_remove("DBUS_SESSION_BUS_ADDRESS")
        .env("BRIDLE_NET_RESOLVE", PINNED)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use tokio::io::AsyncWriteExt;
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin.as_bytes()).await.unwrap();
    drop(input);
    let out = child.wait_with_output().await.unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    json_lines(&out)
}

fn bash_output(events: &[Value]) -> String {
    let end = events.iter().find(|e| e["type"] == "toolCallEnd").expect("the bash call ended");
    end["result"]["output"].as_str().unwrap().to_string()
}

fn network_requests(events: &[Value]) -> Vec<&Value> {
    events.iter().filter(|e| e["type"] == "approvalRequested" && e["request"]["subject"]["type"] == "host").collect()
}

#[tokio::test]
async fn in_ask_an_unknown_host_waits_for_a_person_and_session_and_always_answers_are_kept() {
    let http = http_server();
    let dirs = Dirs::new();
    std::fs::create_dir_all(&dirs.data).unwrap();
    let config_file = dirs.data.join("config.toml");
    std::fs::write(
        &config_file,
        "mode = \"auto\"\n[rules]\nallow = [\"bash(curl *)\"]\n[sandbox.network]\nmode = \"ask\"\nallow = [\"127.0.0.1\"]\n",
    )
    .unwrap();
    let command = format!("curl -sS http://new.test:{}/", http.port);
    let (mock, _f) = model_running("fetch the pinned page", &command).await;

    // Approved once: the connection waited and went through.
    let events = run(&dirs, &mock, "fetch the pinned page", "approve", "").await;
    let asked = network_requests(&events);
    assert_eq!(asked.len(), 1, "{events:?}");
    let arguments = &asked[0]["request"]["subject"];
    assert_eq!((arguments["host"].as_str(), arguments["port"].as_u64()), (Some("new.test"), Some(http.port as u64)));
    assert_eq!(arguments["command"], command);
    assert!(bash_output(&events).contains("hello from ok.test"), "{events:?}");

    // Denied: the command sees a refusal at once, not a hang.
    let started = std::time::Instant::now();
    let events = run(&dirs, &mock, "fetch the pinned page", "deny", "").await;
    assert_eq!(network_requests(&events).len(), 1);
    let said = bash_output(&events);
    assert!(!said.contains("hello from ok.test") && said.contains("refused new.test:"), "{said}");
    assert!(started.elapsed() < std::time::Duration::from_secs(30));

    // "For the session", answered on the terminal: the session reaches the host without asking
    // from then on, in a later process too; another session still asks.
    let events = run(&dirs, &mock, "fetch the pinned page", "prompt", "s\n").await;
    assert!(bash_output(&events).contains("hello from ok.test"), "{events:?}");
    let session = events[0]["sessionId"].as_str().unwrap().to_string();
    let events = run_in(&dirs, &mock, "fetch the pinned page", "deny", "", Some(&session)).await;
    assert!(network_requests(&events).is_empty(), "{events:?}");
    assert!(bash_output(&events).contains("hello from ok.test"), "{events:?}");
    let events = run(&dirs, &mock, "fetch the pinned page", "deny", "").await;
    assert_eq!(network_requests(&events).len(), 1, "another session asks again");

    // "Always", answered on the terminal: written to the config, and a new session reaches the
    // host without asking.
    let events = run(&dirs, &mock, "fetch the pinned page", "prompt", "a\n").await;
    assert!(bash_output(&events).contains("hello from ok.test"), "{events:?}");
    let written = std::fs::read_to_string(&config_file).unwrap();
    assert!(written.contains(&format!("\"new.test:{}\"", http.port)), "{written}");
    let events = run(&dirs, &mock, "fetch the pinned page", "deny", "").await;
    assert!(network_requests(&events).is_empty(), "{events:?}");
    assert!(bash_output(&events).contains("hello from ok.test"), "{events:?}");

    // The requests and the connections are on the record.
    let out = bridle(&dirs, &["audit", "--kind", "approval_requested", "--json"]).await;
    let requests: Vec<Value> =
        json_lines(&out).into_iter().filter(|r| r["payload"]["subject"]["type"] == "host").collect();
    assert_eq!(requests.len(), 5, "{}", stdout(&out));
    let out = bridle(&dirs, &["audit", "--kind", "network", "--json"]).await;
    let decisions: Vec<(String, String)> = json_lines(&out)
        .iter()
        .map(|r| (r["decision"].as_str().unwrap().to_string(), r["payload"]["source"].as_str().unwrap().to_string()))
        .collect();
    assert_eq!(
        decisions,
        [
            ("allow".to_string(), "user".to_string()),
            ("deny".into(), "user".into()),
            ("allow".into(), "user".into()),
            ("allow".into(), "session".into()),
            ("deny".into(), "user".into()),
            ("allow".into(), "user".into()),
            ("allow".into(), format!("allow new.test:{}", http.port)),
        ],
        "{}",
        stdout(&out)
    );
}

/// A command's proxy listener serves that command only: a host process that finds it (under
/// Landlock it is on the host's loopback) and a later command of the session that finds a
/// background process's (under bubblewrap they share a loopback) get a refusal, credential or
/// not; the command itself goes through.
async fn the_proxy_serves_its_own_call_only(backend: &str) {
    let config = format!(
        "mode = \"auto\"\n[sandbox]\nbackend = \"{backend}\"\n[sandbox.network]\nmode = \"allow\"\nallow = [\"*\"]\n"
    );
    let t = Setup::new(User::Invoking, &config);
    let ask = |auth: &str| format!("CONNECT example.test:443 HTTP/1.1\r\n{auth}\r\n");
    if backend == "landlock" {
        // The command names its listener (not its credential) and waits; the test, a process of
        // the host, knocks with none and with a guess.
        let args = json!({"command": "echo \"$BRIDLE_PROXY_HOST:$BRIDLE_PROXY_PORT\" > proxy.addr; sleep 4; \
                                      curl -s -o /dev/null -w 'own:%{http_code}' -x \"$HTTP_PROXY\" http://example.test/ || true",
                          "background": false});
        let mut running = t.bridle(&["tool", "bash", "--mode", "auto", "--approve", "--args", &args.to_string()]);
        let running = running.stdout(std::process::Stdio::piped()).spawn().unwrap();
        let addr = t.dirs.workspace.join("proxy.addr");
        assert!(eventually(std::time::Duration::from_secs(20), || addr.exists()), "the command never named its proxy");
        let addr = std::fs::read_to_string(&addr).unwrap().trim().to_string();
        for auth in ["", "Proxy-Authorization: Basic YnJpZGxlOmd1ZXNz\r\n"] {
            use std::io::{Read, Write};
            let mut s = std::net::TcpStream::connect(&addr).unwrap();
            s.write_all(ask(auth).as_bytes()).unwrap();
            let mut said = String::new();
            let _ = s.read_to_string(&mut said);
            assert!(said.starts_with("HTTP/1.1 407"), "a host process used the command's proxy: {said}");
        }
        let out = running.wait_with_output().await.unwrap();
        let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
        // Its own request was judged (a name that does not resolve: refused by the proxy, 403/502).
        assert!(output(&report["result"]).contains("own:"), "{report}");
        assert!(!output(&report["result"]).contains("own:407"), "{report}");
    } else {
        // Through `bridle run`: a background process holds its listener; a later command
        // presents its own credential there.
        let (mock, _f) = super::effects::model(
            "knock",
            json!([
                {"id": "b", "name": "bash", "arguments": {"background": true,
                 "command": "echo \"$BRIDLE_PROXY_HOST:$BRIDLE_PROXY_PORT\" > bg.addr; sleep 30"}},
                {"id": "k", "name": "bash", "arguments": {"command":
                 "sleep 1; A=$(cat bg.addr); P=${HTTP_PROXY#http://}; \
                  curl -s -o /dev/null -w 'other:%{http_code}' --proxy \"http://${P%@*}@$A\" http://example.test/"}}
            ]),
        )
        .await;
        let mut dirs = Dirs::new();
        dirs.workspace = t.dirs.workspace.clone();
        dirs.data = t.dirs.data.clone();
        let (events, _) = super::effects::run(&dirs, &mock, "knock", "auto", "deny").await;
        let results = super::effects::results(&events);
        let knock = results.last().unwrap();
        assert!(output(knock).contains("other:407"), "a later command used a background process's proxy: {knock}");
    }
}

#[tokio::test]
async fn a_proxy_listener_serves_only_the_command_it_was_made_for() {
    for backend in BACKENDS {
        the_proxy_serves_its_own_call_only(backend).await;
    }
}

/// A TCP echo server of the test's own on the host's loopback: its port, and how many it served.
fn echo_server() -> (u16, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let served = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = served.clone();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let mut buf = [0u8; 64];
            if let Ok(n) = stream.read(&mut buf) {
                let _ = stream.write_all(&buf[..n]);
            }
        }
    });
    (port, served)
}

async fn host_ports_on_purpose(backend: &str, user: User) {
    let (listed, served) = echo_server();
    let (unlisted, unlisted_served) = echo_server();
    // The network is off: a listed host port is not "the network".
    let config = format!(
        "mode = \"auto\"\n[sandbox]\nbackend = \"{backend}\"\n[sandbox.network]\nmode = \"off\"\nhost_ports = [\"{listed}\"]\n"
    );
    let t = Setup::new(user, &config);
    t.hide("ports", &format!("{listed} {unlisted}"));
    let client = r#"/usr/bin/python3 - $(cat .t/ports) <<'EOF'
import socket, sys
for port in sys.argv[1:]:
    try:
        s = socket.create_connection(("127.0.0.1", int(port)), timeout=5)
        s.sendall(b"ping-" + port.encode())
        print("port", port, "said", s.recv(64).decode())
    except OSError as e:
        print("port", port, "refused", e.errno)
EOF"#;
    let r = t.bash(client).await;
    let said = output(&r);
    assert!(said.contains(&format!("port {listed} said ping-{listed}")), "{backend} {user:?}: {r}");
    assert!(said.contains(&format!("port {unlisted} refused")), "{backend} {user:?}: {r}");
    assert_eq!(unlisted_served.load(std::sync::atomic::Ordering::SeqCst), 0);
    assert_eq!(served.load(std::sync::atomic::Ordering::SeqCst), 1);
    if backend == "bwrap" {
        // The forwarder, outside the sandbox, audited the connection.
        let audit =
            bridle_with_env(&t.dirs.data, &t.dirs.workspace, &["audit", "--kind", "network", "--json"], &[]).await;
        let rows = json_lines(&audit);
        let row = rows.iter().find(|r| r["payload"]["port"] == listed).unwrap_or_else(|| panic!("{rows:?}"));
        assert_eq!(row["payload"]["protocol"], "host-port", "{row}");
        assert_eq!(row["payload"]["source"], "host_ports", "{row}");
        assert!(row["payload"]["bytesSent"].as_u64().unwrap() > 0, "{row}");
    } else {
        assert!(r["details"]["sandboxGaps"].as_str().unwrap_or_default().contains("host ports"), "{r}");
    }
}

#[tokio::test]
async fn listed_host_ports_are_reached_with_the_network_off_and_unlisted_ones_are_not() {
    let _alone = ONE_NOBODY_AT_A_TIME.lock().await;
    for user in users() {
        for backend in BACKENDS {
            host_ports_on_purpose(backend, user).await;
        }
    }
}
