//! Approvals through the engine: asking, answering, refusing, expiring, interrupting, and a turn
//! that waits across processes.

use std::time::Duration;

use bridle_core::calls::{Answer, ApprovalQueue};
use bridle_core::clock::SystemClock;
use bridle_core::engine::SessionSpec;
use bridle_core::store::{ApprovalStatus, SessionLease};
use bridle_protocol::{
    AbortReason, ApprovalAnswer, ApprovalRequest, ApprovalSubject, Decision, DecisionSource, Event, HistoryItem, Mode,
    Op, ToolStatus,
};
use pretty_assertions::assert_eq;

use super::harness::*;

const WRITE: &str = r#"{"path":"notes/welcome.txt","content":"Welcome\n"}"#;

async fn requested(t: &mut TestEngine) -> ApprovalRequest {
    match t.next_matching(|e| matches!(e, Event::ApprovalRequested { .. })).await {
        Event::ApprovalRequested { request, .. } => request,
        _ => unreachable!(),
    }
}

fn answer(request: &ApprovalRequest, decision: ApprovalAnswer) -> Op {
    answer_edited(request, decision, None)
}

/// An answer, with the arguments as the user edited them (if they did).
fn answer_edited(request: &ApprovalRequest, decision: ApprovalAnswer, edited: Option<String>) -> Op {
    Op::ResolveApproval {
        approval_id: request.id.clone(),
        decision,
        feedback: None,
        edited_arguments: edited,
        call_hash: Some(request.call_hash.clone()),
    }
}

#[tokio::test]
async fn a_write_in_ask_mode_waits_for_approval_with_a_preview_then_runs() {
    for wire in WIRES {
        let script = Script::new([
            sse(wire.tool_calls(&[("c1", "write_file", WRITE)])),
            sse(wire.text("The welcome note is written.")),
        ]);
        let server = mock_server(wire, script).await;
        let mut t = engine(wire.provider(&server.uri()), |c| c.mode = Mode::Ask);
        t.say("write the note").await;
        let request = requested(&mut t).await;
        assert!(
            matches!(&request.subject, ApprovalSubject::Call { tool, .. } if tool == "write_file"),
            "{:?}",
            request.subject
        );
        assert!(request.preview.as_deref().unwrap().contains("+Welcome"), "{:?}", request.preview);
        let file = t.dir.path().join("ws/notes/welcome.txt");
        assert!(!file.exists(), "nothing is written before the answer");
        let pending = t.store.pending_approvals(Some(t.engine.session_id())).unwrap();
        assert_eq!(pending.len(), 1);
        assert_eq!(pending[0].request, request);

        t.engine.submit(answer(&request, ApprovalAnswer::ApproveOnce)).await.unwrap();
        let rest = t.turn().await;
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "Welcome\n");
        let kinds = kinds(&rest);
        let resolved = kinds.iter().position(|k| k == "approvalResolved").unwrap();
        let ended = kinds.iter().position(|k| k == "toolCallEnd").unwrap();
        assert!(resolved < ended, "{kinds:?}");
        assert!(rest.iter().any(|e| matches!(
            e,
            Event::ApprovalResolved { decision: ApprovalAnswer::ApproveOnce, source: DecisionSource::User, .. }
        )));
        assert_eq!(tool_ends(&rest)[0].0, ToolStatus::Ok);
        assert!(matches!(last(&rest), Event::TurnCompleted { .. }));
        assert_eq!(t.store.approval(&request.id).unwrap().unwrap().status, ApprovalStatus::Started);
    }
}

