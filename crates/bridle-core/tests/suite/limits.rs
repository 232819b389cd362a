//! Turn limits: max_steps, the loop guard, and a turn that fails inside Bridle.

use bridle_protocol::{AbortReason, Event, HistoryItem};
use pretty_assertions::assert_eq;

use super::harness::*;

fn calls_and_results(history: &[HistoryItem]) -> (usize, usize) {
    history.iter().fold((0, 0), |(c, r), item| match item {
        HistoryItem::Assistant { tool_calls, .. } => (c + tool_calls.len(), r),
        HistoryItem::ToolResult { .. } => (c, r + 1),
        HistoryItem::User { .. } => (c, r),
    })
}

#[tokio::test]
async fn max_steps_ends_the_turn_with_a_consistent_history() {
    for wire in WIRES {
        let script = Script::new((0..10).map(|i| {
            let args = format!(r#"{{"ms":1,"label":"{i}"}}"#);
            sse(wire.tool_calls(&[("c", "sleep", &args)]))
        }));
        let server = mock_server(wire, script).await;
        let mut t = engine(wire.provider(&server.uri()), |c| c.limits.max_steps = 3);
        t.say("never stop").await;
        let events = t.turn().await;
        assert!(matches!(last(&events), Event::TurnAborted { reason: AbortReason::MaxSteps, .. }), "{wire:?}");
        assert_eq!(request_bodies(&server).await.len(), 3);
        let history = t.store.history(t.engine.session_id(), 0).unwrap();
        assert_eq!(calls_and_results(&history), (3, 3));
    }
}

#[tokio::test]
async fn the_loop_guard_reminds_on_the_third_repeat_and_stops_the_fourth() {
    for wire in WIRES {
        let same = r#"{"label":"x","ms":1}"#;
        // Key order differs on the wire; the canonical arguments are the same call.
        let reordered = r#"{"ms":1, "label":"x"}"#;
        let script = Script::new([
            sse(wire.tool_calls(&[("c1", "sleep", same)])),
            sse(wire.tool_calls(&[("c2", "sleep", reordered)])),
            sse(wire.tool_calls(&[("c3", "sleep", same)])),
            sse(wire.tool_calls(&[("c4", "sleep", same), ("c5", "get_current_time", "{}")])),
            sse(wire.text("unreachable")),
        ]);
        let server = mock_server(wire, script).await;
        let mut t = engine(wire.provider(&server.uri()), |_| {});
        t.say("loop").await;
        let events = t.turn().await;
        assert!(matches!(last(&events), Event::TurnAborted { reason: AbortReason::LoopGuard, .. }), "{wire:?}");
        let bodies = request_bodies(&server).await;
        assert_eq!(bodies.len(), 4);
        let third = &wire.tool_results(&bodies[3])[0].1;
        assert!(third.starts_with("slept x\n\n[note: this is the third identical call"), "{third}");
        // The fourth was not run, nor anything after it, but every call has a result.
        let history = t.store.history(t.engine.session_id(), 0).unwrap();
        assert_eq!(calls_and_results(&history), (5, 5));
        let Some(HistoryItem::ToolResult { result }) = history.last() else { panic!() };
        assert!(result.is_error && result.output.contains("loop guard"), "{}", result.output);
    }
}

#[tokio::test]
async fn a_panicking_tool_ends_the_turn_aborted_and_the_session_goes_on() {
    for wire in WIRES {
        let script = Script::new([
            sse(wire.tool_calls(&[("c1", "panic", "{}"), ("c2", "sleep", r#"{"ms":1,"label":"a"}"#)])),
            sse(wire.text("still here")),
        ]);
        let server = mock_server(wire, script).await;
        let mut t = engine(wire.provider(&server.uri()), |_| {});
        t.say("trip over the bug").await;
        let events = t.turn().await;
        let errors: Vec<_> = events
            .iter()
            .filter_map(|e| match e {
                Event::Error { info, .. } => Some(info.code.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(errors, ["turn_failed"], "{wire:?}: {:?}", kinds(&events));
        assert!(matches!(last(&events), Event::TurnAborted { reason: AbortReason::Error, .. }), "{wire:?}");
        // Every call has a result, so the next request is valid for the provider.
        let history = t.store.history(t.engine.session_id(), 0).unwrap();
        assert_eq!(calls_and_results(&history), (2, 2), "{wire:?}");

        t.say("are you still there?").await;
        let events = t.turn().await;
        assert!(matches!(last(&events), Event::TurnCompleted { .. }), "{wire:?}: {:?}", kinds(&events));
        assert!(events.iter().any(|e| matches!(e, Event::AssistantMessage { text, .. } if text == "still here")));
    }
}
