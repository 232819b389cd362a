//! The network by the address too (DESIGN §5.2), through `bridle` as a real process: a `deny`
//! entry naming an address holds for every spelling and every name that reaches it, and every
//! IPv6 form carrying loopback or the metadata address, and the special IPv4 ranges, are refused
//! with every host allowed. The requests are sent by a raw client (curl tidies `127.1` into
//! `127.0.0.1` before a proxy sees it; the proxy must not rely on that).

use std::sync::atomic::Ordering;

use serde_json::Value;

use super::super::boundary::BACKENDS;
use super::super::sandbox::{output, Setup, User};
use super::{http_server, network_rows, PINNED};

/// A client that sends each target (`host:port`) to the command's proxy as it is spelt, by plain
/// HTTP or, prefixed `socks:`, as a SOCKS5 domain name; it prints `TARGET STATUS` a line (the HTTP
/// status, or the SOCKS5 reply code).
pub(super) const RAW_CLIENT: &str = r#"import base64, os, socket, sys, urllib.parse
p = urllib.parse.urlsplit(os.environ["HTTP_PROXY"])
auth = base64.b64encode(f"{p.username}:{p.password}".encode()).decode()
for target in sys.argv[1:]:
    s = socket.create_connection((p.hostname, p.port), timeout=10)
    if target.startswith("socks:"):
        host, port = target[6:].rsplit(":", 1)
        s.sendall(bytes([5, 1, 2, 1, len(p.username)]) + p.username.encode() + bytes([len(p.password)]) + p.password.encode())
        s.sendall(bytes([5, 1, 0, 3, len(host)]) + host.encode() + int(port).to_bytes(2, "big"))
        said = b""
        while len(said) < 6:
            chunk = s.recv(64)
            if not chunk: break
            said += chunk
        print(target, "socks" + str(said[5]) if len(said) >= 6 else "closed", flush=True)
        continue
    s.sendall(f"GET http://{target}/ HTTP/1.1\r\nHost: {target}\r\nProxy-Authorization: Basic {auth}\r\n\r\n".encode())
    said = b""
    while True:
        chunk = s.recv(4096)
        if not chunk: break
        said += chunk
    print(target, said.split(b" ", 2)[1].decode() if said.startswith(b"HTTP/") else "none", flush=True)
"#;

/// Runs [`RAW_CLIENT`] for `targets` (`$D` and `$O` in them are the ports in `.t/d` and `.t/o`);
/// the status each got.
async fn statuses(t: &Setup, targets: &[&str]) -> Vec<(String, String)> {
    let script = format!(
        "D=$(cat .t/d); O=$(cat .t/o); /usr/bin/python3 - {} <<'EOF'\n{RAW_CLIENT}EOF",
        targets.iter().map(|t| format!("\"{t}\"")).collect::<Vec<_>>().join(" ")
    );
    let r = t.bash(&script).await;
    let said = output(&r);
    assert!(said.starts_with("exit code 0\n"), "{r}");
    assert!(r["details"]["durationMs"].as_u64().unwrap() < 20_000, "refusals were not at once: {r}");
    // The lines before the hosts note.
    said.lines()
        .skip(1)
        .take_while(|l| !l.is_empty() && !l.starts_with("[network:"))
        .filter_map(|l| l.split_once(' '))
        .map(|(target, status)| (target.to_string(), status.to_string()))
        .collect()
}

