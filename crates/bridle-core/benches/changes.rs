//! What long sessions cost: the checkpoint kept per edit of a 1 MB file (side by side with the
//! same edit uncheckpointed, as `bridle tool` makes it), the blob store after 1,000 edits of
//! that file, an undo of a turn that wrote 100 files, and a compaction of a 100k-token session
//! (the model's own time left out: a local provider answers at once).
//!
//! `cargo bench -p bridle-core --bench changes`; `-- --test` runs a small version.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use bridle_core::changes::{self, BlobStore, SessionFiles};
use bridle_core::clock::SystemClock;
use bridle_core::compaction::{self, Estimator, Fit, View};
use bridle_core::provider::{ModelEvent, ModelProvider, ModelRequest, ModelStream, ProviderError};
use bridle_core::store::Store;
use bridle_core::tools::{builtin_registry, ToolContext, ToolRegistry};
use bridle_core::workspace::Workspace;
use bridle_protocol::{HistoryItem, ToolCall, ToolResult};

struct World {
    _tmp: tempfile::TempDir,
    root: std::path::PathBuf,
    data: std::path::PathBuf,
    store: Arc<Store>,
    files: Arc<SessionFiles>,
    processes: Arc<bridle_core::processes::SessionProcesses>,
    skills: Arc<bridle_core::skills::SessionSkills>,
    workspace: Arc<Workspace>,
    registry: ToolRegistry,
}

fn world() -> World {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("ws");
    let data = tmp.path().join("data");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(&data).unwrap();
    let store = Arc::new(Store::open(&data.join("bridle.db")).unwrap());
    store.create_session("bench", &root.display().to_string(), 0).unwrap();
    let files = Arc::new(SessionFiles::new("bench", store.clone(), &data, Arc::new(SystemClock)));
    let workspace = Arc::new(Workspace::open(&root, None, &data, &[]).unwrap());
    let observer = Arc::new(bridle_core::processes::Unobserved);
    let processes = Arc::new(bridle_core::processes::SessionProcesses::new(
        "bench",
        store.clone(),
        Arc::new(SystemClock),
        observer,
    ));
    let skills = Arc::new(bridle_core::skills::SessionSkills::new(
        Vec::new(),
        &root,
        "bench",
        bridle_core::audit::AuditSink::disabled(),
        Arc::new(SystemClock),
    ));
    World { _tmp: tmp, root, data, store, files, processes, skills, workspace, registry: builtin_registry().unwrap() }
}

impl World {
    fn ctx(&self, turn: &str, checkpointed: bool) -> ToolContext {
        let mut ctx = ToolContext::new(
            "bench",
            uuid::Uuid::new_v4().to_string(),
            self.workspace.clone(),
            self.data.clone(),
            Arc::new(SystemClock),
            Duration::from_secs(60),
        );
        ctx.session = checkpointed.then(|| bridle_core::tools::InSession {
            turn_id: turn.to_string(),
            files: self.files.clone(),
            processes: self.processes.clone(),
            skills: self.skills.clone(),
            agents: None,
        });
        ctx
    }

    async fn call(&self, ctx: ToolContext, tool: &str, args: serde_json::Value) {
        let call = self.registry.prepare(tool, &args.to_string()).unwrap();
        call.call.run(&ctx).await.unwrap();
    }
}

/// About 1 MB of source-like text: numbered lines of words drawn at random (compresses about
/// as well as real code does).
fn big_file(root: &Path, lines: usize) {
    const WORDS: &[&str] = &[
        "let", "mut", "fn", "self", "return", "match", "Some", "None", "Ok", "Err", "config", "value", "index",
        "buffer", "len", "iter", "map", "collect", "String", "Vec", "usize", "u64", "if", "else", "for", "in", "while",
        "&&", "||", "==", "+=", "{", "}", "(", ")", ";", "path", "file", "error", "result", "state", "event",
        "session", "token",
    ];
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let text: String = (0..lines)
        .map(|i| {
            let words: Vec<&str> = (0..8).map(|_| WORDS[(next() % WORDS.len() as u64) as usize]).collect();
            format!("line {i:05}: {} {:x}\n", words.join(" "), next() % 0xFFFF)
        })
        .collect();
    std::fs::write(root.join("big.txt"), text).unwrap();
}

fn median_ms(mut times: Vec<Duration>) -> f64 {
    times.sort_unstable();
    times[times.len() / 2].as_secs_f64() * 1e3
}

