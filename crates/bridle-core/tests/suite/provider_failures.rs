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
        assert_eq!(history[1], HistoryItem::Assistant { text: "The whole answer".into(), tool_calls: vec![] });
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