#[tokio::test]
async fn an_answer_naming_another_calls_hash_is_refused_and_the_request_stays_pending() {
    let wire = Wire::OpenAi;
    let script = Script::new([sse(wire.tool_calls(&[("c1", "write_file", WRITE)])), sse(wire.text("Done."))]);
    let server = mock_server(wire, script).await;
    let mut t = engine(wire.provider(&server.uri()), |c| c.mode = Mode::Ask);
    t.say("write").await;
    let request = requested(&mut t).await;
    let forged = Op::ResolveApproval {
        approval_id: request.id.clone(),
        decision: ApprovalAnswer::ApproveOnce,
        feedback: None,
        edited_arguments: None,
        call_hash: Some("0".repeat(64)),
    };
    t.engine.submit(forged).await.unwrap();
    let refused = t.next_matching(|e| matches!(e, Event::Error { .. })).await;
    let Event::Error { info, .. } = refused else { unreachable!() };
    assert_eq!(info.code, "approval_refused");
    assert!(info.message.contains("another call"), "{}", info.message);
    assert_eq!(t.store.approval(&request.id).unwrap().unwrap().status, ApprovalStatus::Pending);
    assert!(!t.dir.path().join("ws/notes/welcome.txt").exists());

    // The same answer twice: the second is refused.
    t.engine.submit(answer(&request, ApprovalAnswer::Deny)).await.unwrap();
    t.engine.submit(answer(&request, ApprovalAnswer::ApproveOnce)).await.unwrap();
    let rest = t.turn().await;
    assert!(rest.iter().any(|e| matches!(e, Event::Error { info, .. } if info.code == "approval_refused")));
    assert_eq!(tool_ends(&rest), [(ToolStatus::Denied, "Denied by the user.".to_string())]);
    assert!(!t.dir.path().join("ws/notes/welcome.txt").exists());
}

#[tokio::test]
async fn a_file_changed_between_request_and_answer_gets_a_fresh_request() {
    let wire = Wire::OpenAi;
    let edit = r#"{"path":"a.txt","old_string":"one","new_string":"two"}"#;
    let script = Script::new([sse(wire.tool_calls(&[("c1", "edit_file", edit)])), sse(wire.text("Edited."))]);
    let server = mock_server(wire, script).await;
    let mut t = engine(wire.provider(&server.uri()), |c| c.mode = Mode::Ask);
    let file = t.dir.path().join("ws/a.txt");
    std::fs::write(&file, "one\n").unwrap();
    t.say("edit").await;
    let first = requested(&mut t).await;
    assert!(first.preview.as_deref().unwrap().contains("-one\n+two\n"));

    // The user edits the file meanwhile; the approval must not apply to a file nobody reviewed.
    std::fs::write(&file, "one\nthree\n").unwrap();
    t.engine.submit(answer(&first, ApprovalAnswer::ApproveOnce)).await.unwrap();
    let fresh = requested(&mut t).await;
    assert_ne!(fresh.id, first.id);
    assert_ne!(fresh.call_hash, first.call_hash);
    assert!(fresh.preview.as_deref().unwrap().contains(" three"), "{:?}", fresh.preview);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "one\nthree\n", "not run on the stale approval");
    assert_eq!(t.store.approval(&first.id).unwrap().unwrap().status, ApprovalStatus::Stale);

    t.engine.submit(answer(&fresh, ApprovalAnswer::ApproveOnce)).await.unwrap();
    let rest = t.turn().await;
    assert!(matches!(last(&rest), Event::TurnCompleted { .. }));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "two\nthree\n");
}

#[tokio::test]
async fn edited_arguments_are_judged_again_and_an_escape_is_denied() {
    let wire = Wire::OpenAi;
    let script = Script::new([sse(wire.tool_calls(&[("c1", "write_file", WRITE)])), sse(wire.text("OK."))]);
    let server = mock_server(wire, script).await;
    let mut t = engine(wire.provider(&server.uri()), |c| c.mode = Mode::Ask);
    t.say("write").await;
    let request = requested(&mut t).await;
    let outside = t.dir.path().join("escaped.txt");
    let edited = serde_json::json!({"path": outside.to_str().unwrap(), "content": "gotcha"}).to_string();
    t.engine.submit(answer_edited(&request, ApprovalAnswer::ApproveOnce, Some(edited))).await.unwrap();
    let rest = t.turn().await;
    let ends = tool_ends(&rest);
    assert_eq!(ends[0].0, ToolStatus::Denied, "{ends:?}");
    assert!(ends[0].1.contains("outside the workspace"), "{}", ends[0].1);
    assert!(!outside.exists());
    assert!(!t.dir.path().join("ws/notes/welcome.txt").exists());
}

