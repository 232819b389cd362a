//! Scripted model servers in both wire formats, and an engine wired to them.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bridle_core::audit::{AuditLog, AuditSink};
use bridle_core::clock::SystemClock;
use bridle_core::engine::{Engine, EngineConfig, EngineDeps, SessionSpec};
use bridle_core::provider::{AnthropicProvider, ModelProvider, OpenAiProvider, RetryPolicy};
use bridle_core::store::Store;
use bridle_core::tools::{builtin_registry, ToolRegistry};
use bridle_protocol::Event;
use serde_json::{json, Value};
use tokio::sync::mpsc::Receiver;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use super::tools::{Panic, Sleep};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    OpenAi,
    Anthropic,
}

pub const WIRES: [Wire; 2] = [Wire::OpenAi, Wire::Anthropic];

impl Wire {
    pub fn path(self) -> &'static str {
        match self {
            Wire::OpenAi => "/v1/chat/completions",
            Wire::Anthropic => "/v1/messages",
        }
    }

    pub fn provider(self, server_uri: &str) -> Arc<dyn ModelProvider> {
        let client = reqwest::Client::new();
        match self {
            Wire::OpenAi => {
                Arc::new(OpenAiProvider::new(client, &format!("{server_uri}/v1"), "test-model", Some("sk-test".into())))
            }
            Wire::Anthropic => {
                Arc::new(AnthropicProvider::new(client, server_uri, "test-model", Some("sk-ant-test".into()), 1024))
            }
        }
    }

    /// An SSE body answering with `text`, in two deltas.
    pub fn text(self, text: &str) -> String {
        let (a, b) = text.split_at(text.len() / 2);
        match self {
            Wire::OpenAi => {
                sse_data(&[
                    json!({"choices":[{"index":0,"delta":{"role":"assistant","content":a}}]}),
                    json!({"choices":[{"index":0,"delta":{"content":b}}]}),
                    json!({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}),
                    json!({"choices":[],"usage":{"prompt_tokens":100,"completion_tokens":10,"prompt_tokens_details":{"cached_tokens":40}}}),
                ]) + "data: [DONE]\n\n"
            }
            Wire::Anthropic => sse_events(&[
                json!({"type":"message_start","message":{"id":"msg_1","role":"assistant","content":[],"usage":{"input_tokens":60,"cache_read_input_tokens":40,"output_tokens":1}}}),
                json!({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}),
                json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":a}}),
                json!({"type":"ping"}),
                json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":b}}),
                json!({"type":"content_block_stop","index":0}),
                json!({"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":10}}),
                json!({"type":"message_stop"}),
            ]),
        }
    }

    /// An SSE body asking for `calls` = `(provider id, tool, raw arguments)`, arguments chunked.
    pub fn tool_calls(self, calls: &[(&str, &str, &str)]) -> String {
        match self {
            Wire::OpenAi => {
                let mut chunks = vec![json!({"choices":[{"index":0,"delta":{"role":"assistant","content":null}}]})];
                for (i, (id, name, args)) in calls.iter().enumerate() {
                    let (a, b) = split_chars(args);
                    chunks.push(json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":i,"id":id,"type":"function","function":{"name":name,"arguments":a}}]}}]}));
                    chunks.push(json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":i,"function":{"arguments":b}}]}}]}));
                }
                chunks.push(json!({"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}));
                chunks.push(json!({"choices":[],"usage":{"prompt_tokens":100,"completion_tokens":20}}));
                sse_data(&chunks) + "data: [DONE]\n\n"
            }
            Wire::Anthropic => {
                let mut events =
                    vec![json!({"type":"message_start","message":{"usage":{"input_tokens":100,"output_tokens":1}}})];
                for (i, (id, name, args)) in calls.iter().enumerate() {
                    let (a, b) = split_chars(args);
                    events.push(json!({"type":"content_block_start","index":i,"content_block":{"type":"tool_use","id":id,"name":name,"input":{}}}));
                    events.push(json!({"type":"content_block_delta","index":i,"delta":{"type":"input_json_delta","partial_json":a}}));
                    events.push(json!({"type":"content_block_delta","index":i,"delta":{"type":"input_json_delta","partial_json":b}}));
                    events.push(json!({"type":"content_block_stop","index":i}));
                }
                events.push(
                    json!({"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":20}}),
                );
                events.push(json!({"type":"message_stop"}));
                sse_events(&events)
            }
        }
    }

    /// `(wire id, content)` of the tool results at the end of a request body, in order.
    pub fn tool_results(self, body: &Value) -> Vec<(String, String)> {
        let messages = body["messages"].as_array().unwrap();
        match self {
            Wire::OpenAi => {
                let tail: Vec<_> = messages.iter().rev().take_while(|m| m["role"] == "tool").collect();
                tail.into_iter()
                    .rev()
                    .map(|m| {
                        (m["tool_call_id"].as_str().unwrap().to_string(), m["content"].as_str().unwrap().to_string())
                    })
                    .collect()
            }
            Wire::Anthropic => messages.last().unwrap()["content"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|b| b["type"] == "tool_result")
                .map(|b| (b["tool_use_id"].as_str().unwrap().to_string(), b["content"].as_str().unwrap().to_string()))
                .collect(),
        }
    }

    /// Ids of the tool calls in the last assistant message of a request body.
    pub fn last_call_ids(self, body: &Value) -> Vec<String> {
        let assistant = body["messages"].as_array().unwrap().iter().rev().find(|m| m["role"] == "assistant").unwrap();
        match self {
            Wire::OpenAi => assistant["tool_calls"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["id"].as_str().unwrap().to_string())
                .collect(),
            Wire::Anthropic => assistant["content"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|b| b["type"] == "tool_use")
                .map(|b| b["id"].as_str().unwrap().to_string())
                .collect(),
        }
    }

    /// Texts of the user messages (not tool results) in a request body.
    pub fn user_texts(self, body: &Value) -> Vec<String> {
        let mut texts = Vec::new();
        for m in body["messages"].as_array().unwrap().iter().filter(|m| m["role"] == "user") {
            match &m["content"] {
                Value::String(s) => texts.push(s.clone()),
                Value::Array(blocks) => texts.extend(
                    blocks.iter().filter(|b| b["type"] == "text").map(|b| b["text"].as_str().unwrap().to_string()),
                ),
                _ => {}
            }
        }
        texts
    }

    /// Names of the tools offered in a request body, in the order sent.
    pub fn tool_names(self, body: &Value) -> Vec<String> {
        body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| match self {
                Wire::OpenAi => t["function"]["name"].as_str().unwrap().to_string(),
                Wire::Anthropic => t["name"].as_str().unwrap().to_string(),
            })
            .collect()
    }
}

fn split_chars(s: &str) -> (String, String) {
    let n = s.chars().count() / 2;
    (s.chars().take(n).collect(), s.chars().skip(n).collect())
}

pub fn sse_data(chunks: &[Value]) -> String {
    chunks.iter().map(|c| format!("data: {c}\n\n")).collect()
}

pub fn sse_events(events: &[Value]) -> String {
    events.iter().map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap())).collect()
}

