#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex as StdMutex};

use bridle_protocol::{AuditQuery, HistoryItem, Op};
use pretty_assertions::assert_eq;

use super::*;
use crate::wiring::Flags;

/// A host over a fresh workspace and data dir (no provider configured), and what it forwarded.
struct Fixture {
    host: SessionHost,
    sent: Arc<StdMutex<Vec<Outgoing>>>,
    _dirs: (tempfile::TempDir, tempfile::TempDir),
}

fn flags(workspace: &Path, data: &Path) -> Flags {
    Flags {
        workspace: Some(workspace.to_path_buf()),
        data_dir: Some(data.to_path_buf()),
        config: Some(data.join("config.toml")),
    }
}

async fn fixture() -> Fixture {
    let (workspace, data) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let flags = flags(workspace.path(), data.path());
    let wiring = Wiring::load(flags.clone(), |_| None, || unreachable!()).unwrap();
    let reload: Reload = Arc::new(move || Wiring::load(flags.clone(), |_| None, || unreachable!()));
    let sent = Arc::new(StdMutex::new(Vec::new()));
    let to = sent.clone();
    let forward: Forward = Arc::new(move |out| to.lock().unwrap().push(out));
    let host = SessionHost::start(wiring, reload, forward).await.unwrap();
    Fixture { host, sent, _dirs: (workspace, data) }
}

