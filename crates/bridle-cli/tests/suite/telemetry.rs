//! `[telemetry]` against a loopback OTLP/HTTP receiver that decodes with the official protobuf
//! definitions (tests/otel/receiver.py, opentelemetry-proto from PyPI): one `bridle run` with a
//! read, a denied command and an approved write sends one log record per audit row with its
//! `seq` and `hash`, a turn span with an `execute_tool` span per call, and token metrics, and
//! no secret of the run in any byte. A stopped receiver costs the run nothing and leaves one
//! `warning` row counting what was dropped; a receiver that answers after 5 s does not slow
//! the turn.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::io::AsyncBufReadExt;

use super::aimock::{repo_root, Aimock};
use super::bridle::*;

pub(super) const API_KEY: &str = "sk-proj-TeLeMeTrYkEy0123456789abcdefGHIJKLmnopQRSTuvwx";
pub(super) const FILE_SECRET: &str = "ghp_TeLeMeTrY0123456789abcdefghijklmnopqr";

/// The receiver's Python, from scripts/setup-otel.sh.
fn python() -> PathBuf {
    let venv = std::env::var("BRIDLE_OTEL_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from(std::env::var("HOME").unwrap()).join(".cache/bridle/otel-venv"));
    let bin = venv.join("bin/python");
    assert!(bin.exists(), "{} is missing: run scripts/setup-otel.sh", bin.display());
    bin
}

pub(super) struct Receiver {
    _child: tokio::process::Child,
    pub url: String,
    out: tempfile::TempDir,
}

impl Receiver {
    pub(super) async fn start(delay_secs: f64) -> Receiver {
        let out = tempfile::tempdir().unwrap();
        let mut child = tokio::process::Command::new(python())
            .arg(repo_root().join("tests/otel/receiver.py"))
            .arg(out.path())
            .arg(delay_secs.to_string())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
        let port = tokio::time::timeout(Duration::from_secs(20), lines.next_line()).await.unwrap().unwrap().unwrap();
        Receiver { _child: child, url: format!("http://127.0.0.1:{}", port.trim()), out }
    }

    /// Every request received, decoded: `{path, headers, request}`.
    pub(super) fn requests(&self, path: &str) -> Vec<Value> {
        let text = std::fs::read_to_string(self.out.path().join("decoded.jsonl")).unwrap_or_default();
        text.lines().map(|l| serde_json::from_str::<Value>(l).unwrap()).filter(|r| r["path"] == path).collect()
    }

    fn raw(&self) -> Vec<u8> {
        std::fs::read(self.out.path().join("raw.bin")).unwrap_or_default()
    }
}

/// A URL where nothing listens.
fn dead_endpoint() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    format!("http://127.0.0.1:{port}")
}

/// One `bridle run` with a read (of a file holding a secret), a command a rule denies and a
/// write approved at the prompt, exporting to `endpoint` when given: the dirs, the output and
/// how long the process took.
pub(super) async fn run(endpoint: Option<&str>) -> (Dirs, std::process::Output, Duration) {
    let dirs = Dirs::new();
    std::fs::write(dirs.workspace.join("a.txt"), format!("token = {FILE_SECRET}\n")).unwrap();
    let fixtures = tempfile::tempdir().unwrap();
    let calls = json!([
        {"id": "call_read", "name": "read_file", "arguments": {"path": "a.txt"}},
        {"id": "call_push", "name": "bash", "arguments": {"command": "git push origin main"}},
        {"id": "call_write", "name": "write_file", "arguments": {"path": "b.txt", "content": "hello\n"}}
    ]);
    let script = json!({"fixtures": [
        {"match": {"userMessage": "record it", "hasToolResult": false},
         "response": {"toolCalls": calls, "usage": {"prompt_tokens": 120, "completion_tokens": 30}}},
        {"match": {"userMessage": "record it", "hasToolResult": true},
         "response": {"content": "Done.", "usage": {"prompt_tokens": 200, "completion_tokens": 5}}}
    ]});
    std::fs::write(fixtures.path().join("script.json"), script.to_string()).unwrap();
    let mock = Aimock::start_with(fixtures.path()).await;
    std::fs::create_dir_all(&dirs.data).unwrap();
    let mut config = format!(
        "mode = \"ask\"\n[provider]\nkind = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"mock-model\"\n\
         [rules]\ndeny = [\"bash(git push*)\"]\n",
        mock.url
    );
    if let Some(endpoint) = endpoint {
        config.push_str(&format!("[telemetry]\nendpoint = \"{endpoint}\"\n"));
    }
    std::fs::write(dirs.data.join("config.toml"), config).unwrap();
    let started = Instant::now();
    let out = bridle_with_env(
        &dirs.data,
        &dirs.workspace,
        &["run", &format!("record it; my key is {API_KEY}"), "--on-ask", "approve", "--json"],
        &[("OPENAI_API_KEY", API_KEY)],
    )
    .await;
    let took = started.elapsed();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(dirs.workspace.join("b.txt")).unwrap(), "hello\n");
    (dirs, out, took)
}

