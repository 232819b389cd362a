//! Undo through the engine: `Op::Undo` puts back what a turn changed and says so in
//! `Event::Undone`; asked for while a turn runs, it is refused with a clear error.

use bridle_protocol::{Event, Mode, Op};
use pretty_assertions::assert_eq;

use super::harness::*;

#[tokio::test]
async fn op_undo_restores_the_last_turn_and_reports_it() {
    let wire = Wire::OpenAi;
    let edit = r#"{"path":"a.txt","old_text":"one","new_text":"two"}"#;
    let create = r#"{"path":"b.txt","content":"new\n"}"#;
    let script = Script::new([
        sse(wire.tool_calls(&[("c1", "edit_file", edit), ("c2", "write_file", create)])),
        sse(wire.text("done")),
    ]);
    let server = mock_server(wire, script).await;
    let mut t = engine(wire.provider(&server.uri()), |c| c.mode = Mode::Bypass);
    let ws = t.dir.path().join("ws");
    std::fs::write(ws.join("a.txt"), "one\n").unwrap();
    t.say("change").await;
    let events = t.turn().await;
    let turn = events
        .iter()
        .find_map(|e| match e {
            Event::TurnStarted { turn_id, .. } => Some(turn_id.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(std::fs::read_to_string(ws.join("a.txt")).unwrap(), "two\n");

    t.engine.submit(Op::Undo { checkpoint_id: String::new(), paths: None }).await.unwrap();
    let undone = t.next_matching(|e| matches!(e, Event::Undone { .. } | Event::Error { .. })).await;
    let Event::Undone { turn_id, restored, removed, refused, .. } = undone else { panic!("{undone:?}") };
    assert_eq!(turn_id, turn);
    assert_eq!((restored, removed), (vec!["a.txt".to_string()], vec!["b.txt".to_string()]));
    assert!(refused.is_empty());
    assert_eq!(std::fs::read_to_string(ws.join("a.txt")).unwrap(), "one\n");
    assert!(!ws.join("b.txt").exists());
    // The record names what happened: an undo, not a file change with a status.
    let undone: Vec<_> = t
        .audit_rows()
        .into_iter()
        .filter(|(kind, ..)| kind == "undone")
        .map(|(_, status, payload)| {
            (status.unwrap_or_default(), payload["path"].as_str().unwrap_or_default().to_string())
        })
        .collect();
    assert_eq!(undone, [("restored".to_string(), "a.txt".to_string()), ("removed".to_string(), "b.txt".to_string())]);

    // Nothing left: an error the window can show.
    t.engine.submit(Op::Undo { checkpoint_id: turn, paths: Some(vec!["a.txt".into()]) }).await.unwrap();
    let error = t.next_matching(|e| matches!(e, Event::Undone { .. } | Event::Error { .. })).await;
    let Event::Error { info, .. } = error else { panic!("{error:?}") };
    assert_eq!(info.code, "undo_failed");
}

/// A file the session read, changed on disk by someone else, is announced; a file it never
/// touched is not.
#[tokio::test]
async fn a_file_changed_behind_the_sessions_back_is_announced() {
    let wire = Wire::OpenAi;
    let script = Script::new([
        sse(wire.tool_calls(&[("r1", "read_file", r#"{"path":"seen.txt"}"#)])),
        sse(wire.text("read it")),
    ]);
    let server = mock_server(wire, script).await;
    let mut t = engine(wire.provider(&server.uri()), |c| c.mode = Mode::Bypass);
    let ws = t.dir.path().join("ws");
    std::fs::write(ws.join("seen.txt"), "one\n").unwrap();
    std::fs::write(ws.join("unseen.txt"), "one\n").unwrap();
    t.say("read it").await;
    t.turn().await;
    std::fs::write(ws.join("unseen.txt"), "two, by the user\n").unwrap();
    std::fs::write(ws.join("seen.txt"), "two, by the user\n").unwrap();
    let changed = tokio::time::timeout(
        std::time::Duration::from_secs(10),
        t.next_matching(|e| matches!(e, Event::FilesChangedOnDisk { .. })),
    )
    .await
    .expect("no FilesChangedOnDisk within 10 s");
    let Event::FilesChangedOnDisk { paths, .. } = changed else { unreachable!() };
    assert_eq!(paths, ["seen.txt"]);
}

/// Within one long turn: the agent reads a file, the user edits it while the model thinks, and
/// the agent's edit based on what it read is refused — the user's line survives; reading again
/// lets the edit through.
#[tokio::test]
async fn a_users_edit_during_a_long_turn_is_never_lost() {
    let wire = Wire::OpenAi;
    let edit = r#"{"path":"notes.txt","old_text":"beta","new_text":"BETA"}"#;
    let script = Script::new([
        sse(wire.tool_calls(&[("r1", "read_file", r#"{"path":"notes.txt"}"#)])),
        // The model "thinks" for a while before it edits: the user edits meanwhile.
        sse(wire.tool_calls(&[("e1", "edit_file", edit)])).set_delay(std::time::Duration::from_millis(600)),
        sse(wire.tool_calls(&[("r2", "read_file", r#"{"path":"notes.txt"}"#)])),
        sse(wire.tool_calls(&[("e2", "edit_file", edit)])),
        sse(wire.text("done")),
    ]);
    let server = mock_server(wire, script).await;
    let mut t = engine(wire.provider(&server.uri()), |c| c.mode = Mode::Bypass);
    let ws = t.dir.path().join("ws");
    std::fs::write(ws.join("notes.txt"), "alpha\nbeta\n").unwrap();
    t.say("shout beta").await;
    // After the read ends, and before the delayed answer arrives, the user saves the file.
    t.next_matching(|e| matches!(e, Event::ToolCallEnd { .. })).await;
    std::fs::write(ws.join("notes.txt"), "alpha\nbeta\nuser's line\n").unwrap();
    let events = t.turn().await;
    let outputs: Vec<String> = tool_ends(&events).into_iter().map(|(_, output)| output).collect();
    assert_eq!(outputs.len(), 3, "{outputs:?}");
    assert!(outputs[0].contains("modified on disk since you last read it"), "{}", outputs[0]);
    assert!(outputs[2].starts_with("Updated notes.txt"), "{}", outputs[2]);
    assert_eq!(std::fs::read_to_string(ws.join("notes.txt")).unwrap(), "alpha\nBETA\nuser's line\n");
}

/// After `Op::Undo` the model's next request names what was restored and removed, and its next
/// edit of a restored file is judged against the restored content: the undo was Bridle's own
/// write, not a change behind the session's back (issue 27).
#[tokio::test]
async fn after_an_undo_the_model_is_told_and_its_next_edit_of_the_restored_file_works() {
    let wire = Wire::OpenAi;
    let script = Script::new([
        sse(wire.tool_calls(&[
            ("c1", "edit_file", r#"{"path":"a.txt","old_text":"one","new_text":"two"}"#),
            ("c2", "write_file", r#"{"path":"b.txt","content":"new\n"}"#),
        ])),
        sse(wire.text("done")),
        sse(wire.tool_calls(&[("c3", "edit_file", r#"{"path":"a.txt","old_text":"one","new_text":"uno"}"#)])),
        sse(wire.text("done again")),
    ]);
    let server = mock_server(wire, script).await;
    let mut t = engine(wire.provider(&server.uri()), |c| c.mode = Mode::Bypass);
    let ws = t.dir.path().join("ws");
    std::fs::write(ws.join("a.txt"), "one\n").unwrap();
    t.say("change").await;
    t.turn().await;
    t.engine.submit(Op::Undo { checkpoint_id: String::new(), paths: None }).await.unwrap();
    t.next_matching(|e| matches!(e, Event::Undone { .. })).await;
    assert_eq!(std::fs::read_to_string(ws.join("a.txt")).unwrap(), "one\n");
    // No announcement of a change behind the session's back: the watch knows the undo's stamps.
    t.say("change it the other way").await;
    let events = t.turn().await;
    assert!(!events.iter().any(|e| matches!(e, Event::FilesChangedOnDisk { .. })), "{:?}", kinds(&events));
    let outputs: Vec<String> = tool_ends(&events).into_iter().map(|(_, output)| output).collect();
    assert_eq!(outputs.len(), 1, "{outputs:?}");
    assert!(outputs[0].starts_with("Updated a.txt"), "{}", outputs[0]);
    assert_eq!(std::fs::read_to_string(ws.join("a.txt")).unwrap(), "uno\n");

    let bodies = request_bodies(&server).await;
    let texts = wire.user_texts(&bodies[2]);
    assert_eq!(texts.len(), 3, "{texts:?}");
    let note = &texts[1];
    assert!(note.starts_with("[Bridle] The user undid the file changes of an earlier turn"), "{note}");
    assert!(note.contains("Restored to what they held before that turn: a.txt."), "{note}");
    assert!(note.contains("Removed (that turn had created them): b.txt."), "{note}");
    assert_eq!(texts[2], "change it the other way");
    // The note stays in the history of later requests, and once only.
    let texts = wire.user_texts(&bodies[3]);
    assert_eq!(texts.iter().filter(|t| t.starts_with("[Bridle] The user undid")).count(), 1, "{texts:?}");
}

/// An undo while a turn waits for an approval: the note joins the history after the waiting
/// calls' results, so the next request keeps each call next to its result (OpenAI refuses a
/// message between them).
#[tokio::test]
async fn an_undo_while_a_call_waits_keeps_calls_next_to_their_results() {
    let wire = Wire::OpenAi;
    let script = Script::new([
        sse(wire.tool_calls(&[("c1", "edit_file", r#"{"path":"a.txt","old_text":"one","new_text":"two"}"#)])),
        sse(wire.text("done")),
        sse(wire.tool_calls(&[("c2", "write_file", r#"{"path":"b.txt","content":"bee\n"}"#)])),
        sse(wire.text("fine")),
    ]);
    let server = mock_server(wire, script).await;
    let mut t = engine(wire.provider(&server.uri()), |c| {
        c.mode = Mode::Bypass;
        c.defer_approvals = true;
    });
    let ws = t.dir.path().join("ws");
    std::fs::write(ws.join("a.txt"), "one\n").unwrap();
    t.say("change").await;
    t.turn().await;
    t.engine.submit(Op::SetMode { mode: Mode::Ask }).await.unwrap();
    t.say("write b").await;
    let events = t.turn().await;
    assert!(matches!(last(&events), Event::TurnSuspended { .. }), "{:?}", kinds(&events));

    t.engine.submit(Op::Undo { checkpoint_id: String::new(), paths: None }).await.unwrap();
    let undone = t.next_matching(|e| matches!(e, Event::Undone { .. } | Event::Error { .. })).await;
    assert!(matches!(&undone, Event::Undone { restored, .. } if restored == &["a.txt"]), "{undone:?}");
    t.say("never mind").await;
    let events = t.turn().await;
    assert!(matches!(last(&events), Event::TurnCompleted { .. }), "{:?}", kinds(&events));

    let bodies = request_bodies(&server).await;
    let messages = bodies.last().unwrap()["messages"].as_array().unwrap().clone();
    let roles: Vec<&str> = messages.iter().map(|m| m["role"].as_str().unwrap()).collect();
    let call = messages.iter().position(|m| m["tool_calls"][0]["id"] == "c2").unwrap();
    assert_eq!(roles[call + 1..], ["tool", "user", "user"], "{messages:?}");
    assert!(messages[call + 2]["content"].as_str().unwrap().starts_with("[Bridle] The user undid"), "{messages:?}");
    assert_eq!(messages[call + 3]["content"], "never mind");
}
