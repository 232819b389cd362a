//! Unit tests of the store on real SQLite files.

#![allow(clippy::unwrap_used)]
use super::*;
use bridle_protocol::ToolCall;
use pretty_assertions::assert_eq;

fn call(id: &str) -> ToolCall {
    ToolCall { id: id.into(), provider_id: format!("p-{id}"), name: "t".into(), arguments: "{}".into() }
}

#[test]
fn history_survives_reopening_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bridle.db");
    let items = vec![
        HistoryItem::User { text: "list the files\nplease".into() },
        HistoryItem::Assistant { text: "".into(), tool_calls: vec![call("a")], cut_off: false },
        HistoryItem::ToolResult { result: ToolResult::ok("a", "x") },
        HistoryItem::Assistant { text: "done".into(), tool_calls: vec![], cut_off: false },
    ];
    {
        let store = Store::open(&path).unwrap();
        store.create_session("s1", "/ws", 1).unwrap();
        for (i, item) in items.iter().enumerate() {
            store.append("s1", "t1", item, 10 + i as i64).unwrap();
        }
    }
    let store = Store::open(&path).unwrap();
    assert_eq!(store.history("s1", 99).unwrap(), items);
    let info = store.session("s1").unwrap();
    assert_eq!((info.title.as_str(), info.updated_at), ("list the files", 13));
}

#[test]
fn dangling_calls_are_closed_in_place_once() {
    let store = Store::open_in_memory().unwrap();
    store.create_session("s", "/ws", 0).unwrap();
    store.append("s", "t", &HistoryItem::User { text: "go".into() }, 1).unwrap();
    store
        .append(
            "s",
            "t",
            &HistoryItem::Assistant { text: "".into(), tool_calls: vec![call("a"), call("b")], cut_off: false },
            2,
        )
        .unwrap();
    store.append("s", "t", &HistoryItem::ToolResult { result: ToolResult::ok("a", "fine") }, 3).unwrap();
    let history = store.history("s", 4).unwrap();
    assert_eq!(history.len(), 4);
    let HistoryItem::ToolResult { result } = &history[3] else { panic!("{history:?}") };
    assert_eq!(result.tool_call_id, "b");
    assert!(result.is_error);
    // The repair was written: loading again changes nothing.
    assert_eq!(store.history("s", 5).unwrap(), history);
}

#[test]
fn sessions_are_listed_newest_first_and_deleted_with_their_items() {
    let store = Store::open_in_memory().unwrap();
    store.create_session("old", "/a", 1).unwrap();
    store.create_session("new", "/b", 2).unwrap();
    let ids: Vec<_> = store.sessions().unwrap().into_iter().map(|s| s.id).collect();
    assert_eq!(ids, ["new", "old"]);
    store.append("old", "t", &HistoryItem::User { text: "hi".into() }, 3).unwrap();
    store.delete_session("old").unwrap();
    assert!(matches!(store.history("old", 4), Err(StoreError::NoSession(_))));
    assert!(matches!(store.delete_session("old"), Err(StoreError::NoSession(_))));
}

#[test]
fn a_newer_schema_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bridle.db");
    Connection::open(&path).unwrap().pragma_update(None, "user_version", 99).unwrap();
    assert!(matches!(Store::open(&path), Err(StoreError::TooNew { found: 99, .. })));
}
