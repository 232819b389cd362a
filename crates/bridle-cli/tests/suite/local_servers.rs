//! Local model servers as a user meets them: `kind = "ollama"` against aimock's Ollama
//! endpoint (`/api/chat`, newline-delimited JSON) — an answer, a tool call and its result — and
//! `bridle models` listing what a server offers, for each kind.

use serde_json::json;

use super::aimock::Aimock;
use super::bridle::*;

#[tokio::test]
async fn ollama_native_answers_calls_a_tool_and_reads_its_result() {
    let dir = tempfile::tempdir().unwrap();
    let fixtures = json!({"fixtures": [
        {"match": {"userMessage": "read the note", "hasToolResult": false},
         "response": {"toolCalls": [{"id": "r1", "name": "read_file", "arguments": {"path": "note.txt"}}]}},
        {"match": {"userMessage": "read the note", "hasToolResult": true}, "response": {"content": "The note says hello."}}
    ]});
    std::fs::write(dir.path().join("ollama.json"), fixtures.to_string()).unwrap();
    let mock = Aimock::start_with(dir.path()).await;
    // aimock normalises what it keeps of an Ollama body (options go): a pass-through in front of
    // it records the raw requests.
    let (proxy, raw) = recording_proxy(&mock.url).await;
    let dirs = Dirs::new();
    std::fs::write(dirs.workspace.join("note.txt"), "hello from the note\n").unwrap();
    std::fs::create_dir_all(&dirs.data).unwrap();
    let config = format!(
        "mode = \"auto\"\n[provider]\nkind = \"ollama\"\nbase_url = \"{proxy}\"\nmodel = \"qwen2.5-coder\"\ncontext_window = 16384\n"
    );
    std::fs::write(dirs.data.join("config.toml"), config).unwrap();
    let out = bridle(&dirs, &["run", "read the note", "--json"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let events = json_lines(&out);
    let end = events.iter().find(|e| e["type"] == "toolCallEnd").expect("the tool ran");
    assert!(end["result"]["output"].as_str().unwrap().contains("hello from the note"), "{end}");
    let answer = events.iter().find(|e| e["type"] == "assistantMessage").unwrap();
    assert_eq!(answer["text"], "The note says hello.");
    // Both requests went to Ollama's own endpoint, the second carrying the tool's result.
    let journal = mock.journal().await;
    assert_eq!(journal.len(), 2, "{journal:?}");
    let second = journal[1].to_string();
    assert!(second.contains("hello from the note"), "{second}");
    let window = events.iter().find(|e| e["type"] == "tokenUsage").and_then(|e| e["contextWindow"].as_u64());
    assert_eq!(window, Some(16384), "the window sent as num_ctx is the one in force");
    let chats: Vec<serde_json::Value> = raw
        .lock()
        .unwrap()
        .iter()
        .filter(|(path, _)| path == "/api/chat")
        .map(|(_, body)| serde_json::from_slice(body).unwrap())
        .collect();
    // The first request of each connection is kept (later ones on a kept-alive connection pass through).
    assert!(!chats.is_empty());
    for chat in &chats {
        assert_eq!(chat["options"]["num_ctx"], 16384, "the raw body carries num_ctx");
    }
}

/// A pass-through to `upstream` that keeps the path and body of each connection's first request.
async fn recording_proxy(upstream: &str) -> (String, std::sync::Arc<std::sync::Mutex<Vec<(String, Vec<u8>)>>>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let (kept, upstream) = (seen.clone(), upstream.trim_start_matches("http://").to_string());
    tokio::spawn(async move {
        while let Ok((mut client, _)) = listener.accept().await {
            let (kept, upstream) = (kept.clone(), upstream.clone());
            tokio::spawn(async move {
                // Read the whole request (head and content-length body).
                let mut data = Vec::new();
                let mut buf = [0u8; 16384];
                let (end, len) = loop {
                    let n = client.read(&mut buf).await.unwrap_or(0);
                    if n == 0 {
                        return;
                    }
                    data.extend_from_slice(&buf[..n]);
                    if let Some(end) = data.windows(4).position(|w| w == b"\r\n\r\n") {
                        let head = String::from_utf8_lossy(&data[..end]).to_lowercase();
                        let len: usize = head
                            .lines()
                            .find_map(|l| l.strip_prefix("content-length:"))
                            .map_or(0, |v| v.trim().parse().unwrap());
                        break (end, len);
                    }
                };
                while data.len() < end + 4 + len {
                    let n = client.read(&mut buf).await.unwrap_or(0);
                    if n == 0 {
                        break;
                    }
                    data.extend_from_slice(&buf[..n]);
                }
                let path = String::from_utf8_lossy(&data[..end]).split_whitespace().nth(1).unwrap_or("").to_string();
                kept.lock().unwrap().push((path, data[end + 4..].to_vec()));
                let Ok(mut server) = tokio::net::TcpStream::connect(&upstream).await else { return };
                let _ = server.write_all(&data).await;
                let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
            });
        }
    });
    (url, seen)
}

#[tokio::test]
async fn bridle_models_lists_what_the_server_offers() {
    let mock = Aimock::start().await;
    let dirs = Dirs::new();
    let base = format!("{}/v1", mock.url);
    let out = bridle(&dirs, &["models", "--json", "--provider", "openai", "--base-url", &base]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let listed: serde_json::Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    let models = listed["models"].as_array().unwrap();
    assert!(!models.is_empty(), "{listed}");
    assert!(models.iter().all(|m| m["id"].is_string() && m.get("contextWindow").is_some()), "{listed}");

    let out = bridle(&dirs, &["models", "--json", "--provider", "ollama", "--base-url", &mock.url]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let listed: serde_json::Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert!(listed["models"].is_array(), "{listed}");

    // A server that is not there is a clear error naming it.
    let out = bridle(&dirs, &["models", "--provider", "openai", "--base-url", "http://127.0.0.1:9/v1"]).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("127.0.0.1:9"), "{}", stderr(&out));
}
