#![allow(clippy::unwrap_used)]

use super::*;
use std::sync::atomic::AtomicUsize;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A gate that answers every question the same way and keeps what it is told.
struct Desk {
    answer: Answer,
    asked: AtomicUsize,
    rows: Mutex<Vec<Connection>>,
}

#[async_trait]
impl Gate for Desk {
    async fn ask(&self, _: &HostRequest) -> Answer {
        self.asked.fetch_add(1, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(50)).await;
        self.answer.clone()
    }
    fn record(&self, connection: &Connection) {
        self.rows.lock().unwrap().push(connection.clone());
    }
}

/// An upstream that answers each connection with `hello` and then echoes.
async fn upstream() -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            tokio::spawn(async move {
                let _ = s.write_all(b"hello").await;
                let mut buf = [0u8; 1024];
                while let Ok(n) = s.read(&mut buf).await {
                    if n == 0 || s.write_all(&buf[..n]).await.is_err() {
                        break;
                    }
                }
            });
        }
    });
    port
}

fn proxy(mode: NetworkMode, allow: &[&str], deny: &[&str]) -> Arc<Proxy> {
    let s = |l: &[&str]| l.iter().map(|p| p.to_string()).collect();
    let resolver = SystemResolver::with_pinned("ok.test=127.0.0.1,bad.test=127.0.0.1,new.test=127.0.0.1").unwrap();
    Arc::new(
        Proxy::new(&NetworkConfig { mode, allow: s(allow), deny: s(deny), host_ports: Vec::new() }, Arc::new(resolver))
            .unwrap(),
    )
}

fn desk(answer: Answer) -> Arc<Desk> {
    Arc::new(Desk { answer, asked: AtomicUsize::new(0), rows: Mutex::default() })
}

fn serve(proxy: &Arc<Proxy>, desk: &Arc<Desk>) -> (Serving, SocketAddr) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    (proxy.serve(listener, credential(), "call-1", "curl x", desk.clone()).unwrap(), addr)
}

/// The call's credential in these tests.
fn credential() -> wire::Credential {
    wire::Credential::with_secret("t0k3n".into())
}