pub fn sse(body: String) -> ResponseTemplate {
    ResponseTemplate::new(200).insert_header("content-type", "text/event-stream").set_body_string(body)
}

/// Answers requests with scripted responses, one per request, in order.
#[derive(Clone, Default)]
pub struct Script(Arc<Mutex<VecDeque<ResponseTemplate>>>);

impl Script {
    pub fn new(responses: impl IntoIterator<Item = ResponseTemplate>) -> Self {
        Self(Arc::new(Mutex::new(responses.into_iter().collect())))
    }
}

impl Respond for Script {
    fn respond(&self, _: &Request) -> ResponseTemplate {
        self.0
            .lock()
            .unwrap()
            .pop_front()
            .unwrap_or_else(|| ResponseTemplate::new(418).set_body_string("script exhausted"))
    }
}

pub async fn mock_server(wire: Wire, script: Script) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(wiremock::matchers::method("POST"))
        .and(wiremock::matchers::path(wire.path()))
        .respond_with(script)
        .mount(&server)
        .await;
    server
}

/// The model requests the server received (POSTs: the engine's GETs asking what window the
/// server serves are not model requests).
pub async fn request_bodies(server: &MockServer) -> Vec<Value> {
    server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .filter(|r| r.method == wiremock::http::Method::POST)
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .collect()
}

/// An engine under test, with its own temp dirs and store file.
pub struct TestEngine {
    pub engine: Engine,
    pub events: Receiver<Event>,
    pub store: Arc<Store>,
    pub dir: tempfile::TempDir,
    pub audit: AuditSink,
}

pub fn registry() -> ToolRegistry {
    let mut registry = builtin_registry().unwrap();
    registry.register(Arc::new(Sleep)).unwrap();
    registry.register(Arc::new(Panic)).unwrap();
    registry
}

pub fn engine(provider: Arc<dyn ModelProvider>, tweak: impl FnOnce(&mut EngineConfig)) -> TestEngine {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("ws")).unwrap();
    engine_in(dir, provider, SessionSpec::New, tweak)
}

/// An engine on an existing test directory (its store, workspace and data dir): a second
/// process opening the same session.
pub fn engine_in(
    dir: tempfile::TempDir,
    provider: Arc<dyn ModelProvider>,
    spec: SessionSpec,
    tweak: impl FnOnce(&mut EngineConfig),
) -> TestEngine {
    engine_with_mcp(dir, provider, spec, None, tweak)
}

