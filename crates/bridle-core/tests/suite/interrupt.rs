//! Interrupts: mid-stream and mid-tool, leaving a history every provider accepts.

use bridle_protocol::{AbortReason, Event, HistoryItem, Op, ToolStatus};
use pretty_assertions::assert_eq;

use super::harness::*;
use super::raw_server::{After, RawServer, Reply};

/// A server whose first answer streams its first delta ("Thinking abou") and then goes silent,
/// and whose second answers "Fresh start."; an engine on it, waiting in that silence.
async fn hung_mid_stream(wire: Wire) -> (RawServer, TestEngine) {
    let full = wire.text("Thinking about it carefully");
    let cut =
        full.split("\n\n").take(if wire == Wire::OpenAi { 1 } else { 3 }).collect::<Vec<_>>().join("\n\n") + "\n\n";
    let server = RawServer::start(vec![
        Reply { body: cut, after: After::Hang },
        Reply { body: wire.text("Fresh start."), after: After::Close },
    ])
    .await;
    let mut t = engine(wire.provider(&server.uri), |_| {});
    t.say("think").await;
    let delta = t.next_matching(|e| matches!(e, Event::AssistantDelta { .. })).await;
    let Event::AssistantDelta { text, .. } = delta else { unreachable!() };
    assert_eq!(text, "Thinking abou");
    (server, t)
}

#[tokio::test]
async fn an_interrupt_mid_stream_stops_the_turn_and_keeps_the_partial_text() {
    for wire in WIRES {
        let (server, mut t) = hung_mid_stream(wire).await;
        t.engine.submit(Op::Interrupt).await.unwrap();
        let rest = t.turn().await;
        assert!(
            matches!(last(&rest), Event::TurnAborted { reason: AbortReason::Interrupted, .. }),
            "{wire:?}: {rest:?}"
        );

        let history = t.store.history(t.engine.session_id(), 0).unwrap();
        assert_eq!(
            history,
            [
                HistoryItem::User { text: "think".into() },
                HistoryItem::Assistant { text: "Thinking abou".into(), tool_calls: vec![], cut_off: false }
            ]
        );
        // The session goes on after the interrupt.
        t.say("try again").await;
        assert!(matches!(last(&t.turn().await), Event::TurnCompleted { .. }));
        let bodies = server.bodies.lock().unwrap().clone();
        assert_eq!(wire.user_texts(&bodies[1]), ["think", "try again"]);
    }
}

#[tokio::test]
async fn an_interrupt_during_a_tool_gives_every_call_a_result() {
    for wire in WIRES {
        let script = Script::new([
            sse(wire.tool_calls(&[
                ("c1", "sleep", r#"{"ms":1,"label":"quick"}"#),
                ("c2", "sleep", r#"{"ms":60000,"label":"slow"}"#),
            ])),
            sse(wire.text("after the interrupt")),
        ]);
        let server = mock_server(wire, script).await;
        let mut t = engine(wire.provider(&server.uri()), |_| {});
        t.say("go").await;
        t.next_matching(|e| matches!(e, Event::ToolCallEnd { .. })).await;
        let started = std::time::Instant::now();
        t.engine.submit(Op::Interrupt).await.unwrap();
        let rest = t.turn().await;
        assert!(started.elapsed() < std::time::Duration::from_secs(30), "the slow tool was not stopped");
        assert!(matches!(last(&rest), Event::TurnAborted { reason: AbortReason::Interrupted, .. }));
        assert!(rest.iter().any(|e| matches!(e, Event::ToolCallEnd { status: ToolStatus::Interrupted, .. })));

        let history = t.store.history(t.engine.session_id(), 0).unwrap();
        let results: Vec<_> = history
            .iter()
            .filter_map(|i| match i {
                HistoryItem::ToolResult { result } => Some((result.output.as_str(), result.is_error)),
                _ => None,
            })
            .collect();
        assert_eq!(results, [("slept quick", false), ("Interrupted by the user before the tool finished.", true)]);
        assert_eq!(request_bodies(&server).await.len(), 1, "no model request after an interrupt");
    }
}

#[tokio::test]
async fn shutdown_mid_stream_ends_the_turn_and_frees_the_session_for_another_engine() {
    let wire = Wire::OpenAi;
    let (server, mut t) = hung_mid_stream(wire).await;
    let id = t.engine.session_id().to_string();
    tokio::time::timeout(std::time::Duration::from_secs(30), t.engine.shutdown()).await.unwrap();
    let rest = t.turn().await;
    assert!(matches!(last(&rest), Event::TurnAborted { reason: AbortReason::Interrupted, .. }), "{rest:?}");
    // Every event sent was counted, in the order received.
    let counted = t.engine.events_sent();
    assert!(counted >= 3, "{counted}");
    assert!(t.engine.submit(Op::Interrupt).await.is_err(), "a closed engine refuses ops");

    // The lease is free at once: the same session opens again, its partial answer kept.
    let TestEngine { dir, .. } = t;
    let provider = wire.provider(&server.uri);
    let again = engine_in(dir, provider, bridle_core::engine::SessionSpec::Resume(id.clone()), |_| {});
    let history = again.store.history(&id, 0).unwrap();
    assert_eq!(history[0], HistoryItem::User { text: "think".into() });
    assert!(matches!(&history[1], HistoryItem::Assistant { text, .. } if text == "Thinking abou"), "{history:?}");
}