async fn connect_via(addr: SocketAddr, target: &str) -> (String, TcpStream) {
    let mut s = TcpStream::connect(addr).await.unwrap();
    let auth = credential().basic().to_string();
    s.write_all(format!("CONNECT {target} HTTP/1.1\r\nProxy-Authorization: Basic {auth}\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        let mut b = [0u8; 1];
        if s.read(&mut b).await.unwrap() == 0 {
            break;
        }
        head.push(b[0]);
    }
    (String::from_utf8(head).unwrap(), s)
}

#[tokio::test]
async fn an_allowed_host_is_tunnelled_and_counted_and_a_denied_one_is_refused_at_once() {
    let port = upstream().await;
    let p = proxy(NetworkMode::Allow, &["ok.test", "127.0.0.1"], &["bad.test"]);
    let d = desk(Answer::Once);
    let (serving, addr) = serve(&p, &d);

    let (head, mut s) = connect_via(addr, &format!("ok.test:{port}")).await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let mut hello = [0u8; 5];
    s.read_exact(&mut hello).await.unwrap();
    s.write_all(b"ping").await.unwrap();
    let mut echo = [0u8; 4];
    s.read_exact(&mut echo).await.unwrap();
    assert_eq!((&hello, &echo), (b"hello", b"ping"));
    drop(s);

    let (head, _) = connect_via(addr, &format!("bad.test:{port}")).await;
    assert!(head.starts_with("HTTP/1.1 403"), "{head}");

    let uses = serving.finish().await;
    assert_eq!(uses.len(), 2, "{uses:?}");
    let ok = uses.iter().find(|u| u.host == "ok.test").unwrap();
    let bad = uses.iter().find(|u| u.host == "bad.test").unwrap();
    assert!(ok.allowed && ok.sent == 4 && ok.received == 9, "{uses:?}");
    assert!(!bad.allowed && bad.reason.as_deref().unwrap().contains("denied"), "{uses:?}");
    let rows = d.rows.lock().unwrap();
    assert_eq!(rows.len(), 2);
    assert!(rows.iter().any(|r| r.source == Source::Deny("bad.test".into()) && !r.allowed));
    assert!(rows.iter().any(|r| r.host == "ok.test" && r.reached && r.address.is_some()));
    assert_eq!(d.asked.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn loopback_and_metadata_are_refused_even_when_every_host_is_allowed() {
    let port = upstream().await;
    let p = proxy(NetworkMode::Allow, &["*"], &[]);
    let d = desk(Answer::Once);
    let (serving, addr) = serve(&p, &d);
    for target in [
        format!("127.0.0.1:{port}"),
        format!("ok.test:{port}"),
        "169.254.169.254:80".into(),
        format!("localhost:{port}"),
    ] {
        let (head, _) = connect_via(addr, &target).await;
        assert!(head.starts_with("HTTP/1.1 403"), "{target}: {head}");
    }
    let uses = serving.finish().await;
    assert!(uses.iter().all(|u| !u.allowed), "{uses:?}");
    assert!(uses[1].reason.as_deref().unwrap().contains("ok.test resolves to 127.0.0.1"), "{uses:?}");
}

#[tokio::test]
async fn an_unknown_host_is_asked_about_once_for_all_its_connections_and_a_session_answer_sticks() {
    let port = upstream().await;
    let p = proxy(NetworkMode::Ask, &["127.0.0.1"], &[]);
    let d = desk(Answer::Session);
    let (serving, addr) = serve(&p, &d);
    let target = format!("new.test:{port}");
    let (a, b, c) = tokio::join!(connect_via(addr, &target), connect_via(addr, &target), connect_via(addr, &target));
    for (head, _) in [&a, &b, &c] {
        assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    }
    assert_eq!(d.asked.load(Ordering::SeqCst), 1);
    assert_eq!(p.session_hosts(), std::slice::from_ref(&target));
    drop((a, b, c));
    serving.finish().await;

    // The next command: the session's answer holds, nobody is asked.
    let (serving, addr) = serve(&p, &d);
    let (head, _) = connect_via(addr, &target).await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert_eq!(d.asked.load(Ordering::SeqCst), 1);
    serving.finish().await;

    let refusing = desk(Answer::Refused(Source::Timeout, "nobody answered".into()));
    let (serving, addr) = serve(&p, &refusing);
    let (head, _) = connect_via(addr, &format!("other.test:{port}")).await;
    assert!(head.starts_with("HTTP/1.1 403"), "{head}");
    assert_eq!(serving.finish().await[0].reason.as_deref(), Some("nobody answered"));
}

#[tokio::test]
async fn socks5_carries_any_tcp() {
    let port = upstream().await;
    let p = proxy(NetworkMode::Allow, &["ok.test", "127.0.0.1"], &[]);
    let d = desk(Answer::Once);
    let (serving, addr) = serve(&p, &d);
    let mut s = TcpStream::connect(addr).await.unwrap();
    let mut hello = vec![5, 1, 2, 1, 6];
    hello.extend_from_slice(b"bridle");
    hello.push(5);
    hello.extend_from_slice(b"t0k3n");
    hello.extend_from_slice(&[5, 1, 0, 3, 7]);
    hello.extend_from_slice(b"ok.test");
    hello.extend_from_slice(&port.to_be_bytes());
    s.write_all(&hello).await.unwrap();
    let mut reply = [0u8; 14];
    s.read_exact(&mut reply).await.unwrap();
    assert_eq!(&reply[..6], &[5, 2, 1, 0, 5, 0]);
    let mut greeting = [0u8; 5];
    s.read_exact(&mut greeting).await.unwrap();
    assert_eq!(&greeting, b"hello");
    drop(s);
    let uses = serving.finish().await;
    assert!(uses[0].allowed, "{uses:?}");
    assert_eq!(d.rows.lock().unwrap()[0].protocol, Protocol::Socks5);
}

#[tokio::test]
async fn a_call_asks_about_each_host_once_however_many_connections_wait() {
    // How many hosts a call may ask about is the call stream's bound (calls/stream.rs); the
    // proxy asks its gate once per host and keeps the answer.
    let p = proxy(NetworkMode::Ask, &[], &[]);
    let d = desk(Answer::Refused(Source::User, "denied by the user".into()));
    let (serving, addr) = serve(&p, &d);
    for i in 1..=10 {
        let (head, _) = connect_via(addr, &format!("h{i}.test:443")).await;
        assert!(head.starts_with("HTTP/1.1 403"), "{head}");
    }
    let (head, _) = connect_via(addr, "h1.test:443").await;
    assert!(head.starts_with("HTTP/1.1 403"), "{head}");
    assert_eq!(d.asked.load(Ordering::SeqCst), 10);
    let uses = serving.finish().await;
    assert_eq!(uses.len(), 10, "{uses:?}");
    assert_eq!(uses[0].connections, 2, "{uses:?}");
    let rows = d.rows.lock().unwrap();
    assert_eq!(rows.iter().filter(|r| r.source == Source::User).count(), 11);
}

/// Reads what the proxy says to `s` until it closes.
async fn said(s: &mut TcpStream) -> Vec<u8> {
    let mut out = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), s.read_to_end(&mut out)).await;
    out
}

#[tokio::test]
async fn connections_past_a_calls_bound_are_turned_away_at_once_and_recorded_together() {
    let p = proxy(NetworkMode::Allow, &["*"], &[]);
    let d = desk(Answer::Once);
    let (serving, addr) = serve(&p, &d);
    let mut held = Vec::new();
    for _ in 0..bounds::CALL_CONNECTIONS {
        held.push(TcpStream::connect(addr).await.unwrap());
    }
    let mut http = TcpStream::connect(addr).await.unwrap();
    http.write_all(b"CONNECT ok.test:443 HTTP/1.1\r\n\r\n").await.unwrap();
    let answer = String::from_utf8(said(&mut http).await).unwrap();
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert!(answer.contains("this command has 64 open, the most one command may"), "{answer}");
    let mut socks = TcpStream::connect(addr).await.unwrap();
    socks.write_all(&[5, 1, 2]).await.unwrap();
    assert_eq!(said(&mut socks).await, [5, 0xff]);
    // A place given back is taken again.
    drop(held.pop());
    tokio::time::sleep(Duration::from_millis(100)).await;
    let port = upstream().await;
    let (head, _) = connect_via(addr, &format!("127.0.0.1:{port}")).await;
    assert!(head.starts_with("HTTP/1.1 403"), "a place was not given back: {head}");
    drop(held);
    let uses = serving.finish().await;
    let unread = uses.iter().find(|u| u.host == "*").unwrap_or_else(|| panic!("{uses:?}"));
    assert_eq!((unread.port, unread.allowed, unread.connections), (0, false, 2), "{uses:?}");
    assert!(unread.reason.as_deref().unwrap().starts_with("2 connections turned away: too many"), "{uses:?}");
    let rows = d.rows.lock().unwrap();
    let row = rows.iter().find(|r| r.protocol == Protocol::Unread).unwrap();
    assert_eq!(row.source, Source::Limit);
}

#[tokio::test]
async fn a_sessions_commands_share_its_bound() {
    let p = proxy(NetworkMode::Allow, &["*"], &[]);
    let d = desk(Answer::Once);
    let mut calls = Vec::new();
    let mut held = Vec::new();
    for _ in 0..bounds::SESSION_CONNECTIONS / bounds::CALL_CONNECTIONS {
        let (serving, addr) = serve(&p, &d);
        for _ in 0..bounds::CALL_CONNECTIONS {
            held.push(TcpStream::connect(addr).await.unwrap());
        }
        calls.push(serving);
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    let (serving, addr) = serve(&p, &d);
    let mut late = TcpStream::connect(addr).await.unwrap();
    late.write_all(b"CONNECT ok.test:443 HTTP/1.1\r\n\r\n").await.unwrap();
    let answer = String::from_utf8(said(&mut late).await).unwrap();
    assert!(answer.contains("this session's commands have 256 open"), "{answer}");
    drop(held);
    serving.finish().await;
    for serving in calls {
        serving.finish().await;
    }
}

/// [`proxy`], with deadlines a test can wait for.
fn hasty(mode: NetworkMode, allow: &[&str]) -> (Arc<Proxy>, bounds::Deadlines) {
    let deadlines = bounds::Deadlines { handshake: Duration::from_millis(300), idle: Duration::from_millis(400) };
    let mut p = Arc::into_inner(proxy(mode, allow, &[])).unwrap();
    p.deadlines = deadlines;
    (Arc::new(p), deadlines)
}

#[tokio::test]
async fn a_client_that_says_nothing_or_too_slowly_is_cut_at_the_handshake_deadline() {
    let (p, deadlines) = hasty(NetworkMode::Allow, &["*"]);
    let d = desk(Answer::Once);
    let (serving, addr) = serve(&p, &d);
    let started = std::time::Instant::now();
    let mut silent = TcpStream::connect(addr).await.unwrap();
    let mut slow = TcpStream::connect(addr).await.unwrap();
    slow.write_all(b"CONNECT ok.te").await.unwrap();
    let mut buf = [0u8; 16];
    assert_eq!(silent.read(&mut buf).await.unwrap(), 0);
    assert_eq!(slow.read(&mut buf).await.unwrap(), 0);
    let waited = started.elapsed();
    assert!(waited >= deadlines.handshake && waited < deadlines.handshake * 5, "{waited:?}");
    serving.finish().await;
}

#[tokio::test]
async fn a_tunnel_that_carries_nothing_is_cut_after_the_idle_time() {
    let port = upstream().await;
    let (p, deadlines) = hasty(NetworkMode::Allow, &["ok.test", "127.0.0.1"]);
    let d = desk(Answer::Once);
    let (serving, addr) = serve(&p, &d);
    let (head, mut s) = connect_via(addr, &format!("ok.test:{port}")).await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let mut hello = [0u8; 5];
    s.read_exact(&mut hello).await.unwrap();
    // Traffic keeps it open past the idle time; then it sits idle and is cut.
    let started = std::time::Instant::now();
    for _ in 0..3 {
        tokio::time::sleep(deadlines.idle / 2).await;
        s.write_all(b"ping").await.unwrap();
        let mut echo = [0u8; 4];
        s.read_exact(&mut echo).await.unwrap();
    }
    let mut rest = Vec::new();
    s.read_to_end(&mut rest).await.unwrap();
    let waited = started.elapsed();
    assert!(waited >= deadlines.idle * 2, "{waited:?}");
    let uses = serving.finish().await;
    assert!(uses[0].reason.as_deref().unwrap().contains("cut after 0.4 s"), "{uses:?}");
    assert_eq!(uses[0].sent, 12, "{uses:?}");
}

#[tokio::test]
async fn a_forwarded_host_port_carries_at_most_a_calls_bound_at_once() {
    // The host's port: it keeps what connects.
    let host = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = host.local_addr().unwrap().port();
    tokio::spawn(async move {
        let mut kept = Vec::new();
        while let Ok((s, _)) = host.accept().await {
            kept.push(s);
        }
    });
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let d = desk(Answer::Once);
    let forwarding = forward(vec![(port, listener)], "call-1", Some(d.clone() as Arc<dyn Gate>)).unwrap().unwrap();
    let mut held = Vec::new();
    for _ in 0..bounds::CALL_CONNECTIONS {
        held.push(TcpStream::connect(addr).await.unwrap());
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    let mut over = TcpStream::connect(addr).await.unwrap();
    assert_eq!(said(&mut over).await, b"", "one past the bound is closed at once");
    forwarding.finish().await;
    let rows = d.rows.lock().unwrap();
    let unread = rows.iter().find(|r| r.protocol == Protocol::Unread).unwrap_or_else(|| panic!("{rows:?}"));
    assert_eq!(unread.source, Source::Limit);
    assert!(unread.reason.as_deref().unwrap().starts_with("1 connections turned away"), "{unread:?}");
    assert_eq!(rows.iter().filter(|r| r.protocol == Protocol::HostPort).count(), bounds::CALL_CONNECTIONS);
}
