//! `bridle run` against a real aimock server, in both wire formats.

use pretty_assertions::assert_eq;
use serde_json::Value;

use super::aimock::Aimock;
use super::bridle::*;

fn provider_args(kind: &str, url: &str) -> Vec<String> {
    let base = if kind == "openai" { format!("{url}/v1") } else { url.to_string() };
    ["--provider", kind, "--base-url", &base, "--model", "mock-model"].iter().map(|s| s.to_string()).collect()
}

fn types(events: &[Value]) -> Vec<&str> {
    events.iter().map(|e| e["type"].as_str().unwrap()).collect()
}

#[tokio::test]
async fn run_json_prints_every_event_of_a_tool_using_turn() {
    for kind in ["openai", "anthropic"] {
        let mock = Aimock::start().await;
        let dirs = Dirs::new();
        let mut args = vec!["run", "what time is it?", "--json", "--mode", "auto"];
        let provider = provider_args(kind, &mock.url);
        args.extend(provider.iter().map(String::as_str));
        let out = bridle(&dirs, &args).await;
        assert_eq!(out.status.code(), Some(0), "{kind}: {}", stderr(&out));

        let events = json_lines(&out);
        let t = types(&events);
        assert_eq!(t.first(), Some(&"turnStarted"), "{kind}: {t:?}");
        assert_eq!(t.last(), Some(&"turnCompleted"), "{kind}: {t:?}");
        let begin = t.iter().position(|x| *x == "toolCallBegin").unwrap();
        let end = t.iter().position(|x| *x == "toolCallEnd").unwrap();
        let message = t.iter().position(|x| *x == "assistantMessage").unwrap();
        assert!(begin < end && end < message, "{kind}: {t:?}");
        let session = events[0]["sessionId"].as_str().unwrap();
        assert!(events.iter().all(|e| e["sessionId"] == session), "every event names the session");

        let call = &events[begin]["call"];
        assert_eq!(call["name"], "get_current_time");
        assert_eq!(call["providerId"], "call_time");
        assert_ne!(call["id"], "call_time", "Bridle's own id, not the provider's");
        let result = &events[end]["result"];
        assert_eq!(result["isError"], false);
        assert!(result["output"].as_str().unwrap().ends_with("+00:00 (UTC)"), "{result}");
        assert_eq!(events[message]["text"], "It is time to ship.");

        // What the model saw on the second request: the tool result under its own id.
        let journal = mock.journal().await;
        assert_eq!(journal.len(), 2, "{kind}");
        let body = journal[1].to_string();
        assert!(body.contains("call_time") && body.contains("(UTC)"), "{kind}: {body}");
    }
}

#[tokio::test]
async fn a_session_resumes_after_the_first_process_exited() {
    for kind in ["openai", "anthropic"] {
        let mock = Aimock::start().await;
        let dirs = Dirs::new();
        let provider = provider_args(kind, &mock.url);
        let mut first = vec!["run", "remember the word apple", "--json"];
        first.extend(provider.iter().map(String::as_str));
        let out = bridle(&dirs, &first).await;
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let session = json_lines(&out)[0]["sessionId"].as_str().unwrap().to_string();

        let mut second = vec!["run", "which word did I ask you to remember?", "--json", "--session", &session];
        second.extend(provider.iter().map(String::as_str));
        let out = bridle(&dirs, &second).await;
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let events = json_lines(&out);
        assert!(events.iter().all(|e| e["sessionId"] == session.as_str()));
        assert!(events
            .iter()
            .any(|e| e["type"] == "assistantMessage" && e["text"] == "You asked me to remember apple."));

        // The second process sent the first one's conversation.
        let journal = mock.journal().await;
        let body = journal[1].to_string();
        assert!(body.contains("remember the word apple") && body.contains("Noted: apple."), "{body}");

        let shown = bridle(&dirs, &["sessions", "show", &session]).await;
        assert_eq!(shown.status.code(), Some(0));
        let items = json_lines(&shown);
        assert_eq!(types(&items), ["user", "assistant", "user", "assistant"]);
        let listed = bridle(&dirs, &["sessions", "list", "--json"]).await;
        let sessions = json_lines(&listed);
        assert_eq!(sessions.len(), 1);
        assert_eq!(sessions[0]["title"], "remember the word apple");
    }
}

#[tokio::test]
async fn an_unreachable_provider_is_a_clear_error_with_exit_1() {
    let dirs = Dirs::new();
    // A port nothing listens on: bind one, then free it.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let url = format!("http://127.0.0.1:{port}/v1");
    let config = dirs.data.join("config.toml");
    std::fs::create_dir_all(&dirs.data).unwrap();
    std::fs::write(&config, "[limits]\nmax_retries = 1\n").unwrap();
    let out = bridle(
        &dirs,
        &[
            "run",
            "hello",
            "--json",
            "--provider",
            "openai",
            "--base-url",
            &url,
            "--model",
            "m",
            "--config",
            config.to_str().unwrap(),
        ],
    )
    .await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let events = json_lines(&out);
    let error = events.iter().find(|e| e["type"] == "error").expect("an error event");
    assert_eq!(error["info"]["code"], "provider_unreachable");
    assert!(error["info"]["message"].as_str().unwrap().contains("gave up after 2 attempts"), "{error}");
    assert_eq!(events.last().unwrap()["reason"], "error");
    // The message is kept for when the provider is back.
    let session = events[0]["sessionId"].as_str().unwrap();
    let shown = json_lines(&bridle(&dirs, &["sessions", "show", session]).await);
    assert_eq!(shown, [serde_json::json!({"type": "user", "text": "hello"})]);
}

#[tokio::test]
async fn usage_errors_exit_2() {
    let dirs = Dirs::new();
    let out = bridle(&dirs, &["run", "--mode", "yolo", "hi"]).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("unknown mode `yolo`"), "{}", stderr(&out));
    let out = bridle(&dirs, &["run"]).await;
    assert_eq!(out.status.code(), Some(2), "no prompt and stdin is not a terminal but empty");
}
