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

#[test]
fn many_openers_of_one_new_file_at_once_all_get_the_whole_schema() {
    for _ in 0..5 {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bridle.db");
        let barrier = std::sync::Arc::new(std::sync::Barrier::new(8));
        let openers: Vec<_> = (0..8)
            .map(|i| {
                let (path, barrier) = (path.clone(), barrier.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    let store = Store::open(&path).map_err(|e| e.to_string())?;
                    store.create_session(&format!("s{i}"), "/ws", i).map_err(|e| e.to_string())
                })
            })
            .collect();
        for opener in openers {
            opener.join().unwrap().unwrap();
        }
        let store = Store::open(&path).unwrap();
        assert_eq!(store.sessions().unwrap().len(), 8);
    }
}

#[test]
fn a_session_is_idle_working_failed_or_needs_you_as_its_turn_and_its_lease_say() {
    use bridle_protocol::{ApprovalRequest, ApprovalSubject, SessionState, WaitingFor};
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("bridle.db")).unwrap();
    store.create_session("s-1", "/ws", 0).unwrap();
    let state = |store: &Store| {
        let s = store.session("s-1").unwrap();
        (s.state, s.waiting_for, s.waiting)
    };
    assert_eq!(state(&store), (SessionState::Idle, None, 0));
    assert_eq!(store.session("s-1").unwrap().branch, None, "`/ws` is no checkout");
    let lease = SessionLease::try_acquire(dir.path(), "s-1").unwrap().unwrap();
    store.set_turn_state("s-1", TurnState::Working).unwrap();
    assert_eq!(state(&store), (SessionState::Working, None, 0));
    // A host question counts while the session's process lives, and dies with it.
    let host = ApprovalRequest {
        id: "a-1".into(),
        session_id: "s-1".into(),
        call_id: "c".into(),
        subject: ApprovalSubject::Host { host: "x.test".into(), port: 443, command: "curl".into() },
        findings: vec![],
        preview: None,
        call_hash: "h".into(),
        created_at: 1,
        expires_at: i64::MAX,
    };
    store.insert_approval(&host, "t", &call("c")).unwrap();
    assert_eq!(state(&store), (SessionState::NeedsYou, Some(WaitingFor::Host), 1));
    drop(lease);
    assert_eq!(state(&store), (SessionState::Failed, None, 0));
    assert!(store.inbox(None).unwrap().is_empty());
    // A call's approval waits for whichever process resumes the turn.
    let call_request = ApprovalRequest {
        id: "a-2".into(),
        subject: ApprovalSubject::Call { tool: "bash".into(), arguments: "{}".into() },
        created_at: 2,
        ..host
    };
    store.insert_approval(&call_request, "t", &call("c")).unwrap();
    assert_eq!(state(&store), (SessionState::NeedsYou, Some(WaitingFor::Approval), 1));
}