#[tokio::test]
async fn edited_arguments_go_through_the_users_pre_call_hooks_again() {
    let wire = Wire::OpenAi;
    let script = Script::new([sse(wire.tool_calls(&[("c1", "write_file", WRITE)])), sse(wire.text("OK."))]);
    let server = mock_server(wire, script).await;
    let mut t = engine(wire.provider(&server.uri()), |c| {
        c.mode = Mode::Ask;
        c.hooks.pre_tool_use = vec![bridle_core::config::HookConfig {
            matcher: "write_file".into(),
            command: "if grep -q SECRET; then echo 'no secrets in files' >&2; exit 2; fi".into(),
            timeout_secs: 30,
            sandbox: true,
        }];
    });
    t.say("write").await;
    // The model's call passes the hook and asks; the user's edit would not have passed it.
    let request = requested(&mut t).await;
    let edited = serde_json::json!({"path": "notes/welcome.txt", "content": "SECRET=hunter2"}).to_string();
    t.engine.submit(answer_edited(&request, ApprovalAnswer::ApproveOnce, Some(edited))).await.unwrap();
    let rest = t.turn().await;
    let ends = tool_ends(&rest);
    assert_eq!(ends[0].0, ToolStatus::Denied, "{ends:?}");
    assert!(ends[0].1.contains("no secrets in files"), "{}", ends[0].1);
    assert!(!t.dir.path().join("ws/notes/welcome.txt").exists());
    t.audit.flush().unwrap();
    let log = bridle_core::audit::AuditLog::open(&t.dir.path().join("data")).unwrap();
    let rows = log.query(&bridle_core::audit::AuditFilter::default()).unwrap();
    // Two hook rows: the model's call went on, the edit was denied.
    let hooks: Vec<(Option<&str>, Option<Decision>)> = rows
        .iter()
        .rev()
        .filter(|r| r.source == Some(DecisionSource::Hook))
        .map(|r| (r.status.as_deref(), r.decision))
        .collect();
    assert_eq!(hooks, [(Some("continue"), Some(Decision::Allow)), (Some("decided"), Some(Decision::Deny))]);
}

#[tokio::test]
async fn an_unanswered_request_expires_as_a_denial() {
    let wire = Wire::OpenAi;
    let script = Script::new([sse(wire.tool_calls(&[("c1", "write_file", WRITE)])), sse(wire.text("OK."))]);
    let server = mock_server(wire, script).await;
    let mut t = engine(wire.provider(&server.uri()), |c| {
        c.mode = Mode::Ask;
        c.limits.approval_timeout_secs = 1;
    });
    t.say("write").await;
    let request = requested(&mut t).await;
    assert_eq!(request.expires_at - request.created_at, 1000);
    let rest = t.turn().await;
    assert!(rest.iter().any(|e| matches!(
        e,
        Event::ApprovalResolved { decision: ApprovalAnswer::Deny, source: DecisionSource::Timeout, .. }
    )));
    let ends = tool_ends(&rest);
    assert_eq!(ends[0].0, ToolStatus::Denied);
    assert!(ends[0].1.contains("nobody answered"), "{}", ends[0].1);
    assert_eq!(t.store.approval(&request.id).unwrap().unwrap().status, ApprovalStatus::Expired);
    assert!(matches!(last(&rest), Event::TurnCompleted { .. }), "the model hears of the denial and answers");
}

#[tokio::test]
async fn an_interrupt_denies_the_pending_request_and_closes_the_call() {
    let wire = Wire::OpenAi;
    let script = Script::new([sse(wire.tool_calls(&[("c1", "write_file", WRITE)]))]);
    let server = mock_server(wire, script).await;
    let mut t = engine(wire.provider(&server.uri()), |c| c.mode = Mode::Ask);
    t.say("write").await;
    let request = requested(&mut t).await;
    t.engine.submit(Op::Interrupt).await.unwrap();
    let rest = t.turn().await;
    assert!(matches!(last(&rest), Event::TurnAborted { reason: AbortReason::Interrupted, .. }));
    assert_eq!(tool_ends(&rest)[0].0, ToolStatus::Interrupted);
    assert_eq!(t.store.approval(&request.id).unwrap().unwrap().status, ApprovalStatus::Interrupted);
    let history = t.store.history(t.engine.session_id(), 0).unwrap();
    assert!(matches!(history.last(), Some(HistoryItem::ToolResult { result }) if result.is_error));
}

