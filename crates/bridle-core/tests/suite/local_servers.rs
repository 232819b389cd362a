//! Local model servers: the window the server really serves is the one in force (a larger
//! config is corrected with a warning), and a server that counts far fewer prompt tokens than
//! were sent is said, once, to have cut the prompt.

use bridle_protocol::Event;
use pretty_assertions::assert_eq;
use wiremock::matchers::{method, path};
use wiremock::{Mock, ResponseTemplate};

use super::harness::*;

fn warnings(events: &[Event]) -> Vec<(String, String)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Warning { code, message, .. } => Some((code.to_string(), message.clone())),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn the_window_the_server_serves_wins_over_a_larger_config() {
    let wire = Wire::OpenAi;
    let server = mock_server(wire, Script::new([sse(wire.text("hello"))])).await;
    Mock::given(method("GET"))
        .and(path("/props"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(serde_json::json!({"default_generation_settings": {"n_ctx": 8192}})),
        )
        .mount(&server)
        .await;
    let mut t = engine(wire.provider(&server.uri()), |c| c.context_window = Some(32_768));
    let warned = t.next_matching(|e| matches!(e, Event::Warning { .. })).await;
    let Event::Warning { code, message, .. } = warned else { unreachable!() };
    assert_eq!(code, bridle_protocol::WarningCode::ContextWindowCorrected);
    assert!(message.contains("32768") && message.contains("8192"), "{message}");
    let warnings: Vec<_> = t.audit_rows().into_iter().filter(|(kind, ..)| kind != "session_started").collect();
    assert_eq!(warnings.len(), 1, "a warning is audited as one, not as an error: {warnings:?}");
    assert_eq!((warnings[0].0.as_str(), warnings[0].1.as_deref()), ("warning", Some("context_window_corrected")));
    t.say("hi").await;
    let events = t.turn().await;
    let window = events.iter().find_map(|e| match e {
        Event::TokenUsage { context_window, .. } => Some(*context_window),
        _ => None,
    });
    assert_eq!(window, Some(Some(8192)));
}

#[tokio::test]
async fn a_server_that_counts_far_fewer_prompt_tokens_than_sent_is_said_to_cut_the_prompt_once() {
    let wire = Wire::OpenAi;
    // The scripted answers report 100 prompt tokens; the request (instructions and every tool
    // schema) is well over 1,000.
    let server = mock_server(wire, Script::new([sse(wire.text("one")), sse(wire.text("two"))])).await;
    let mut t = engine(wire.provider(&server.uri()), |_| {});
    t.say("first").await;
    let first = t.turn().await;
    t.say("second").await;
    let second = t.turn().await;
    let all: Vec<(String, String)> = warnings(&first).into_iter().chain(warnings(&second)).collect();
    assert_eq!(all.len(), 1, "{all:?}");
    assert_eq!(all[0].0, "prompt_truncated");
    assert!(all[0].1.contains("counted 100 prompt tokens"), "{}", all[0].1);
    assert!(all[0].1.contains("kind = \"ollama\""), "the fix is named: {}", all[0].1);
}

#[tokio::test]
async fn an_honest_count_raises_no_warning() {
    let wire = Wire::OpenAi;
    let honest = |text: &str| {
        let (a, b) = text.split_at(text.len() / 2);
        sse_data(&[
            serde_json::json!({"choices":[{"index":0,"delta":{"role":"assistant","content":a}}]}),
            serde_json::json!({"choices":[{"index":0,"delta":{"content":b},"finish_reason":"stop"}]}),
            serde_json::json!({"choices":[],"usage":{"prompt_tokens":100_000,"completion_tokens":3}}),
        ]) + "data: [DONE]\n\n"
    };
    let server = mock_server(wire, Script::new([sse(honest("fine"))])).await;
    let mut t = engine(wire.provider(&server.uri()), |_| {});
    t.say("hi").await;
    let events = t.turn().await;
    assert!(warnings(&events).is_empty(), "{:?}", warnings(&events));
}

/// Ollama's native chat: the raw body carries `options.num_ctx`, tool calls go out with their
/// arguments as objects and results name their tool; the counts come from the done line.
#[tokio::test]
async fn ollama_native_sends_num_ctx_and_round_trips_a_tool_call() {
    let server = wiremock::MockServer::start().await;
    // Honest counts: about what Bridle sends (its brief and every tool's schema, the agent tools included).
    let lines = |items: &[serde_json::Value]| items.iter().map(|i| format!("{i}\n")).collect::<String>();
    let call = lines(&[
        serde_json::json!({"message": {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "get_current_time", "arguments": {"timezone": "UTC"}}}]}, "done": false}),
        serde_json::json!({"message": {"role": "assistant", "content": ""}, "done": true, "prompt_eval_count": 3300, "eval_count": 9}),
    ]);
    let answer = lines(&[
        serde_json::json!({"message": {"role": "assistant", "content": "It is "}, "done": false}),
        serde_json::json!({"message": {"role": "assistant", "content": "noon."}, "done": false}),
        serde_json::json!({"done": true, "prompt_eval_count": 3400, "eval_count": 4}),
    ]);
    let script = Script::new([
        ResponseTemplate::new(200).insert_header("content-type", "application/x-ndjson").set_body_string(call),
        ResponseTemplate::new(200).insert_header("content-type", "application/x-ndjson").set_body_string(answer),
    ]);
    Mock::given(method("POST")).and(path("/api/chat")).respond_with(script).mount(&server).await;
    let provider =
        bridle_core::provider::OllamaProvider::new(reqwest::Client::new(), &server.uri(), "qwen", Some(12_288));
    let mut t = engine(std::sync::Arc::new(provider), |c| c.context_window = Some(12_288));
    t.say("what time is it").await;
    let events = t.turn().await;
    assert!(matches!(last(&events), Event::TurnCompleted { .. }), "{events:?}");
    let message = events.iter().find_map(|e| match e {
        Event::AssistantMessage { text, .. } => Some(text.clone()),
        _ => None,
    });
    assert_eq!(message.as_deref(), Some("It is noon."));
    let bodies = request_bodies(&server).await;
    assert_eq!(bodies.len(), 2);
    for body in &bodies {
        assert_eq!(body["options"]["num_ctx"], 12_288, "{body}");
    }
    let messages = bodies[1]["messages"].as_array().unwrap();
    let asked = messages.iter().find(|m| m["role"] == "assistant").unwrap();
    assert_eq!(asked["tool_calls"][0]["function"]["arguments"], serde_json::json!({"timezone": "UTC"}));
    let result = messages.iter().find(|m| m["role"] == "tool").unwrap();
    assert_eq!(result["tool_name"], "get_current_time");
    assert!(warnings(&events).is_empty(), "honest counts: {:?}", warnings(&events));
}