#[tokio::test]
async fn a_denied_address_holds_for_every_spelling_and_every_name_that_reaches_it() {
    for backend in BACKENDS {
        let (denied, open) = (http_server(), http_server());
        let config = format!(
            "mode = \"auto\"\n[sandbox]\nbackend = \"{backend}\"\n[sandbox.network]\nmode = \"allow\"\n\
             allow = [\"*\", \"127.0.0.1\"]\ndeny = [\"127.0.0.1:{}\"]\n",
            denied.port
        );
        let t = Setup::new(User::Invoking, &config).with_env("BRIDLE_NET_RESOLVE", PINNED);
        t.hide("d", &denied.port.to_string());
        t.hide("o", &open.port.to_string());
        let spellings = [
            "127.0.0.1:$D",
            "127.1:$D",
            "localhost:$D",
            "2130706433:$D",
            "0177.0.0.1:$D",
            "0x7f.1:$D",
            "127.0.0.1.:$D",
            "[::ffff:127.0.0.1]:$D",
            "ok.test:$D",
            "socks:2130706433:$D",
            "socks:0177.1:$D",
            "socks:ok.test:$D",
            // Loopback is allowed: the same spellings reach another port.
            "127.1:$O",
            "ok.test:$O",
        ];
        let got = statuses(&t, &spellings).await;
        assert_eq!(got.len(), spellings.len(), "{backend}: {got:?}");
        for (target, status) in &got {
            let expected = match (target.ends_with(&open.port.to_string()), target.starts_with("socks:")) {
                (true, _) => "200",
                (false, true) => "socks2",
                (false, false) => "403",
            };
            assert_eq!(status, expected, "{backend} {target}: {got:?}");
        }
        assert_eq!(denied.served.load(Ordering::SeqCst), 0, "{backend}: the denied server was reached");
        assert_eq!(open.served.load(Ordering::SeqCst), 2, "{backend}");
        // The deny entry is what refused them (`localhost` may also resolve to `::1`, refused as loopback).
        let rows = network_rows(&t).await;
        let refused: Vec<&Value> = rows.iter().filter(|r| r["payload"]["port"] == denied.port).collect();
        assert_eq!(refused.len(), 12, "{backend}: {rows:?}");
        let by_deny = format!("deny 127.0.0.1:{}", denied.port);
        for row in refused.iter().filter(|r| r["payload"]["host"] != "localhost") {
            assert_eq!(row["payload"]["source"], by_deny.as_str(), "{backend}: {row}");
            assert_eq!(row["decision"], "deny", "{backend}: {row}");
        }
        let pinned = refused.iter().find(|r| r["payload"]["host"] == "ok.test").unwrap();
        let why = pinned["payload"]["reason"].as_str().unwrap();
        assert!(why.contains("ok.test resolves to 127.0.0.1") && why.contains("denied"), "{why}");
    }
}

#[tokio::test]
async fn every_ipv6_form_of_loopback_and_metadata_and_the_special_ranges_are_refused_with_every_host_allowed() {
    for backend in BACKENDS {
        let server = http_server();
        let config = format!(
            "mode = \"auto\"\n[sandbox]\nbackend = \"{backend}\"\n[sandbox.network]\nmode = \"allow\"\nallow = [\"*\"]\n"
        );
        let t = Setup::new(User::Invoking, &config);
        t.hide("d", &server.port.to_string());
        t.hide("o", &server.port.to_string());
        let targets = [
            "[::127.0.0.1]:$D",
            "[::ffff:127.0.0.1]:$D",
            "[::ffff:0:127.0.0.1]:$D",
            "[64:ff9b::7f00:1]:$D",
            "[2002:7f00:1::1]:$D",
            "[::1]:$D",
            "[::169.254.169.254]:80",
            "[::ffff:169.254.169.254]:80",
            "[64:ff9b::a9fe:a9fe]:80",
            "[2002:a9fe:a9fe::1]:80",
            "[64:ff9b:1::a9fe:a9fe]:80",
            "[2001:0:4136:e378:8000:63bf:3fff:fdd2]:80",
            "[fe80::a9fe:a9fe]:80",
            "[fd00:ec2::254]:80",
            "169.254.169.254:80",
            "2852039166:80",
            "198.18.0.1:80",
            "192.0.0.1:80",
            "100.64.0.1:80",
            "240.0.0.1:80",
            "0.0.0.0:$D",
            "255.255.255.255:80",
            "224.0.0.1:80",
        ];
        let got = statuses(&t, &targets).await;
        assert_eq!(got.len(), targets.len(), "{backend}: {got:?}");
        for (target, status) in &got {
            assert_eq!(status, "403", "{backend} {target}: {got:?}");
        }
        assert_eq!(server.served.load(Ordering::SeqCst), 0, "{backend}: a refused address was reached");
        let rows = network_rows(&t).await;
        assert_eq!(rows.len(), targets.len(), "{backend}: {rows:?}");
        assert!(rows.iter().all(|r| r["decision"] == "deny" && r["payload"]["source"] == "address"), "{rows:?}");
        let reason = |host: &str| {
            let row = rows.iter().find(|r| r["payload"]["host"] == host).unwrap_or_else(|| panic!("{host}: {rows:?}"));
            row["payload"]["reason"].as_str().unwrap().to_string()
        };
        assert!(reason("64:ff9b::7f00:1").contains("NAT64 form of 127.0.0.1, a loopback address"));
        assert!(reason("2002:a9fe:a9fe::1").contains("6to4 form of 169.254.169.254, a link-local address"));
        assert!(reason("198.18.0.1").contains("benchmarking"));
    }
}