#[tokio::test]
async fn a_deferred_turn_resumes_in_another_process_once_approved() {
    let wire = Wire::OpenAi;
    let script = Script::new([
        sse(wire.tool_calls(&[("c1", "write_file", WRITE), ("c2", "get_current_time", "{}")])),
        sse(wire.text("The welcome note is written.")),
    ]);
    let server = mock_server(wire, script).await;
    let mut first = engine(wire.provider(&server.uri()), |c| {
        c.mode = Mode::Ask;
        c.defer_approvals = true;
    });
    first.say("write the note").await;
    let events = first.turn().await;
    let Event::TurnSuspended { approval_ids, turn_id, .. } = last(&events).clone() else { panic!("{events:?}") };
    assert_eq!(approval_ids.len(), 1);
    // The read ran; the write waits.
    assert_eq!(tool_ends(&events).len(), 1);
    let session = first.engine.session_id().to_string();
    let TestEngine { engine, events, store, dir, audit } = first;
    drop((engine, events, audit));

    // Another process answers.
    let queue = ApprovalQueue::new(store.clone(), std::sync::Arc::new(SystemClock));
    let answer = Answer {
        approval_id: approval_ids[0].clone(),
        decision: ApprovalAnswer::ApproveOnce,
        feedback: None,
        edited_arguments: None,
        call_hash: None,
    };
    queue.answer(&answer, None).unwrap();

    // And a third opens the session: the turn resumes by itself. (The first engine lets go of
    // the session when its loop has ended.)
    for _ in 0..100 {
        if SessionLease::try_acquire(&dir.path().join("data"), &session).unwrap().is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut second =
        engine_in(dir, wire.provider(&server.uri()), SessionSpec::Resume(session.clone()), |c| c.mode = Mode::Ask);
    assert_eq!(second.engine.resumed_turn(), Some(turn_id.as_str()));
    let rest = second.turn().await;
    assert!(matches!(last(&rest), Event::TurnCompleted { .. }), "{rest:?}");
    assert_eq!(std::fs::read_to_string(second.dir.path().join("ws/notes/welcome.txt")).unwrap(), "Welcome\n");
    let bodies = request_bodies(&server).await;
    let results = wire.tool_results(&bodies[1]);
    assert_eq!(results.len(), 2, "{results:?}");
}

#[tokio::test]
async fn an_exec_config_edit_asks_and_voids_the_sessions_command_approvals() {
    let wire = Wire::OpenAi;
    let npm_test = r#"{"command":"npm test --silent"}"#;
    let manifest = r#"{"path":"package.json","content":"{\"scripts\":{\"test\":\"echo changed\"}}\n"}"#;
    let script = Script::new([
        sse(wire.tool_calls(&[("c1", "bash", npm_test)])),
        sse(wire.tool_calls(&[("c2", "bash", npm_test)])),
        sse(wire.tool_calls(&[("c3", "write_file", manifest)])),
        sse(wire.tool_calls(&[("c4", "bash", npm_test)])),
        sse(wire.text("Done.")),
    ]);
    let server = mock_server(wire, script).await;
    let mut t = engine(wire.provider(&server.uri()), |c| c.mode = Mode::AutoEdit);
    std::fs::write(t.dir.path().join("ws/package.json"), r#"{"scripts":{"test":"echo original"}}"#).unwrap();
    t.say("run the tests").await;

    // auto-edit asks for commands; approved for the session.
    let first = requested(&mut t).await;
    assert!(matches!(&first.subject, ApprovalSubject::Call { tool, .. } if tool == "bash"), "{:?}", first.subject);
    t.engine.submit(answer(&first, ApprovalAnswer::ApproveSession)).await.unwrap();
    // The same command again runs without a request; then the manifest edit asks (exec-config).
    let edit = requested(&mut t).await;
    assert!(matches!(&edit.subject, ApprovalSubject::Call { tool, .. } if tool == "write_file"), "{:?}", edit.subject);
    assert!(edit.findings.iter().any(|f| f.guardian == "config"), "{:?}", edit.findings);
    t.engine.submit(answer(&edit, ApprovalAnswer::ApproveOnce)).await.unwrap();
    // After the manifest changed, the approved command asks again.
    let again = requested(&mut t).await;
    assert!(matches!(&again.subject, ApprovalSubject::Call { tool, .. } if tool == "bash"), "{:?}", again.subject);
    assert_eq!(again.subject, first.subject);
    t.engine.submit(answer(&again, ApprovalAnswer::Deny)).await.unwrap();
    let rest = t.turn().await;
    assert!(matches!(last(&rest), Event::TurnCompleted { .. }));
    let requests = t.store.session_approvals(t.engine.session_id()).unwrap();
    assert_eq!(requests.len(), 3, "c2 ran on the session approval, without a request");
}

#[tokio::test]
async fn approve_always_writes_a_visible_rule_to_the_config() {
    let wire = Wire::OpenAi;
    let script =
        Script::new([sse(wire.tool_calls(&[("c1", "bash", r#"{"command":"git status"}"#)])), sse(wire.text("Clean."))]);
    let server = mock_server(wire, script).await;
    let config_file = tempfile::tempdir().unwrap();
    let path = config_file.path().join("config.toml");
    std::fs::write(&path, "# my settings\nmode = \"ask\"\n").unwrap();
    let mut t = engine(wire.provider(&server.uri()), |c| {
        c.mode = Mode::Ask;
        c.config_file = Some(path.clone());
    });
    t.say("status").await;
    let request = requested(&mut t).await;
    t.engine.submit(answer(&request, ApprovalAnswer::ApproveAlways)).await.unwrap();
    let rest = t.turn().await;
    assert!(matches!(last(&rest), Event::TurnCompleted { .. }));
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.starts_with("# my settings\n"), "{text}");
    let config = bridle_core::config::Config::parse(&text).unwrap();
    assert_eq!(config.rules.allow, ["bash(git status)"]);
}

#[tokio::test]
async fn a_resumed_call_the_guard_now_refuses_voids_its_old_request() {
    let wire = Wire::OpenAi;
    let script = Script::new([sse(wire.tool_calls(&[("c1", "write_file", WRITE)])), sse(wire.text("Understood."))]);
    let server = mock_server(wire, script).await;
    let mut first = engine(wire.provider(&server.uri()), |c| {
        c.mode = Mode::Ask;
        c.defer_approvals = true;
    });
    first.say("write").await;
    let Event::TurnSuspended { approval_ids, .. } = last(&first.turn().await).clone() else { panic!("not suspended") };
    let session = first.engine.session_id().to_string();
    let TestEngine { engine, events, dir, audit, .. } = first;
    drop((engine, events, audit));
    for _ in 0..100 {
        if SessionLease::try_acquire(&dir.path().join("data"), &session).unwrap().is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Reopened in read-only mode: the write is denied outright, and its request is void.
    let mut second =
        engine_in(dir, wire.provider(&server.uri()), SessionSpec::Resume(session), |c| c.mode = Mode::ReadOnly);
    let rest = second.turn().await;
    assert_eq!(tool_ends(&rest)[0].0, ToolStatus::Denied);
    assert!(matches!(last(&rest), Event::TurnCompleted { .. }));
    assert_eq!(second.store.approval(&approval_ids[0]).unwrap().unwrap().status, ApprovalStatus::Interrupted);
    assert!(second.store.pending_approvals(None).unwrap().is_empty());
    assert!(!second.dir.path().join("ws/notes/welcome.txt").exists());
}

/// An "always" answer reads the rules back from the config file: the managed policy (DESIGN §17)
/// is applied again over them, so its deny rule still holds for the rest of the session.
#[tokio::test]
async fn after_approve_always_a_managed_deny_still_holds() {
    let wire = Wire::OpenAi;
    let script = Script::new([
        sse(wire.tool_calls(&[("c1", "bash", r#"{"command":"git status"}"#)])),
        sse(wire.tool_calls(&[("c2", "bash", r#"{"command":"git push origin main"}"#)])),
        sse(wire.text("Stopped.")),
    ]);
    let server = mock_server(wire, script).await;
    let config_file = tempfile::tempdir().unwrap();
    let path = config_file.path().join("config.toml");
    std::fs::write(&path, "mode = \"ask\"\n").unwrap();
    let managed = bridle_core::config::Managed {
        file: config_file.path().join("managed.toml"),
        policy: toml::from_str("[rules]\ndeny = [\"bash(git push*)\"]\n").unwrap(),
    };
    let mut t = engine(wire.provider(&server.uri()), |c| {
        c.mode = Mode::Ask;
        c.config_file = Some(path.clone());
        c.rules.deny = vec!["bash(git push*)".into()];
        c.managed = Some(managed);
    });
    t.say("status then push").await;
    let request = requested(&mut t).await;
    t.engine.submit(answer(&request, ApprovalAnswer::ApproveAlways)).await.unwrap();
    let rest = t.turn().await;
    assert!(matches!(last(&rest), Event::TurnCompleted { .. }));
    let ends = tool_ends(&rest);
    assert_eq!(ends.last().map(|(status, _)| *status), Some(ToolStatus::Denied), "{ends:?}");
}
