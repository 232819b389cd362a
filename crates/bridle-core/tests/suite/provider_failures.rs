//! Provider failures: retried when they may pass, reported clearly when they do not.

use std::time::{Duration, Instant};

use bridle_core::store::Store;
use bridle_protocol::{AbortReason, Event, HistoryItem};
use pretty_assertions::assert_eq;
use wiremock::ResponseTemplate;

use super::harness::*;
use super::raw_server::{After, RawServer, Reply};

#[tokio::test]
async fn a_429_with_retry_after_is_waited_out_then_succeeds() {
    for wire in WIRES {
        let limited = ResponseTemplate::new(429)
            .insert_header("retry-after", "1")
            .set_body_json(serde_json::json!({"error": {"message": "Rate limit reached", "type": "rate_limit_error"}}));
        let server = mock_server(wire, Script::new([limited, sse(wire.text("made it"))])).await;
        let mut t = engine(wire.provider(&server.uri()), |_| {});
        let started = Instant::now();
        t.say("hello").await;
        let events = t.turn().await;
        assert!(matches!(last(&events), Event::TurnCompleted { .. }), "{wire:?}: {events:?}");
        // The engine honoured retry-after rather than its 10 ms backoff.
        assert!(started.elapsed() >= Duration::from_millis(950), "{:?}", started.elapsed());
        assert_eq!(request_bodies(&server).await.len(), 2);
        assert!(events.iter().any(|e| matches!(e, Event::AssistantMessage { text, .. } if text == "made it")));
    }
}

