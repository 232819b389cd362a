//! MCP figures for `npm run bench`: starting four servers in parallel (as a session does)
//! against one after another, and the cost of one call through the whole pipeline — an MCP
//! `echo` against the built-in `get_current_time` — in a running hub (median of N calls).
//!
//! `cargo run --release -p bridle-core --example mcp_overhead -- SERVER_EVERYTHING_INDEX_JS [N]`
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use bridle_core::clock::SystemClock;
use bridle_core::config::{McpConfig, McpServerConfig};
use bridle_core::engine::EngineConfig;
use bridle_core::mcp::McpHub;
use bridle_core::tools::ToolContext;
use bridle_protocol::{Mode, ToolCall};

fn server(index_js: &str) -> McpServerConfig {
    McpServerConfig {
        command: Some("node".into()),
        args: vec![index_js.into(), "stdio".into()],
        env: Default::default(),
        url: None,
        headers: Default::default(),
        enabled: true,
        startup_timeout_secs: 30,
    }
}

fn median(mut runs: Vec<Duration>) -> Duration {
    runs.sort();
    runs[runs.len() / 2]
}

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let index_js = args.next().expect("the path of server-everything's dist/index.js");
    let calls: usize = args.next().map(|n| n.parse().unwrap()).unwrap_or(200);
    let dir = tempfile::tempdir().unwrap();
    let env = || std::env::vars_os().collect::<Vec<_>>().into_iter();

    let four = McpConfig { servers: ["a", "b", "c", "d"].iter().map(|n| (n.to_string(), server(&index_js))).collect() };
    let started = Instant::now();
    let hub = McpHub::start(&four, dir.path(), env()).await;
    let parallel = started.elapsed();
    assert!(hub.reports().iter().all(|r| r.status == bridle_protocol::McpStatus::Ready));
    hub.shutdown().await;
    let started = Instant::now();
    for name in ["a", "b", "c", "d"] {
        let one = McpConfig { servers: [(name.to_string(), server(&index_js))].into_iter().collect() };
        McpHub::start(&one, dir.path(), env()).await.shutdown().await;
    }
    let sequential = started.elapsed();
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1000.0;
    println!("start four servers: in parallel {:.0} ms, one after another {:.0} ms", ms(parallel), ms(sequential));

    let one = McpConfig { servers: [("everything".to_string(), server(&index_js))].into_iter().collect() };
    let hub = McpHub::start(&one, dir.path(), env()).await;
    let config = EngineConfig {
        workspace: dir.path().to_path_buf(),
        data_dir: dir.path().join("data"),
        mode: Mode::Bypass,
        ..EngineConfig::default()
    };
    let pipeline = config.calls_outside_a_session(Arc::new(hub.registry().unwrap())).unwrap();
    let time = |name: &'static str, arguments: &'static str| {
        let pipeline = pipeline.clone();
        let root = dir.path().to_path_buf();
        async move {
            let mut runs = Vec::with_capacity(calls);
            for i in 0..calls {
                let call = ToolCall {
                    id: format!("c{i}"),
                    provider_id: format!("c{i}"),
                    name: name.into(),
                    arguments: arguments.into(),
                };
                let ctx = ToolContext::new(
                    "bench",
                    call.id.clone(),
                    pipeline.workspace().clone(),
                    root.join("data"),
                    Arc::new(SystemClock),
                    Duration::from_secs(30),
                );
                let started = Instant::now();
                let outcome = pipeline.check_and_run(&call, ctx).await;
                runs.push(started.elapsed());
                assert!(!outcome.result.is_error, "{name}: {}", outcome.result.output);
            }
            median(runs)
        }
    };
    let builtin = time("get_current_time", r#"{"timezone":"UTC"}"#).await;
    let mcp = time("mcp__everything__echo", r#"{"message":"hi"}"#).await;
    println!("one call through the pipeline (median of {calls}): built-in get_current_time {builtin:.2?}, MCP echo {mcp:.2?}");
    hub.shutdown().await;
}