/// One edit of the 1 MB file per line, `n` lines, each in a turn of its own (the most a
/// checkpoint can keep), with or without checkpoints.
async fn edits(n: usize, checkpointed: bool) -> (f64, World) {
    let w = world();
    big_file(&w.root, 18_500);
    let mut times = Vec::with_capacity(n);
    for i in 0..n {
        let args = serde_json::json!({
            "path": "big.txt",
            "old_text": format!("line {i:05}:"),
            "new_text": format!("LINE {i:05}:"),
        });
        let ctx = w.ctx(&format!("t{i}"), checkpointed);
        let start = Instant::now();
        w.call(ctx, "edit_file", args).await;
        times.push(start.elapsed());
    }
    (median_ms(times), w)
}

/// A provider that summarises at once (the bench measures Bridle, not the model).
struct Immediate;

#[async_trait]
impl ModelProvider for Immediate {
    async fn stream(&self, _request: &ModelRequest) -> Result<ModelStream, ProviderError> {
        let events = vec![Ok(ModelEvent::TextDelta("Summary of the session so far.".into())), Ok(ModelEvent::Finished)];
        Ok(Box::pin(futures::stream::iter(events)))
    }
    fn model(&self) -> &str {
        "instant"
    }
}

/// A history of about `tokens` tokens: turns of a request, a read of a 6 kB file and an answer.
fn long_history(tokens: usize) -> Vec<HistoryItem> {
    let mut items = Vec::new();
    let mut turn = 0;
    while items.iter().map(|i| serde_json::to_string(i).unwrap().len()).sum::<usize>() / 4 < tokens {
        let id = format!("c{turn}");
        let call = ToolCall {
            id: id.clone(),
            provider_id: id.clone(),
            name: "read_file".into(),
            arguments: format!(r#"{{"path":"src/file{turn}.rs"}}"#),
        };
        items.push(HistoryItem::User {
            text: format!("turn {turn}: look at src/file{turn}.rs and tell me what it does"),
        });
        items.push(HistoryItem::Assistant { text: String::new(), tool_calls: vec![call], cut_off: false });
        let output = format!("{turn}: fn example() {{ let x = 1; }}\n").repeat(180);
        items.push(HistoryItem::ToolResult {
            result: ToolResult { tool_call_id: id, output, is_error: false, details: None, data: None, diff: None },
        });
        items.push(HistoryItem::Assistant {
            text: format!("file{turn}.rs defines an example function."),
            tool_calls: Vec::new(),
            cut_off: false,
        });
        turn += 1;
    }
    items
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let quick = std::env::args().any(|a| a == "--test");
    let n = if quick { 20 } else { 1_000 };

    let (plain, _) = edits(n.min(200), false).await;
    let (checkpointed, w) = edits(n, true).await;
    let blobs = BlobStore::new(&w.data).size().unwrap();
    let file = std::fs::metadata(w.root.join("big.txt")).unwrap().len();
    println!(
        "edit of a {:.2} MB file: median {plain:.2} ms without a checkpoint, {checkpointed:.2} ms with one",
        file as f64 / 1e6
    );
    println!(
        "blob store after {n} edits of one 1 MB file: {:.1} MB ({:.2} MB per edit)",
        blobs as f64 / 1e6,
        blobs as f64 / 1e6 / n as f64
    );

    let w = world();
    let files = 100;
    for i in 0..files {
        std::fs::write(w.root.join(format!("f{i:03}.txt")), format!("original {i}\n").repeat(1_000)).unwrap();
    }
    for i in 0..files {
        let args =
            serde_json::json!({"path": format!("f{i:03}.txt"), "content": format!("changed {i}\n").repeat(1_000)});
        w.call(w.ctx("t100", true), "write_file", args).await;
    }
    let start = Instant::now();
    let report =
        changes::undo(&w.store, &BlobStore::new(&w.data), &w.workspace, "bench", Some("t100"), &[], 0).unwrap();
    println!(
        "undo of a {files}-file turn: {:.1} ms ({} restored)",
        start.elapsed().as_secs_f64() * 1e3,
        report.restored.len()
    );

    let history = long_history(if quick { 10_000 } else { 100_000 });
    let tools = builtin_registry().unwrap().definitions();
    let system = bridle_core::brief::DEFAULT_SYSTEM_PROMPT;
    let estimator = Estimator::default();
    let fit = Fit { system, history: &history, tools: &tools, window: 128_000, at: 0.8, keep_user_messages: 2 };
    let start = Instant::now();
    let done = compaction::fit(&View::default(), &estimator, &Immediate, &fit, true).await.unwrap().unwrap();
    println!(
        "compaction of a {}-item session: {:.1} ms without the model's time, {} -> {} tokens ({} outputs masked, summarised: {})",
        history.len(),
        start.elapsed().as_secs_f64() * 1e3,
        done.tokens_before,
        done.tokens_after,
        done.masked,
        done.summarized
    );
}