#[tokio::test]
async fn a_connection_dropped_mid_stream_is_retried_and_the_answer_is_whole() {
    for wire in WIRES {
        let full = wire.text("The whole answer");
        let half = full[..full.len() / 2].to_string();
        let server = RawServer::start(vec![
            Reply { body: half, after: After::Close },
            Reply { body: full, after: After::Close },
        ])
        .await;
        let mut t = engine(wire.provider(&server.uri), |_| {});
        t.say("answer me").await;
        let events = t.turn().await;
        assert!(matches!(last(&events), Event::TurnCompleted { .. }), "{wire:?}: {events:?}");
        assert_eq!(server.bodies.lock().unwrap().len(), 2);
        let message = events.iter().find_map(|e| match e {
            Event::AssistantMessage { text, .. } => Some(text.clone()),
            _ => None,
        });
        assert_eq!(message.as_deref(), Some("The whole answer"));
        let history = t.store.history(t.engine.session_id(), 0).unwrap();
        assert_eq!(
            history[1],
            HistoryItem::Assistant { text: "The whole answer".into(), tool_calls: vec![], cut_off: false }
        );
        // The restart is announced, and the deltas after it are exactly the final message.
        let restart = events.iter().rposition(|e| matches!(e, Event::StreamRestarted { .. })).expect("streamRestarted");
        let Event::StreamRestarted { attempt, max_attempts, .. } = &events[restart] else { unreachable!() };
        assert_eq!((*attempt, *max_attempts), (2, 5), "{wire:?}");
        let after: String = events[restart..]
            .iter()
            .filter_map(|e| match e {
                Event::AssistantDelta { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(after, "The whole answer", "{wire:?}");
    }
}

/// An SSE body up to (not including) the event that says the answer is finished.
fn before_the_finish(body: &str) -> String {
    let finish = body.find("\"finish_reason\"").or_else(|| body.find("message_delta")).expect("a finish event");
    let start = body[..finish].rfind("\n\n").map_or(0, |i| i + 2);
    body[..start].to_string()
}

#[tokio::test]
async fn when_the_retries_run_out_the_text_the_user_saw_stays_marked_cut_off() {
    for wire in WIRES {
        let cut = before_the_finish(&wire.text("A long answer that never finishes"));
        let server = RawServer::start((0..3).map(|_| Reply { body: cut.clone(), after: After::Close }).collect()).await;
        let mut t = engine(wire.provider(&server.uri), |c| c.retry.max_retries = 2);
        t.say("answer me").await;
        let events = t.turn().await;
        assert!(matches!(last(&events), Event::TurnAborted { reason: AbortReason::Error, .. }), "{wire:?}: {events:?}");
        let restarts = events.iter().filter(|e| matches!(e, Event::StreamRestarted { .. })).count();
        assert_eq!(restarts, 2, "{wire:?}");
        let restart = events.iter().rposition(|e| matches!(e, Event::StreamRestarted { .. })).unwrap();
        let seen: String = events[restart..]
            .iter()
            .filter_map(|e| match e {
                Event::AssistantDelta { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        assert!(!seen.is_empty(), "{wire:?}: the last attempt streamed some text");
        let history = t.store.history(t.engine.session_id(), 0).unwrap();
        assert_eq!(history.len(), 2, "{wire:?}: {history:?}");
        assert_eq!(history[1], HistoryItem::Assistant { text: seen, tool_calls: vec![], cut_off: true });
    }
}

#[tokio::test]
async fn a_tool_call_from_an_unfinished_stream_never_runs() {
    for wire in WIRES {
        let calls = wire.tool_calls(&[("w1", "write_file", r#"{"path":"made.txt","content":"x"}"#)]);
        // Everything but the end of the stream: the call is whole, the answer is not.
        let cut = before_the_finish(&calls);
        let server = RawServer::start(vec![
            Reply { body: cut, after: After::Close },
            Reply { body: wire.text("I will not write it."), after: After::Close },
        ])
        .await;
        let mut t = engine(wire.provider(&server.uri), |c| c.mode = bridle_protocol::Mode::Bypass);
        t.say("write it").await;
        let events = t.turn().await;
        assert!(matches!(last(&events), Event::TurnCompleted { .. }), "{wire:?}: {events:?}");
        assert!(!events.iter().any(|e| matches!(e, Event::ToolCallBegin { .. })), "{wire:?}: {events:?}");
        assert!(!t.dir.path().join("ws/made.txt").exists(), "{wire:?}");
    }
}

#[tokio::test]
async fn a_500_that_never_recovers_is_a_clear_error_and_the_session_stays_readable() {
    for wire in WIRES {
        let failing =
            || ResponseTemplate::new(500).set_body_json(serde_json::json!({"error": {"message": "upstream exploded"}}));
        let server =
            mock_server(wire, Script::new((0..3).map(|_| failing()).chain([sse(wire.text("back again"))]))).await;
        let mut t = engine(wire.provider(&server.uri()), |c| c.retry.max_retries = 2);
        t.say("are you there?").await;
        let events = t.turn().await;
        let info = events
            .iter()
            .find_map(|e| match e {
                Event::Error { info, .. } => Some(info.clone()),
                _ => None,
            })
            .expect("an error event");
        assert_eq!(info.code, "provider_unavailable");
        assert_eq!(info.message, "the provider failed (HTTP 500): upstream exploded (gave up after 3 attempts)");
        assert!(info.retryable);
        assert!(matches!(last(&events), Event::TurnAborted { reason: AbortReason::Error, .. }));
        assert_eq!(request_bodies(&server).await.len(), 3);

        // Another process opening the same file reads the conversation.
        let reopened = Store::open(&t.dir.path().join("bridle.db")).unwrap();
        assert_eq!(
            reopened.history(t.engine.session_id(), 0).unwrap(),
            [HistoryItem::User { text: "are you there?".into() }]
        );
        // And the session is still usable once the provider is back.
        t.say("now?").await;
        assert!(matches!(last(&t.turn().await), Event::TurnCompleted { .. }));
    }
}

#[tokio::test]
async fn a_rejected_request_is_not_retried() {
    for wire in WIRES {
        let denied =
            ResponseTemplate::new(401).set_body_json(serde_json::json!({"error": {"message": "invalid x-api-key"}}));
        let server = mock_server(wire, Script::new([denied])).await;
        let mut t = engine(wire.provider(&server.uri()), |_| {});
        t.say("hi").await;
        let events = t.turn().await;
        assert!(events
            .iter()
            .any(|e| matches!(e, Event::Error { info, .. } if info.code == "provider_rejected" && !info.retryable)));
        assert_eq!(request_bodies(&server).await.len(), 1);
    }
}
