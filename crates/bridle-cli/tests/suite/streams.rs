//! A model stream cut mid-answer, as `bridle run` meets it against aimock: the restart is said
//! (event and stderr), the text after it is exactly the final answer, and when the retries run
//! out the text the user saw stays in the session, marked cut off.

use serde_json::{json, Value};

use super::aimock::Aimock;
use super::bridle::*;

const ANSWER: &str =
    "Streams can break in the middle of an answer, and then the whole answer has to start again from the top.";

async fn model(fixtures: Value) -> (Aimock, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("streams.json"), json!({ "fixtures": fixtures }).to_string()).unwrap();
    (Aimock::start_with(dir.path()).await, dir)
}

async fn run(dirs: &Dirs, mock: &Aimock, prompt: &str, max_retries: u32) -> std::process::Output {
    std::fs::create_dir_all(&dirs.data).unwrap();
    let config = format!(
        "[provider]\nkind = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"m\"\n[limits]\nmax_retries = {max_retries}\n",
        mock.url
    );
    std::fs::write(dirs.data.join("config.toml"), config).unwrap();
    bridle(dirs, &["run", prompt, "--json"]).await
}

fn deltas_after_last_restart(events: &[Value]) -> String {
    let from = events.iter().rposition(|e| e["type"] == "streamRestarted").map_or(0, |i| i + 1);
    events[from..].iter().filter(|e| e["type"] == "assistantDelta").map(|e| e["text"].as_str().unwrap()).collect()
}

#[tokio::test]
async fn a_stream_cut_mid_answer_restarts_visibly_and_the_text_is_not_doubled() {
    let (mock, _f) = model(json!([
        {"match": {"userMessage": "explain streams", "sequenceIndex": 0},
         "response": {"content": ANSWER}, "truncateAfterChunks": 5, "latency": 10, "chunkSize": 10},
        {"match": {"userMessage": "explain streams", "sequenceIndex": 1}, "response": {"content": ANSWER}}
    ]))
    .await;
    let dirs = Dirs::new();
    let out = run(&dirs, &mock, "explain streams", 4).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let events = json_lines(&out);
    let restarts: Vec<&Value> = events.iter().filter(|e| e["type"] == "streamRestarted").collect();
    assert_eq!(restarts.len(), 1, "{events:?}");
    assert_eq!((restarts[0]["attempt"].as_u64(), restarts[0]["maxAttempts"].as_u64()), (Some(2), Some(5)));
    assert!(stderr(&out).contains("reconnecting (2/5)"), "{}", stderr(&out));
    let message = events.iter().find(|e| e["type"] == "assistantMessage").unwrap()["text"].as_str().unwrap();
    assert_eq!(message, ANSWER);
    assert_eq!(deltas_after_last_restart(&events), ANSWER, "the deltas after the restart are the answer, once");
    let before: usize =
        events.iter().take_while(|e| e["type"] != "streamRestarted").filter(|e| e["type"] == "assistantDelta").count();
    assert!(before > 0, "the cut stream had streamed something first");
}

#[tokio::test]
async fn when_the_retries_run_out_the_session_keeps_the_text_cut_off() {
    let (mock, _f) = model(json!([
        {"match": {"userMessage": "explain streams"}, "response": {"content": ANSWER}, "truncateAfterChunks": 5, "latency": 10, "chunkSize": 10}
    ]))
    .await;
    let dirs = Dirs::new();
    let out = run(&dirs, &mock, "explain streams", 1).await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let events = json_lines(&out);
    let seen = deltas_after_last_restart(&events);
    assert!(!seen.is_empty() && ANSWER.starts_with(&seen) && seen != ANSWER, "{seen:?}");
    assert_eq!(events.last().unwrap()["type"], "turnAborted");
    assert_eq!(events.last().unwrap()["reason"], "error");
    let session = events[0]["sessionId"].as_str().unwrap();
    let shown = bridle(&dirs, &["sessions", "show", session, "--json"]).await;
    let snapshot: Value = serde_json::from_str(stdout(&shown).trim()).unwrap();
    let last = &snapshot["items"].as_array().unwrap().last().unwrap()["item"];
    assert_eq!(last["type"], "assistant");
    assert_eq!(last["cutOff"], true);
    assert_eq!(last["text"], seen.as_str(), "what the user saw is what the session holds");
}