/// Bad input from a server: a web page where a stream was expected, and a model it does not
/// have — both end the turn with a message that says what went wrong.
#[tokio::test]
async fn a_server_answering_html_or_lacking_the_model_is_a_clear_error() {
    let wire = Wire::OpenAi;
    let page = ResponseTemplate::new(200)
        .insert_header("content-type", "text/html")
        .set_body_string("<html><body>Welcome to nginx!</body></html>");
    let server = mock_server(wire, Script::new((0..5).map(|_| page.clone()))).await;
    let mut t = engine(wire.provider(&server.uri()), |c| c.retry.max_retries = 0);
    t.say("hi").await;
    let events = t.turn().await;
    let error = events.iter().find_map(|e| match e {
        Event::Error { info, .. } => Some(info.message.clone()),
        _ => None,
    });
    let error = error.expect("an error");
    assert!(error.contains("text/html") || error.contains("ended before"), "{error}");

    let missing =
        ResponseTemplate::new(404).set_body_json(serde_json::json!({"error": {"message": "model 'qwen9' not found"}}));
    let server = mock_server(wire, Script::new([missing])).await;
    Mock::given(method("GET"))
        .and(path("/v1/models"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(serde_json::json!({"data": [{"id": "qwen2.5-coder"}, {"id": "llama3"}]})),
        )
        .mount(&server)
        .await;
    let mut t = engine(wire.provider(&server.uri()), |_| {});
    t.say("hi").await;
    let events = t.turn().await;
    let error = events.iter().find_map(|e| match e {
        Event::Error { info, .. } => Some(info.message.clone()),
        _ => None,
    });
    let error = error.expect("an error");
    assert!(error.contains("qwen9") && error.contains("not found"), "{error}");
    assert!(error.contains("the server has: qwen2.5-coder, llama3"), "{error}");
}
