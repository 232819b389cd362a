//! A session's background processes end with it: a turn leaves one running, and
//! `Engine::shutdown` (what closing the window, switching session and `bridle run`'s exit do)
//! returns only once it has ended and is recorded as stopped.

use std::time::Duration;

use bridle_protocol::{Mode, Op, ProcessState};

use super::harness::*;

fn running(args: &str) -> usize {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_string_lossy().parse::<u32>().ok())
        .filter(|pid| bridle_core::processes::start_time(*pid).is_some())
        .filter(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            String::from_utf8_lossy(&cmdline).trim_end_matches('\0').replace('\0', " ") == args
        })
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutting_the_session_down_ends_what_it_left_running() {
    let wire = Wire::OpenAi;
    let args = serde_json::json!({"command": "exec sleep 303", "background": true}).to_string();
    let server = mock_server(
        wire,
        Script::new([sse(wire.tool_calls(&[("c1", "bash", &args)])), sse(wire.text("left it running"))]),
    )
    .await;
    let mut t = engine(wire.provider(&server.uri()), |c| c.mode = Mode::Auto);
    t.engine.submit(Op::UserMessage { text: "start it".into() }).await.unwrap();
    t.turn().await;
    let listed = t.engine.processes();
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0].state, ProcessState::Running);
    assert_eq!(running("sleep 303"), 1);

    tokio::time::timeout(Duration::from_secs(15), t.engine.shutdown()).await.expect("the shutdown hung");
    assert_eq!(running("sleep 303"), 0, "the process outlived its session");
    let rows = t.store.processes(t.engine.session_id()).unwrap();
    assert_eq!((rows[0].state.as_str(), rows[0].ended_at.is_some()), ("stopped", true));
    t.audit.flush().unwrap();
    let statuses: Vec<Option<String>> =
        t.audit_rows().into_iter().filter(|(kind, _, _)| kind == "process").map(|(_, status, _)| status).collect();
    assert_eq!(statuses, [Some("started".to_string()), Some("stopped".to_string())]);
}
