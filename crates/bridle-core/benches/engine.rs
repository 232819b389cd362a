//! Engine overhead: what Bridle itself adds to a turn and to a tool call, with the model taken
//! out of the picture (an in-process provider that answers instantly, and a local HTTP server
//! streaming canned SSE).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use async_trait::async_trait;
use bridle_core::audit::{AuditLog, AuditSink};
use bridle_core::calls::{Calls, Permit};
use bridle_core::clock::SystemClock;
use bridle_core::engine::{Engine, EngineConfig, EngineDeps, SessionSpec};
use bridle_core::guard::{Guard, Policy};
use bridle_core::provider::{ModelEvent, ModelProvider, ModelRequest, ModelStream, OpenAiProvider, ProviderError};
use bridle_core::store::Store;
use bridle_core::tools::{builtin_registry, ToolContext};
use bridle_core::workspace::Workspace;
use bridle_protocol::{Event, HistoryItem, Mode, Op, TokenUsage, ToolCall};
use criterion::{criterion_group, criterion_main, Criterion};

/// Answers with `calls` (tool, arguments) when the last item is the user's message, else with text.
struct InstantProvider {
    calls: Vec<(String, String)>,
    requests: AtomicUsize,
}

impl InstantProvider {
    fn times(n: usize) -> Self {
        let calls = (0..n)
            .map(|i| {
                (
                    "get_current_time".to_string(),
                    format!(r#"{{"timezone":"{}"}}"#, if i % 2 == 0 { "UTC" } else { "Europe/Paris" }),
                )
            })
            .collect();
        Self { calls, requests: AtomicUsize::new(0) }
    }
}

#[async_trait]
impl ModelProvider for InstantProvider {
    async fn stream(&self, request: &ModelRequest) -> Result<ModelStream, ProviderError> {
        self.requests.fetch_add(1, Ordering::Relaxed);
        let mut events = Vec::new();
        if matches!(request.history.last(), Some(HistoryItem::User { .. })) && !self.calls.is_empty() {
            for (i, (name, arguments)) in self.calls.iter().enumerate() {
                events.push(Ok(ModelEvent::ToolCall {
                    provider_id: format!("call_{i}"),
                    name: name.clone(),
                    arguments: arguments.clone(),
                }));
            }
        } else {
            events.push(Ok(ModelEvent::TextDelta("Done.".into())));
        }
        events.push(Ok(ModelEvent::Usage(TokenUsage { input_tokens: 100, cached_input_tokens: 0, output_tokens: 10 })));
        events.push(Ok(ModelEvent::Finished));
        Ok(Box::pin(futures::stream::iter(events)))
    }