#[test]
fn an_error_is_described_with_its_causes() {
    #[derive(Debug, thiserror::Error)]
    #[error("outer")]
    struct Outer(#[source] std::io::Error);
    let e = Outer(std::io::Error::other("inner"));
    assert_eq!(chain(&e), "outer: inner");
}

#[test]
fn rules_are_explained_per_pattern_and_an_unknown_list_is_refused() {
    // The list is typed: a name that is no list never reaches the explanation.
    let refused = serde_json::from_str::<bridle_protocol::RuleList>("\"maybe\"").unwrap_err();
    assert!(refused.to_string().contains("unknown variant `maybe`"), "{refused}");
    let meanings = rules_explain(bridle_protocol::RuleList::Allow, &["bash(git status)".into()]).unwrap();
    assert_eq!(meanings.len(), 1);
    assert_eq!(meanings[0].pattern, "bash(git status)");
    assert!(meanings[0].meaning.is_some() != meanings[0].error.is_some());
}

#[tokio::test]
async fn a_host_that_never_started_says_so() {
    let (ready, starting) = watch::channel(None);
    drop(ready);
    let err = Starting(starting).get().await.err().unwrap();
    assert_eq!(err.code, "not_started");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_launch_opens_a_new_session_in_its_workspace_and_lists_it() {
    let f = fixture().await;
    let summary = f.host.summary().await.unwrap();
    let listed = f.host.sessions_list().await.unwrap();
    assert!(listed.iter().any(|s| s.id == summary.session_id), "{listed:?}");
    assert!(f.host.pending_approvals().await.unwrap().is_empty());
    let snapshot = f.host.session_snapshot().await.unwrap();
    assert!(snapshot.pending_approvals.is_empty());
    assert_eq!(f.host.settings_get().await.unwrap().workspace, summary.workspace);
    f.host.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_header_shows_the_mode_in_force_after_a_switch() {
    let f = fixture().await;
    assert_eq!(f.host.summary().await.unwrap().mode, bridle_protocol::Mode::Ask);
    f.host.submit(Op::SetMode { mode: bridle_protocol::Mode::Plan }).await.unwrap();
    // The switch is applied by the session's loop; the window's next look (a reload) sees it.
    let mut summary = f.host.summary().await.unwrap();
    for _ in 0..100 {
        if summary.mode == bridle_protocol::Mode::Plan {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        summary = f.host.summary().await.unwrap();
    }
    assert_eq!(summary.mode, bridle_protocol::Mode::Plan);
    f.host.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn showing_another_session_stops_none_and_deleting_the_shown_one_shows_another() {
    let f = fixture().await;
    let data_dir = f.host.wiring().data_dir;
    let live = |id: &str| crate::store::SessionLease::is_held(&data_dir, id).unwrap();
    let first = f.host.summary().await.unwrap();
    let second = f.host.session_new().await.unwrap();
    assert_ne!(first.session_id, second.session_id);
    assert!(live(&first.session_id) && live(&second.session_id), "both sessions run");
    let back = f.host.session_open(first.session_id.clone()).await.unwrap();
    assert_eq!(back.session_id, first.session_id);
    assert!(live(&second.session_id), "the session no longer shown still runs");
    let after = f.host.session_delete(first.session_id.clone()).await.unwrap();
    assert_eq!(after.session_id, second.session_id, "the other live session is shown");
    // Released at once, even while a process another test forks holds a copy of its files.
    assert!(!live(&first.session_id), "the deleted session's lease is still held");
    assert_eq!(f.host.summary().await.unwrap().session_id, after.session_id);
    let ids: Vec<String> = f.host.sessions_list().await.unwrap().into_iter().map(|s| s.id).collect();
    assert!(!ids.contains(&first.session_id));
    let missing = f.host.session_open("no-such-id".into()).await.unwrap_err();
    assert_eq!(missing.code, "no_such_session");
    f.host.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_session_beside_a_busy_one_in_a_checkout_gets_a_worktree_of_its_own() {
    let (workspace, data) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let git = |args: &[&str]| {
        let ok = std::process::Command::new("git").args(args).current_dir(workspace.path()).status().unwrap();
        assert!(ok.success(), "git {args:?}");
    };
    git(&["init", "-q", "-b", "main"]);
    git(&["-c", "user.name=T", "-c", "user.email=t@e", "commit", "-q", "--allow-empty", "-m", "start"]);
    let flags = flags(workspace.path(), data.path());
    let wiring = Wiring::load(flags.clone(), |_| None, || unreachable!()).unwrap();
    let reload: Reload = Arc::new(move || Wiring::load(flags.clone(), |_| None, || unreachable!()));
    let host = SessionHost::start(wiring, reload, Arc::new(|_| {})).await.unwrap();
    let first = host.summary().await.unwrap();
    // Idle beside it: the next one shares the checkout.
    let beside = host.session_new().await.unwrap();
    assert_eq!(beside.workspace, first.workspace);
    // Working: the next one is cut a worktree of its own.
    host.0.store.set_turn_state(&first.session_id, crate::store::TurnState::Working).unwrap();
    let busy = host.session_new().await.unwrap();
    let worktrees = data.path().canonicalize().unwrap().join("worktrees");
    assert!(std::path::Path::new(&busy.workspace).starts_with(&worktrees), "{}", busy.workspace);
    let listed = host.sessions_list().await.unwrap();
    let made = listed.iter().find(|s| s.id == busy.session_id).unwrap();
    assert_eq!(made.worktree.as_ref().map(|w| w.origin.as_str()), Some(first.workspace.as_str()));
    host.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_host_answers_no_session_and_forwarded_the_mcp_list() {
    let f = fixture().await;
    f.host.close().await;
    assert_eq!(f.host.submit(Op::Interrupt).await.unwrap_err().code, "no_session");
    assert_eq!(f.host.summary().await.unwrap_err().code, "no_session");
    assert_eq!(f.host.mcp_status().await.unwrap_err().code, "no_session");
    // The servers' list goes out as soon as a session opens, even when it is empty.
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    assert!(f.sent.lock().unwrap().iter().any(|out| matches!(out, Outgoing::Mcp(list) if list.servers.is_empty())));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mcp_list_is_numbered_past_every_change_and_every_session_before() {
    let f = fixture().await;
    let first = f.host.mcp_status().await.unwrap();
    let off = bridle_protocol::McpServerSettings {
        name: "off".into(),
        command: "true".into(),
        args: Vec::new(),
        url: String::new(),
        enabled: false,
        startup_timeout_secs: 5,
        env_names: Vec::new(),
        header_names: Vec::new(),
    };
    f.host.mcp_save(off, None).await.unwrap();
    let edited = f.host.mcp_status().await.unwrap();
    assert!(edited.seq > first.seq, "{} after {}", edited.seq, first.seq);
    assert_eq!(edited.servers.len(), 1);
    // A new session has a new hub, counting from nothing: its lists still come after the old ones'.
    f.host.session_new().await.unwrap();
    let reopened = f.host.mcp_status().await.unwrap();
    assert!(reopened.seq > edited.seq, "{} after {}", reopened.seq, edited.seq);
    // What is pushed is numbered the same way, from one count with the answers: the newest
    // number is always the newest list (an old session's late push carries a smaller one).
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    let pushed: Vec<u64> = f
        .sent
        .lock()
        .unwrap()
        .iter()
        .filter_map(|out| match out {
            Outgoing::Mcp(list) => Some(list.seq),
            Outgoing::Engine(_) => None,
        })
        .collect();
    assert!(pushed.iter().all(|seq| *seq < reopened.seq), "{pushed:?} before {}", reopened.seq);
    assert!(pushed.windows(2).all(|w| w[0] < w[1]), "{pushed:?}");
    f.host.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_audit_kind_is_a_read_failure() {
    let f = fixture().await;
    let query = AuditQuery { kind: Some("no_such_kind".into()), ..AuditQuery::default() };
    assert_eq!(f.host.audit_query(query).await.unwrap_err().code, "audit_read_failed");
    assert!(f.host.audit_query(AuditQuery::default()).await.is_ok());
    f.host.close().await;
}

#[test]
fn the_launch_reopens_the_newest_session_of_its_workspace_left_waiting() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("bridle.db")).unwrap();
    let wait = |session: &str, workspace: &str, at: i64| {
        store.create_session(session, workspace, 0).unwrap();
        let call = bridle_protocol::ToolCall {
            id: format!("c-{session}"),
            provider_id: "p".into(),
            name: "write_file".into(),
            arguments: "{}".into(),
        };
        let request = bridle_protocol::ApprovalRequest {
            id: format!("a-{session}"),
            session_id: session.into(),
            call_id: call.id.clone(),
            subject: bridle_protocol::ApprovalSubject::Call {
                tool: call.name.clone(),
                arguments: call.arguments.clone(),
            },
            findings: Vec::new(),
            preview: None,
            call_hash: "h".into(),
            created_at: at,
            expires_at: at + 60_000,
        };
        store.insert_approval(&request, "t1", &call).unwrap();
    };
    wait("older", "/w", 10);
    wait("newer", "/w", 20);
    wait("elsewhere", "/other", 30);
    store.create_session("idle", "/w", 40).unwrap();
    assert_eq!(waiting_session(&store, Path::new("/w")).unwrap().as_deref(), Some("newer"));
    // A session in a worktree made from `/w` is one of `/w`'s.
    wait("in-a-worktree", "/data/worktrees/in-a-worktree", 25);
    let worktree = crate::worktrees::Worktree {
        path: "/data/worktrees/in-a-worktree".into(),
        origin: "/w".into(),
        branch: "bridle/x".into(),
        base: "abc".into(),
        included: Vec::new(),
        common_dir: "/w/.git".into(),
        admin_dir: "/w/.git/worktrees/in-a-worktree".into(),
    };
    store.record_worktree("in-a-worktree", &worktree, 25).unwrap();
    assert_eq!(waiting_session(&store, Path::new("/w")).unwrap().as_deref(), Some("in-a-worktree"));
    assert_eq!(waiting_session(&store, Path::new("/none")).unwrap(), None);
}

/// A loopback port that counts the connections made to it (each dropped at once): the model
/// server's or an MCP server's, as a test double.
fn counted_port() -> (u16, Arc<std::sync::atomic::AtomicUsize>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let hits = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = hits.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            counted.fetch_add(1, Ordering::SeqCst);
            drop(stream);
        }
    });
    (port, hits)
}

/// The launch path (issue 44): the first screen's data (the header and the stored session) comes
/// from the store, with no call to the network, a process or an MCP server. The doubles: the
/// model server and an HTTP MCP server on counted ports, and a stdio MCP server that writes a
/// line each time it is started.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_screen_comes_from_the_store_with_no_network_process_or_mcp_call() {
    let (model_port, model) = counted_port();
    let (mcp_port, mcp) = counted_port();
    let (workspace, data) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let starts = data.path().join("stdio-starts");
    let config = format!(
        "[provider]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:{model_port}/v1\"\nmodel = \"m\"\n\n\
         [mcp.servers.remote]\nurl = \"http://127.0.0.1:{mcp_port}/mcp\"\nstartup_timeout_secs = 5\n\n\
         [mcp.servers.local]\ncommand = \"/bin/sh\"\nargs = [\"-c\", \"echo started >> {}\"]\nstartup_timeout_secs = 5\n",
        starts.display()
    );
    std::fs::write(data.path().join("config.toml"), config).unwrap();
    let flags = flags(workspace.path(), data.path());
    let wiring = Wiring::load(flags.clone(), |_| None, || unreachable!()).unwrap();
    let reload: Reload = Arc::new(move || Wiring::load(flags.clone(), |_| None, || unreachable!()));
    let (events, mut heard) = tokio::sync::mpsc::unbounded_channel();
    let forward: Forward = Arc::new(move |out| {
        if let Outgoing::Engine(e) = out {
            let _ = events.send(e.event);
        }
    });
    let host = SessionHost::start(wiring, reload, forward).await.unwrap();
    // What the engine does behind the window at launch, before counting: its MCP servers start
    // (both fail here), and its loop asks the model server for its context window before it
    // takes its first op (a mode switch, answered with an event).
    let hub = host.mcp().await.unwrap();
    hub.settled().await;
    host.submit(Op::SetMode { mode: bridle_protocol::Mode::Ask }).await.unwrap();
    while !matches!(heard.recv().await, Some(Event::ModeChanged { .. })) {}
    let id = host.summary().await.unwrap().session_id;
    let said = HistoryItem::User { text: "what changed?".into() };
    host.0.store.append(&id, "t1", &said, 1).unwrap();
    let started = || std::fs::read_to_string(&starts).unwrap_or_default().lines().count();
    let counts = || (model.load(Ordering::SeqCst), mcp.load(Ordering::SeqCst), started());
    let before = counts();
    // The doubles do count: the launch reached the model server and both MCP servers.
    assert!(before.0 >= 1 && before.1 >= 1 && before.2 == 1, "{before:?}");

    // What the window asks for its first screen.
    let summary = host.summary().await.unwrap();
    let snapshot = host.session_snapshot().await.unwrap();
    let pending = host.pending_approvals().await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;

    assert_eq!(counts(), before, "no network, process or MCP call");
    assert_eq!(summary.session_id, id);
    let items: Vec<_> = snapshot.items.iter().map(|i| i.item.clone()).collect();
    assert_eq!(items, [said]);
    assert!(pending.is_empty() && snapshot.pending_approvals.is_empty());
    host.close().await;
}
