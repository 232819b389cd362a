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
    let dirs = Dirs::new();
    std::fs::write(dirs.workspace.join("note.txt"), "hello from the note\n").unwrap();
    std::fs::create_dir_all(&dirs.data).unwrap();
    let config = format!(
        "mode = \"auto\"\n[provider]\nkind = \"ollama\"\nbase_url = \"{}\"\nmodel = \"qwen2.5-coder\"\ncontext_window = 16384\n",
        mock.url
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