    fn model(&self) -> &str {
        "instant"
    }
}

async fn one_turn(provider: Arc<dyn ModelProvider>, dir: &std::path::Path) {
    one_turn_with(provider, dir, 8).await
}

async fn one_turn_with(provider: Arc<dyn ModelProvider>, dir: &std::path::Path, max_concurrent_tools: usize) {
    let store = Arc::new(Store::open(&dir.join("bridle.db")).unwrap());
    let deps = EngineDeps {
        provider,
        tools: Arc::new(builtin_registry().unwrap()),
        mcp: None,
        store,
        clock: Arc::new(SystemClock),
        // The real writer: its cost is part of a turn's.
        audit: AuditSink::start(AuditLog::open(&dir.join("data")).unwrap()),
    };
    let workspace = dir.join("ws");
    std::fs::create_dir_all(&workspace).unwrap();
    let mut config = EngineConfig { workspace, data_dir: dir.join("data"), ..EngineConfig::default() };
    config.limits.max_concurrent_tools = max_concurrent_tools;
    let (engine, mut events) = Engine::spawn(config, deps, SessionSpec::New).unwrap();
    engine.submit(Op::UserMessage { text: "what time is it?".into() }).await.unwrap();
    while let Some(event) = events.recv().await {
        match event {
            Event::TurnCompleted { .. } => return,
            Event::TurnAborted { reason, .. } => panic!("turn aborted: {reason:?}"),
            _ => {}
        }
    }
}

fn turns(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut group = c.benchmark_group("turn");
    for calls in [0usize, 1, 64] {
        let provider: Arc<dyn ModelProvider> = Arc::new(InstantProvider::times(calls));
        group.bench_function(format!("in-process provider, {calls} tool calls"), |b| {
            b.to_async(&rt).iter(|| one_turn(provider.clone(), dir.path()))
        });
    }

    // The same two-step turn over HTTP: reqwest, SSE parsing, the OpenAI wire format.
    let server = rt.block_on(wiremock::MockServer::start());
    let call = "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c\",\"function\":{\"name\":\"get_current_time\",\"arguments\":\"{}\"}}]}}]}\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n";
    let text = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Done.\"}}]}\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";
    rt.block_on(async {
        use wiremock::matchers::body_string_contains;
        use wiremock::{Mock, ResponseTemplate};
        let sse = |b: &str| {
            ResponseTemplate::new(200).insert_header("content-type", "text/event-stream").set_body_string(b.to_string())
        };
        Mock::given(body_string_contains("\"role\":\"tool\""))
            .respond_with(sse(text))
            .with_priority(1)
            .mount(&server)
            .await;
        Mock::given(wiremock::matchers::any()).respond_with(sse(call)).with_priority(2).mount(&server).await;
    });
    let http: Arc<dyn ModelProvider> =
        Arc::new(OpenAiProvider::new(reqwest::Client::new(), &format!("{}/v1", server.uri()), "m", None));
    group.bench_function("local HTTP SSE provider, 1 tool call", |b| {
        b.to_async(&rt).iter(|| one_turn(http.clone(), dir.path()))
    });

    // 64 read_file calls of 256 KiB files in one answer: run 8 at a time, then one by one.
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let line = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde\n";
    let calls = (0..64)
        .map(|i| {
            std::fs::write(ws.join(format!("f{i:02}.txt")), line.repeat(4096)).unwrap();
            ("read_file".to_string(), format!(r#"{{"path":"f{i:02}.txt","end_line":400}}"#))
        })
        .collect();
    let reads: Arc<dyn ModelProvider> = Arc::new(InstantProvider { calls, requests: AtomicUsize::new(0) });
    for (label, slots) in [("concurrent, 8 at a time", 8), ("sequential", 1)] {
        group.bench_function(format!("64 read_file calls, {label}"), |b| {
            b.to_async(&rt).iter(|| one_turn_with(reads.clone(), dir.path(), slots))
        });
    }
    group.finish();
}

fn dispatch(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ws");
    std::fs::create_dir_all(&root).unwrap();
    let workspace = Arc::new(Workspace::open(&root, None, &dir.path().join("data"), &[]).unwrap());
    let permit = Arc::new(Permit::new(Mode::Auto, Policy::empty()));
    let calls = Calls::new(
        Arc::new(builtin_registry().unwrap()),
        Arc::new(Guard::new(Mode::Auto)),
        workspace.clone(),
        permit,
        std::time::Duration::from_secs(60),
    );
    let ctx = ToolContext::new(
        "bench",
        "c",
        workspace,
        dir.path().join("data"),
        Arc::new(SystemClock),
        std::time::Duration::from_secs(60),
    );
    let mut group = c.benchmark_group("tool call");
    for (name, args) in [
        ("valid arguments", r#"{"timezone":"UTC"}"#),
        ("repaired arguments", r#"{"timezone":"UTC"}{"timezone":"UTC"}"#),
    ] {
        let call = ToolCall {
            id: "c".into(),
            provider_id: "p".into(),
            name: "get_current_time".into(),
            arguments: args.into(),
        };
        group.bench_function(format!("pipeline (repair, validate, guard, execute), {name}"), |b| {
            b.to_async(&rt).iter(|| calls.check_and_run(&call, ctx.clone()))
        });
    }
    group.finish();
}

criterion_group!(benches, turns, dispatch);
criterion_main!(benches);
