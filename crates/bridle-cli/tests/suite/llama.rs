//! Against a real llama.cpp server (`scripts/setup-llama.sh` builds it once into the cache), with
//! a 135M model on this CPU, as a user pointing Bridle at a model on their own machine would:
//! both wire formats answer; the window in force is what `/props` says, a larger config is
//! corrected, and `bridle models` lists the model with that window; the server killed
//! mid-answer and started again gives a visible restart whose deltas equal the final message;
//! killed for good, the partial text stays, cut off; a server too small for the request gives
//! the server's clear error. One test, run in order: each server takes both cores.

use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use super::bridle::*;

fn llama_dir() -> std::path::PathBuf {
    std::env::var_os("BRIDLE_LLAMA_DIR").map(Into::into).unwrap_or_else(|| {
        let home = std::env::var_os("HOME").unwrap_or_default();
        std::path::PathBuf::from(home).join(".cache/bridle/llama-11434")
    })
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A llama-server on `port` with `ctx` tokens of context, generating at most `max_tokens`.
async fn start(port: u16, ctx: u32, max_tokens: u32) -> Child {
    let dir = llama_dir();
    let server = dir.join("build/bin/llama-server");
    assert!(server.exists(), "{} is missing: run scripts/setup-llama.sh (npm test does)", server.display());
    let mut child = Command::new(server)
        .arg("-m")
        .arg(dir.join("SmolLM2-135M-Instruct.Q4_1.gguf"))
        .args(["--host", "127.0.0.1", "--port", &port.to_string(), "-c", &ctx.to_string(), "-t", "2"])
        .args(["-n", &max_tokens.to_string(), "--no-webui", "--offline", "--jinja", "--seed", "1", "--temp", "0"])
        .arg("--chat-template-file")
        .arg(dir.join("chatml-tools.jinja"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("llama-server starts");
    let url = format!("http://127.0.0.1:{port}/health");
    let started = Instant::now();
    loop {
        if let Ok(r) = reqwest::get(&url).await {
            if r.status().is_success() {
                return child;
            }
        }
        assert!(started.elapsed() < Duration::from_secs(60), "llama-server did not become healthy");
        if let Ok(Some(status)) = child.try_wait() {
            panic!("llama-server exited: {status}");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn config(dirs: &Dirs, kind: &str, base_url: &str, extra: &str) {
    std::fs::create_dir_all(&dirs.data).unwrap();
    let text = format!(
        "mode = \"auto\"\n[provider]\nkind = \"{kind}\"\nbase_url = \"{base_url}\"\nmodel = \"smollm2\"\n{extra}"
    );
    std::fs::write(dirs.data.join("config.toml"), text).unwrap();
}

fn text_of(events: &[Value]) -> Option<String> {
    events.iter().rev().find(|e| e["type"] == "assistantMessage").and_then(|e| e["text"].as_str().map(String::from))
}

fn deltas_after_last_restart(events: &[Value]) -> String {
    let from = events.iter().rposition(|e| e["type"] == "streamRestarted").map_or(0, |i| i + 1);
    events[from..].iter().filter(|e| e["type"] == "assistantDelta").filter_map(|e| e["text"].as_str()).collect()
}

/// `bridle run --json` as a child whose events are read line by line; `on_event` sees each and
/// may act (kill the server).
async fn run_watching(
    dirs: &Dirs,
    prompt: &str,
    mut on_event: impl FnMut(&Value),
) -> (Option<i32>, Vec<Value>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_bridle"))
        .args(["run", prompt, "--json", "--data-dir"])
        .arg(&dirs.data)
        .arg("--workspace")
        .arg(&dirs.workspace)
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut stderr = child.stderr.take().unwrap();
    let mut events = Vec::new();
    while let Ok(Some(line)) =
        tokio::time::timeout(Duration::from_secs(240), lines.next_line()).await.expect("bridle run stalled")
    {
        let event: Value = serde_json::from_str(&line).unwrap();
        on_event(&event);
        events.push(event);
    }
    let mut err = String::new();
    tokio::io::AsyncReadExt::read_to_string(&mut stderr, &mut err).await.unwrap();
    let status = child.wait().await.unwrap();
    (status.code(), events, err)
}

#[tokio::test]
async fn a_real_llama_server_in_both_wire_formats_with_its_window_broken_streams_and_a_small_context() {
    // Both wire formats answer; the window is the server's (4096), not the config's 32768.
    let port = free_port();
    let server = start(port, 4096, 24).await;
    let props: Value = reqwest::get(format!("http://127.0.0.1:{port}/props")).await.unwrap().json().await.unwrap();
    let served = props["default_generation_settings"]["n_ctx"].as_u64().unwrap();
    for (kind, base) in
        [("openai", format!("http://127.0.0.1:{port}/v1")), ("anthropic", format!("http://127.0.0.1:{port}"))]
    {
        let dirs = Dirs::new();
        config(&dirs, kind, &base, "context_window = 32768\n");
        let (code, events, err) = run_watching(&dirs, "Say hello in five words.", |_| {}).await;
        assert_eq!(code, Some(0), "{kind}: {err}");
        assert!(text_of(&events).is_some_and(|t| !t.trim().is_empty()), "{kind}: no answer: {events:?}");
        let window = events.iter().find(|e| e["type"] == "tokenUsage").and_then(|e| e["contextWindow"].as_u64());
        assert_eq!(window, Some(served), "{kind}: the window in force is what /props says");
        let warning = events.iter().find(|e| e["type"] == "warning" && e["code"] == "context_window_corrected");
        assert!(warning.is_some(), "{kind}: the larger config is corrected: {events:?}");
        // `bridle models` asks /props as the session does (issue 27: it said null).
        let out = bridle(&dirs, &["models", "--json"]).await;
        assert_eq!(out.status.code(), Some(0), "{kind}: {}", stderr(&out));
        let listed: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
        let models = listed["models"].as_array().unwrap();
        assert_eq!(models.len(), 1, "{kind}: {listed}");
        assert_eq!(models[0]["contextWindow"].as_u64(), Some(served), "{kind}: {listed}");
    }
    drop(server);

    // Killed mid-answer, started again on the same port: a visible restart, no doubled text.
    let port = free_port();
    let server = std::sync::Arc::new(tokio::sync::Mutex::new(Some(start(port, 4096, 160).await)));
    let dirs = Dirs::new();
    config(&dirs, "openai", &format!("http://127.0.0.1:{port}/v1"), "[limits]\nmax_retries = 6\n");
    let (kill, mut killed) = (server.clone(), false);
    let mut deltas = 0;
    let (code, events, err) = run_watching(&dirs, "Write a long story about a lighthouse keeper.", |e| {
        if e["type"] == "assistantDelta" {
            deltas += 1;
        }
        if deltas == 20 && !killed {
            killed = true;
            let kill = kill.clone();
            tokio::spawn(async move {
                let mut guard = kill.lock().await;
                if let Some(mut child) = guard.take() {
                    let _ = child.kill().await;
                }
                *guard = Some(start(port, 4096, 160).await);
            });
        }
    })
    .await;
    assert!(killed, "the server never streamed 20 deltas: {events:?}");
    assert_eq!(code, Some(0), "{err}");
    assert!(events.iter().any(|e| e["type"] == "streamRestarted"), "{events:?}");
    assert!(err.contains("reconnecting ("), "{err}");
    assert_eq!(
        Some(deltas_after_last_restart(&events)),
        text_of(&events),
        "the deltas after the restart are the answer"
    );
    server.lock().await.take();

    // Killed for good: the partial text stays in the session, cut off.
    let port = free_port();
    let server = std::sync::Arc::new(tokio::sync::Mutex::new(Some(start(port, 4096, 160).await)));
    let dirs = Dirs::new();
    config(&dirs, "openai", &format!("http://127.0.0.1:{port}/v1"), "[limits]\nmax_retries = 1\n");
    let kill = server.clone();
    let mut deltas = 0;
    let (code, events, _) = run_watching(&dirs, "Write a long story about a lighthouse keeper.", |e| {
        if e["type"] == "assistantDelta" {
            deltas += 1;
            if deltas == 20 {
                let kill = kill.clone();
                tokio::spawn(async move {
                    if let Some(mut child) = kill.lock().await.take() {
                        let _ = child.kill().await;
                    }
                });
            }
        }
    })
    .await;
    assert_eq!(code, Some(1));
    let session = events[0]["sessionId"].as_str().unwrap();
    let shown: Value =
        serde_json::from_str(stdout(&bridle(&dirs, &["sessions", "show", session, "--json"]).await).trim()).unwrap();
    let last = &shown["items"].as_array().unwrap().last().unwrap()["item"];
    assert_eq!(last["cutOff"], true, "{last}");
    assert!(!last["text"].as_str().unwrap().is_empty());

    // A server too small for the instructions and tools: its own clear error, exit 1.
    let port = free_port();
    let _small = start(port, 1024, 16).await;
    let dirs = Dirs::new();
    config(&dirs, "openai", &format!("http://127.0.0.1:{port}/v1"), "");
    let (code, events, _) = run_watching(&dirs, "Say hello.", |_| {}).await;
    assert_eq!(code, Some(1));
    let error = events.iter().find(|e| e["type"] == "error").expect("an error event");
    let message = error["info"]["message"].as_str().unwrap();
    assert!(message.contains("exceeds the available context size"), "{message}");
}
