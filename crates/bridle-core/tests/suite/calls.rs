//! Tool calls through the engine: concurrency, order, timeouts, bad calls, provider ids.

use bridle_protocol::{Event, HistoryItem, ToolStatus};
use pretty_assertions::assert_eq;

use super::harness::*;

#[tokio::test]
async fn three_turns_with_parallel_calls_return_results_in_call_order() {
    for wire in WIRES {
        let script = Script::new([
            sse(wire.tool_calls(&[
                ("call_a", "sleep", r#"{"ms":400,"label":"a"}"#),
                ("call_b", "sleep", r#"{"ms":5,"label":"b"}"#),
                ("call_c", "sleep", r#"{"ms":150,"label":"c"}"#),
            ])),
            sse(wire.text("All three slept.")),
            sse(wire.text("Second answer.")),
            sse(wire.text("Third answer.")),
        ]);
        let server = mock_server(wire, script).await;
        let mut t = engine(wire.provider(&server.uri()), |_| {});

        t.say("sleep three times").await;
        let first = t.turn().await;
        t.say("again").await;
        let second = t.turn().await;
        t.say("once more").await;
        let third = t.turn().await;

        // They ran concurrently: they finished in order of duration, not of calls.
        let ended: Vec<_> = first
            .iter()
            .filter_map(|e| match e {
                Event::ToolCallEnd { result, status, .. } => Some((result.output.clone(), *status)),
                _ => None,
            })
            .collect();
        assert_eq!(
            ended,
            [
                ("slept b".to_string(), ToolStatus::Ok),
                ("slept c".into(), ToolStatus::Ok),
                ("slept a".into(), ToolStatus::Ok)
            ],
            "{wire:?}"
        );
        assert_eq!(kinds(&first)[..2], ["turnStarted", "tokenUsage"], "{wire:?}");
        assert!(matches!(last(&first), Event::TurnCompleted { .. }));
        assert!(matches!(last(&second), Event::TurnCompleted { .. }));
        assert!(matches!(last(&third), Event::TurnCompleted { .. }));

        let bodies = request_bodies(&server).await;
        assert_eq!(bodies.len(), 4, "{wire:?}");
        // ...but the model received the results in call order, under its own ids.
        assert_eq!(
            wire.tool_results(&bodies[1]),
            [
                ("call_a".to_string(), "slept a".to_string()),
                ("call_b".into(), "slept b".into()),
                ("call_c".into(), "slept c".into())
            ],
            "{wire:?}"
        );
        assert_eq!(wire.user_texts(&bodies[3]), ["sleep three times", "again", "once more"], "{wire:?}");
        // Sorted by name, so the payload is byte-stable.
        let names = wire.tool_names(&bodies[0]);
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(names, sorted);
        // A session with no skill for the model does not offer `skill` (DESIGN §13.1).
        assert_eq!(names, registry().without("skill").names());
        // The same history gives the same bytes: the prefix of request 3 is request 2's.
        assert_eq!(bodies[0]["tools"], bodies[3]["tools"]);

        // Bridle's own ids on the events, the provider's only on the wire.
        let begun: Vec<_> = first
            .iter()
            .filter_map(|e| match e {
                Event::ToolCallBegin { call, .. } => Some(call.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(begun.iter().map(|c| c.provider_id.as_str()).collect::<Vec<_>>(), ["call_a", "call_b", "call_c"]);
        assert!(begun.iter().all(|c| uuid::Uuid::parse_str(&c.id).is_ok()));

        // Usage adds up over the session.
        let totals: Vec<_> = [first, second, third]
            .iter()
            .flatten()
            .filter_map(|e| match e {
                Event::TokenUsage { total, .. } => Some(total.input_tokens),
                _ => None,
            })
            .collect();
        assert_eq!(totals, [100, 200, 300, 400]);
    }
}

#[tokio::test]
async fn a_slow_call_times_out_while_its_siblings_complete() {
    for wire in WIRES {
        let script = Script::new([
            sse(wire.tool_calls(&[
                ("c1", "sleep", r#"{"ms":5,"label":"quick"}"#),
                ("c2", "sleep", r#"{"ms":30000,"label":"slow"}"#),
                ("c3", "sleep", r#"{"ms":20,"label":"also quick"}"#),
            ])),
            sse(wire.text("noted")),
        ]);
        let server = mock_server(wire, script).await;
        let mut t = engine(wire.provider(&server.uri()), |c| c.limits.tool_timeout_secs = 1);
        t.say("go").await;
        let events = t.turn().await;
        assert!(matches!(last(&events), Event::TurnCompleted { .. }), "{wire:?}");
        let results = wire.tool_results(&request_bodies(&server).await[1]);
        assert_eq!(results[0].1, "slept quick");
        assert!(results[1].1.contains("timed out after 1 s"), "{}", results[1].1);
        assert_eq!(results[2].1, "slept also quick");
    }
}

#[tokio::test]
async fn unknown_tools_and_invalid_arguments_become_error_results_and_the_loop_goes_on() {
    for wire in WIRES {
        let script = Script::new([
            sse(wire.tool_calls(&[
                ("c1", "delete_everything", "{}"),
                ("c2", "sleep", r#"{"ms":"soon"}"#),
                ("c3", "sleep", r#"{"ms":"5","label":"fixed"}"#),
                ("c4", "get_current_time", r#"{"timezone":"Nowhere/Land"}"#),
            ])),
            sse(wire.text("I will do better.")),
        ]);
        let server = mock_server(wire, script).await;
        let mut t = engine(wire.provider(&server.uri()), |_| {});
        t.say("try things").await;
        let events = t.turn().await;
        assert!(matches!(last(&events), Event::TurnCompleted { .. }));
        let results = wire.tool_results(&request_bodies(&server).await[1]);
        assert_eq!(
            results[0].1,
            format!(
                "Error: unknown tool `delete_everything`; the available tools are: {}",
                registry().without("skill").names().join(", ")
            )
        );
        assert!(results[1].1.starts_with("Error: invalid arguments for `sleep`: /ms:"), "{}", results[1].1);
        assert!(
            results[2]
                .1
                .starts_with("slept fixed\n\n[note: your arguments were repaired: `ms` was the string \"5\"; used 5]"),
            "{}",
            results[2].1
        );
        assert!(results[3].1.contains("unknown time zone `Nowhere/Land`"), "{}", results[3].1);
        let statuses: Vec<_> = events
            .iter()
            .filter_map(|e| match e {
                Event::ToolCallEnd { status, .. } => Some(*status),
                _ => None,
            })
            .collect();
        assert_eq!(statuses.iter().filter(|s| **s == ToolStatus::Error).count(), 3);
    }
}

#[tokio::test]
async fn a_provider_reusing_one_call_id_gets_unique_ids_back() {
    for wire in WIRES {
        let script = Script::new([
            sse(wire.tool_calls(&[
                ("call_1", "sleep", r#"{"ms":1,"label":"first"}"#),
                ("call_1", "sleep", r#"{"ms":1,"label":"second"}"#),
            ])),
            sse(wire.text("ok")),
        ]);
        let server = mock_server(wire, script).await;
        let mut t = engine(wire.provider(&server.uri()), |_| {});
        t.say("twice").await;
        assert!(matches!(last(&t.turn().await), Event::TurnCompleted { .. }));
        let body = &request_bodies(&server).await[1];
        let ids = wire.last_call_ids(body);
        assert_eq!(ids, ["call_1", "call_1_2"]);
        assert_eq!(
            wire.tool_results(body),
            [("call_1".to_string(), "slept first".to_string()), ("call_1_2".into(), "slept second".into())]
        );
        // Both calls and both results are in the stored history.
        let history = t.store.history(t.engine.session_id(), 0).unwrap();
        let results = history.iter().filter(|i| matches!(i, HistoryItem::ToolResult { .. })).count();
        assert_eq!(results, 2);
    }
}
