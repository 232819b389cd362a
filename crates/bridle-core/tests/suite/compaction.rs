//! Compaction through the engine: `Op::Compact` summarises the older turns with the session's
//! own provider, announces `Compacted`, and the next request carries the summary instead of
//! them while the latest user messages stay word for word.

use bridle_protocol::{Event, Op};
use pretty_assertions::assert_eq;

use super::harness::*;

#[tokio::test]
async fn op_compact_summarises_the_older_turns_and_the_next_request_uses_it() {
    let wire = Wire::OpenAi;
    let script = Script::new([
        sse(wire.text("first answer")),
        sse(wire.text("second answer")),
        sse(wire.text("third answer")),
        sse(wire.text("SUMMARY: the user said hello once.")),
        sse(wire.text("fourth answer")),
    ]);
    let server = mock_server(wire, script).await;
    let mut t = engine(wire.provider(&server.uri()), |c| c.context_window = Some(100_000));
    let long_first = format!("first message {}", "with many words ".repeat(300));
    for text in [long_first.as_str(), "second message", "third message"] {
        t.say(text).await;
        t.turn().await;
    }
    t.engine.submit(Op::Compact).await.unwrap();
    let done = t.next_matching(|e| matches!(e, Event::Compacted { .. } | Event::Error { .. })).await;
    let Event::Compacted { tokens_before, tokens_after, .. } = done else { panic!("{done:?}") };
    assert!(tokens_after < tokens_before, "{tokens_before} -> {tokens_after}");

    t.say("fourth message").await;
    t.turn().await;
    let bodies = request_bodies(&server).await;
    let summary_request = &bodies[3];
    assert!(summary_request.to_string().contains("USER: first message"), "{summary_request}");
    let next = bodies.last().unwrap();
    let users = wire.user_texts(next);
    // The two kept when it compacted, and the one sent since, word for word.
    assert_eq!(users, ["second message", "third message", "fourth message"]);
    assert!(next.to_string().contains("SUMMARY: the user said hello once."), "{next}");
    assert!(!next.to_string().contains("first message"));
}