pub(super) async fn audit(dirs: &Dirs) -> Vec<Value> {
    json_lines(&bridle(dirs, &["audit", "--json", "--limit", "100000"]).await)
}

/// An OTLP attribute list as `key -> value` (the JSON mapping's `stringValue`, `intValue`, …).
fn attributes(list: &Value) -> std::collections::BTreeMap<String, Value> {
    list.as_array()
        .map(|a| {
            a.iter()
                .map(|kv| {
                    let value = kv["value"].as_object().and_then(|o| o.values().next().cloned()).unwrap_or(Value::Null);
                    (kv["key"].as_str().unwrap().to_string(), value)
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The turn's length as the audit saw it: its user message to its last row.
fn turn_ms(rows: &[Value]) -> i64 {
    let start = rows.iter().find(|r| r["kind"] == "user_message").unwrap()["at"].as_i64().unwrap();
    let end = rows.iter().filter(|r| r["kind"] != "warning").map(|r| r["at"].as_i64().unwrap()).max().unwrap();
    end - start
}

#[tokio::test]
async fn the_collector_gets_every_audit_row_spans_and_token_metrics_and_no_secret() {
    let receiver = Receiver::start(0.0).await;
    let (dirs, _out, took) = run(Some(&receiver.url)).await;
    eprintln!("bridle run with telemetry: {took:?}");
    let rows = audit(&dirs).await;
    assert!(rows.iter().any(|r| r["kind"] == "guard_decision" && r["decision"] == "deny"), "the push was denied");
    assert!(
        rows.iter().any(|r| r["kind"] == "approval_resolved" && r["decision"] == "allow"),
        "the write was approved"
    );

    // One log record per row, with its seq and hash.
    let mut records = Vec::new();
    for request in receiver.requests("/v1/logs") {
        for resource in request["request"]["resourceLogs"].as_array().unwrap() {
            for scope in resource["scopeLogs"].as_array().unwrap() {
                records.extend(scope["logRecords"].as_array().unwrap().iter().map(|r| attributes(&r["attributes"])));
            }
        }
    }
    let exported: BTreeSet<(i64, String, String)> = records
        .iter()
        .map(|a| {
            let seq = a["bridle.audit.seq"].as_str().unwrap().parse().unwrap();
            (
                seq,
                a["bridle.audit.hash"].as_str().unwrap().to_string(),
                a["bridle.audit.kind"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let logged: BTreeSet<(i64, String, String)> = rows
        .iter()
        .map(|r| {
            (
                r["id"].as_i64().unwrap(),
                r["hash"].as_str().unwrap().to_string(),
                r["kind"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(records.len(), rows.len(), "one record per row");
    assert_eq!(exported, logged);
    let denied = records.iter().find(|a| a.get("bridle.decision").is_some_and(|d| d == "deny")).unwrap();
    assert_eq!(denied["gen_ai.tool.name"], "bash");
    assert!(
        denied.contains_key("bridle.decision.source") && denied.contains_key("gen_ai.conversation.id"),
        "{denied:?}"
    );

    // A turn span, and an execute_tool span per call under it.
    let mut spans = Vec::new();
    for request in receiver.requests("/v1/traces") {
        for resource in request["request"]["resourceSpans"].as_array().unwrap() {
            for scope in resource["scopeSpans"].as_array().unwrap() {
                spans.extend(scope["spans"].as_array().unwrap().iter().cloned());
            }
        }
    }
    let names: Vec<&str> = spans.iter().map(|s| s["name"].as_str().unwrap()).collect();
    eprintln!("spans: {names:?}");
    let turn = spans.iter().find(|s| s["name"] == "invoke_agent bridle").expect("a turn span");
    for tool in ["read_file", "bash", "write_file"] {
        let span = spans
            .iter()
            .find(|s| s["name"] == format!("execute_tool {tool}"))
            .unwrap_or_else(|| panic!("{tool}: {names:?}"));
        assert_eq!(span["parentSpanId"], turn["spanId"], "{tool} under the turn");
        assert_eq!(span["traceId"], turn["traceId"]);
        let a = attributes(&span["attributes"]);
        assert_eq!(
            (a["gen_ai.operation.name"].clone(), a["gen_ai.tool.name"].clone()),
            (json!("execute_tool"), json!(tool))
        );
    }
    let chat = spans.iter().find(|s| s["name"] == "chat mock-model").expect("a chat span");
    assert_eq!(attributes(&chat["attributes"])["gen_ai.usage.input_tokens"], "120");

    // Token usage as a metric, input and output.
    let metrics: Vec<Value> = receiver
        .requests("/v1/metrics")
        .iter()
        .flat_map(|r| r["request"]["resourceMetrics"].as_array().cloned().unwrap_or_default())
        .flat_map(|r| r["scopeMetrics"].as_array().cloned().unwrap_or_default())
        .flat_map(|s| s["metrics"].as_array().cloned().unwrap_or_default())
        .collect();
    let tokens = metrics.iter().find(|m| m["name"] == "gen_ai.client.token.usage").expect("token metrics");
    let sums: Vec<(String, String)> = tokens["histogram"]["dataPoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (attributes(&p["attributes"])["gen_ai.token.type"].as_str().unwrap().to_string(), p["sum"].to_string())
        })
        .collect();
    assert!(
        sums.contains(&("input".into(), "320.0".into())) && sums.contains(&("output".into(), "35.0".into())),
        "{sums:?}"
    );
    for name in ["bridle.decisions", "bridle.tool.duration"] {
        assert!(metrics.iter().any(|m| m["name"] == name), "{name}");
    }

    // No secret of the run in any byte the collector got.
    let raw = receiver.raw();
    assert!(raw.len() > 1000, "{} bytes received", raw.len());
    for secret in [API_KEY, FILE_SECRET] {
        assert!(!raw.windows(secret.len()).any(|w| w == secret.as_bytes()), "{secret} was exported");
    }
}

#[tokio::test]
async fn a_stopped_collector_costs_the_run_nothing_and_one_warning_counts_the_drops() {
    let (_, _, off) = run(None).await;
    let (dirs, _, dead) = run(Some(&dead_endpoint())).await;
    eprintln!("bridle run: telemetry off {off:?}, collector stopped {dead:?}");
    let rows = audit(&dirs).await;
    let warnings: Vec<&Value> = rows.iter().filter(|r| r["kind"] == "warning" && r["status"] == "telemetry").collect();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    let warning = warnings[0];
    let before = rows.iter().filter(|r| r["id"].as_i64() < warning["id"].as_i64()).count() as u64;
    assert_eq!(warning["payload"]["dropped"].as_u64(), Some(before), "{warning}");
    assert!(warning["payload"]["message"].as_str().unwrap().contains("dropped"), "{warning}");
}

#[tokio::test]
async fn a_slow_collector_does_not_slow_the_turn() {
    let receiver = Receiver::start(5.0).await;
    let (base_dirs, _, base) = run(None).await;
    let (dirs, _, slow) = run(Some(&receiver.url)).await;
    let (base_turn, slow_turn) = (turn_ms(&audit(&base_dirs).await), turn_ms(&audit(&dirs).await));
    eprintln!(
        "turn: telemetry off {base_turn} ms, collector answering after 5 s {slow_turn} ms; \
         whole process {base:?} vs {slow:?} (the exit flushes for at most 2 s)"
    );
    assert!(slow_turn < base_turn + 2000, "the turn waited for the collector: {slow_turn} ms vs {base_turn} ms");
    assert!(slow < base + Duration::from_secs(5), "exit waited past its 2 s flush: {slow:?} vs {base:?}");
}
