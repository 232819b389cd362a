//! Switching modes in a running session: the pipeline is rebuilt the one way, `plan` makes the
//! workspace read-only for bash too, and a switch asked for mid-turn waits for the turn's end.

use bridle_protocol::{Event, Mode, Op, ToolStatus};
use pretty_assertions::assert_eq;

use super::harness::*;

#[tokio::test]
async fn plan_mode_set_in_a_running_session_writes_nothing() {
    let wire = Wire::OpenAi;
    let touch = r#"{"command":"touch made-by-bash.txt && echo touched"}"#;
    let write = r#"{"path":"made-by-write.txt","content":"x"}"#;
    let script = Script::new([
        sse(wire.tool_calls(&[("c1", "bash", touch), ("c2", "write_file", write)])),
        sse(wire.text("done")),
    ]);
    let server = mock_server(wire, script).await;
    let mut t = engine(wire.provider(&server.uri()), |c| c.mode = Mode::Auto);
    t.engine.submit(Op::SetMode { mode: Mode::Plan }).await.unwrap();
    let changed = t.next_matching(|e| matches!(e, Event::ModeChanged { .. })).await;
    let Event::ModeChanged { mode, sandbox, .. } = changed else { unreachable!() };
    assert_eq!((mode, sandbox.as_str()), (Mode::Plan, "bwrap"));
    assert_eq!(t.engine.mode(), Mode::Plan, "the engine reports the mode in force, not the launch one");
    let changes: Vec<_> = t.audit_rows().into_iter().filter(|(kind, ..)| kind == "mode_changed").collect();
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert_eq!((changes[0].2["mode"].as_str(), changes[0].2["from"].as_str()), (Some("plan"), Some("auto")));

    t.say("make two files").await;
    let events = t.turn().await;
    let mut ends = tool_ends(&events);
    assert_eq!(ends.len(), 2, "{:?}", kinds(&events));
    // They end in any order: the denied write at once, the command after it ran.
    ends.sort_by_key(|(status, _)| *status == ToolStatus::Denied);
    let (bash, write) = (&ends[0], &ends[1]);
    assert_eq!(bash.0, ToolStatus::Ok, "bash runs in plan mode: {}", bash.1);
    assert!(bash.1.contains("Read-only file system") && !bash.1.contains("touched"), "{}", bash.1);
    assert_eq!(write.0, ToolStatus::Denied, "{}", write.1);
    assert!(write.1.contains("write_file"), "{}", write.1);
    let ws = t.dir.path().join("ws");
    assert!(!ws.join("made-by-bash.txt").exists() && !ws.join("made-by-write.txt").exists());
}