/// An engine on a test directory that also offers the tools of `mcp`'s servers.
pub fn engine_with_mcp(
    dir: tempfile::TempDir,
    provider: Arc<dyn ModelProvider>,
    spec: SessionSpec,
    mcp: Option<Arc<bridle_core::mcp::McpHub>>,
    tweak: impl FnOnce(&mut EngineConfig),
) -> TestEngine {
    let store = Arc::new(Store::open(&dir.path().join("bridle.db")).unwrap());
    let mut config = EngineConfig {
        workspace: dir.path().join("ws"),
        data_dir: dir.path().join("data"),
        retry: RetryPolicy { base_delay: Duration::from_millis(10), ..RetryPolicy::default() },
        context_window: Some(200_000),
        ..EngineConfig::default()
    };
    tweak(&mut config);
    let audit = AuditSink::start(AuditLog::open(&config.data_dir).unwrap());
    let deps = EngineDeps {
        provider,
        tools: Arc::new(registry()),
        mcp,
        store: store.clone(),
        clock: Arc::new(SystemClock),
        audit: audit.clone(),
    };
    let (engine, events) = Engine::spawn(config, deps, spec).unwrap();
    TestEngine { engine, events, store, dir, audit }
}

impl TestEngine {
    /// Every audit row written so far, oldest first, as (kind, status, payload).
    pub fn audit_rows(&self) -> Vec<(String, Option<String>, Value)> {
        self.audit.flush().unwrap();
        let log = bridle_core::audit::AuditLog::open(&self.dir.path().join("data")).unwrap();
        let mut rows = log.query(&bridle_core::audit::AuditFilter::default()).unwrap();
        rows.reverse();
        rows.into_iter().map(|r| (r.kind, r.status, r.payload)).collect()
    }

    pub async fn say(&self, text: &str) {
        self.engine.submit(bridle_protocol::Op::UserMessage { text: text.into() }).await.unwrap();
    }

    /// Events up to and including the end of the current turn.
    pub async fn turn(&mut self) -> Vec<Event> {
        let mut seen = Vec::new();
        loop {
            // A guard against a hung engine, not a timing assertion.
            let event = tokio::time::timeout(Duration::from_secs(60), self.events.recv())
                .await
                .expect("the turn did not end within 60 s")
                .expect("the engine stopped before the turn ended");
            let end =
                matches!(event, Event::TurnCompleted { .. } | Event::TurnAborted { .. } | Event::TurnSuspended { .. });
            seen.push(event);
            if end {
                return seen;
            }
        }
    }

    pub async fn next_matching(&mut self, pred: impl Fn(&Event) -> bool) -> Event {
        loop {
            let event = tokio::time::timeout(Duration::from_secs(60), self.events.recv()).await.unwrap().unwrap();
            if pred(&event) {
                return event;
            }
        }
    }
}

/// Each ended call's status and what the model was told, in the order they ended.
pub fn tool_ends(events: &[Event]) -> Vec<(bridle_protocol::ToolStatus, String)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCallEnd { status, result, .. } => Some((*status, result.output.clone())),
            _ => None,
        })
        .collect()
}

/// The `type` tags of events, for order assertions.
pub fn kinds(events: &[Event]) -> Vec<String> {
    events.iter().map(|e| serde_json::to_value(e).unwrap()["type"].as_str().unwrap().to_string()).collect()
}

pub fn last(events: &[Event]) -> &Event {
    events.last().unwrap()
}

/// Calls over the workspace `ws` (data dir `data`) whose guard allows every call (`bypass`):
/// for tests of what the tools and the path sandbox hold by themselves.
pub fn bypass_calls(ws: &std::path::Path, data: &std::path::Path) -> bridle_core::calls::Calls {
    let workspace = Arc::new(bridle_core::workspace::Workspace::open(ws, None, data, &[]).unwrap());
    let mode = bridle_protocol::Mode::Bypass;
    bridle_core::calls::Calls::new(
        Arc::new(builtin_registry().unwrap()),
        Arc::new(bridle_core::guard::Guard::new(mode)),
        workspace,
        Arc::new(bridle_core::calls::Permit::new(mode, bridle_core::guard::Policy::empty())),
        Duration::from_secs(60),
    )
}

/// A model's call of `name` with `args`, under a fresh id.
pub fn tool_call(name: &str, args: Value) -> bridle_protocol::ToolCall {
    bridle_protocol::ToolCall {
        id: uuid::Uuid::new_v4().to_string(),
        provider_id: String::new(),
        name: name.into(),
        arguments: args.to_string(),
    }
}

/// What `call` runs with in session `session-1` of `calls`, its data dir `data`.
pub fn tool_context(
    calls: &bridle_core::calls::Calls,
    call: &bridle_protocol::ToolCall,
    data: &std::path::Path,
) -> bridle_core::tools::ToolContext {
    bridle_core::tools::ToolContext::new(
        "session-1",
        call.id.clone(),
        calls.workspace().clone(),
        data.to_path_buf(),
        Arc::new(SystemClock),
        Duration::from_secs(60),
    )
}
