//! One call's whole stream (DESIGN §2, §3): what a running command asks — a host, its held
//! changes, a background process's late host — is recorded under the call itself, in the order
//! it happened, through the one approval machine. The audit rows are the stream's record (each
//! `CallEvent` leaves its rows, shaped once), so a call's rows in order are its events in order.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use bridle_core::config::{NetworkConfig, NetworkMode};
use bridle_core::shell_sandbox::HostEnvironment;
use bridle_protocol::{ApprovalAnswer, ApprovalSubject, Event, Mode, Op};
use pretty_assertions::assert_eq;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::harness::*;

/// A page on 127.0.0.1 that answers every request with `hello from the page`; how many it served.
pub(super) async fn page() -> (u16, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let served = Arc::new(AtomicUsize::new(0));
    let count = served.clone();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            count.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                let mut head = [0u8; 1024];
                let _ = s.read(&mut head).await;
                let body = "hello from the page";
                let reply = format!("HTTP/1.0 200 OK\r\ncontent-length: {}\r\n\r\n{body}", body.len());
                let _ = s.write_all(reply.as_bytes()).await;
            });
        }
    });
    (port, served)
}

/// A session in `mode` whose commands may run `curl` and reach `new.test` (the page) only by
/// asking; the model runs `args` with bash, then says it is done.
async fn session(mode: Mode, args: serde_json::Value) -> (TestEngine, wiremock::MockServer) {
    let wire = Wire::OpenAi;
    let script = Script::new([
        sse(wire.tool_calls(&[("c1", "bash", &args.to_string())])),
        sse(wire.text("done")),
        sse(wire.text("done")),
    ]);
    let server = mock_server(wire, script).await;
    let t = engine(wire.provider(&server.uri()), |c| {
        c.mode = mode;
        c.rules.allow = vec!["bash(curl *)".into(), "bash(sleep *)".into()];
        c.sandbox.network = NetworkConfig {
            mode: NetworkMode::Ask,
            allow: vec!["127.0.0.1".into()],
            deny: Vec::new(),
            host_ports: Vec::new(),
        };
        c.host_environment = HostEnvironment::new([("BRIDLE_NET_RESOLVE".into(), "new.test=127.0.0.1".into())]);
    });
    (t, server)
}

/// Runs the turn, answering every question with `answer` (by its subject); the questions'
/// subjects in the order asked, and the bash call's id.
pub(super) async fn answered(
    t: &mut TestEngine,
    answer: impl Fn(&ApprovalSubject) -> ApprovalAnswer,
) -> (Vec<String>, String) {
    let mut asked = Vec::new();
    let mut call_id = String::new();
    loop {
        let event = t.next_matching(|_| true).await;
        match &event {
            Event::ToolCallBegin { call, .. } => call_id = call.id.clone(),
            Event::ApprovalRequested { request, .. } => {
                asked.push(subject_word(&request.subject).to_string());
                t.engine.submit(resolve(request, answer(&request.subject))).await.unwrap();
            }
            Event::TurnCompleted { .. } | Event::TurnAborted { .. } => return (asked, call_id),
            _ => {}
        }
    }
}

/// `decision` for `request`, naming its call hash.
fn resolve(request: &bridle_protocol::ApprovalRequest, decision: ApprovalAnswer) -> Op {
    Op::ResolveApproval {
        approval_id: request.id.clone(),
        decision,
        feedback: None,
        edited_arguments: None,
        call_hash: Some(request.call_hash.clone()),
    }
}

pub(super) fn subject_word(subject: &ApprovalSubject) -> &'static str {
    match subject {
        ApprovalSubject::Call { .. } => "call",
        ApprovalSubject::Host { .. } => "host",
        ApprovalSubject::Changes { .. } => "changes",
    }
}

/// The audit rows of `call_id`, oldest first, as `kind` or `kind:subject` for a question.
fn stream_of(t: &TestEngine, call_id: &str) -> Vec<String> {
    t.audit.flush().unwrap();
    let log = bridle_core::audit::AuditLog::open(&t.dir.path().join("data")).unwrap();
    let mut rows = log.query(&bridle_core::audit::AuditFilter::default()).unwrap();
    rows.reverse();
    rows.into_iter()
        .filter(|r| r.call_id.as_deref() == Some(call_id))
        .map(|r| match r.payload["subject"]["type"].as_str() {
            Some(subject) => format!("{}:{subject}", r.kind),
            None => match r.kind.as_str() {
                "approval_resolved" | "network" => {
                    let decision = r.decision.map(|d| json!(d).as_str().unwrap_or_default().to_string());
                    format!("{}:{}", r.kind, decision.unwrap_or_default())
                }
                _ => r.kind,
            },
        })
        .collect()
}

#[tokio::test]
async fn a_command_that_asks_for_a_host_and_lands_held_changes_records_each_step_in_order() {
    let (port, served) = page().await;
    let command = format!("curl -sS --max-time 20 -o page.txt http://new.test:{port}/");
    let (mut t, _server) = session(Mode::Review, json!({"command": command, "timeout_secs": 60})).await;
    t.say("fetch the page").await;
    let (asked, call_id) = answered(&mut t, |_| ApprovalAnswer::ApproveOnce).await;
    assert_eq!(asked, ["host", "changes"]);
    assert_eq!(served.load(Ordering::SeqCst), 1);
    assert_eq!(std::fs::read_to_string(t.dir.path().join("ws/page.txt")).unwrap(), "hello from the page");
    assert_eq!(
        stream_of(&t, &call_id),
        [
            "tool_call",
            "guard_decision",
            "tool_started",
            "approval_requested:host",
            "approval_resolved:allow",
            "network:allow",
            "approval_requested:changes",
            "approval_resolved:allow",
            "tool_completed",
            "file_changed",
        ]
    );
    // Neither question is a call of its own: nothing is left to resume.
    assert!(t.store.held_approvals(t.engine.session_id()).unwrap().is_empty());
}

#[tokio::test]
async fn a_denied_host_is_refused_and_recorded_under_its_call() {
    let (port, served) = page().await;
    let command = format!("curl -sS --max-time 20 http://new.test:{port}/");
    let (mut t, _server) = session(Mode::Auto, json!({"command": command, "timeout_secs": 60})).await;
    t.say("fetch the page").await;
    let (asked, call_id) = answered(&mut t, |_| ApprovalAnswer::Deny).await;
    assert_eq!(asked, ["host"]);
    assert_eq!(served.load(Ordering::SeqCst), 0, "nothing reached the page");
    assert_eq!(
        stream_of(&t, &call_id),
        [
            "tool_call",
            "guard_decision",
            "tool_started",
            "approval_requested:host",
            "approval_resolved:deny",
            "network:deny",
            "tool_completed",
        ]
    );
}

#[tokio::test]
async fn a_background_process_asks_late_through_its_call_stream() {
    let (port, served) = page().await;
    // The process waits for the test's word, given once the turn is over, however slow the
    // machine.
    let command = format!("while [ ! -e go ]; do sleep 0.1; done; curl -sS --max-time 20 http://new.test:{port}/");
    let (mut t, _server) = session(Mode::Auto, json!({"command": command, "background": true})).await;
    t.say("fetch the page in the background").await;
    let (asked, call_id) = answered(&mut t, |_| ApprovalAnswer::ApproveOnce).await;
    assert!(asked.is_empty(), "the process asks after its call ended: {asked:?}");
    std::fs::write(t.dir.path().join("ws/go"), "").unwrap();
    // The turn is over; the process asks now, as its call.
    let Event::ApprovalRequested { request, .. } =
        t.next_matching(|e| matches!(e, Event::ApprovalRequested { .. })).await
    else {
        unreachable!()
    };
    assert_eq!(request.call_id, call_id);
    assert!(matches!(&request.subject, ApprovalSubject::Host { host, .. } if host == "new.test"), "{request:?}");
    t.engine.submit(resolve(&request, ApprovalAnswer::ApproveOnce)).await.unwrap();
    t.next_matching(|e| matches!(e, Event::ApprovalResolved { .. })).await;
    for _ in 0..100 {
        if stream_of(&t, &call_id).last().is_some_and(|k| k.starts_with("network")) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(served.load(Ordering::SeqCst), 1);
    assert_eq!(
        stream_of(&t, &call_id),
        [
            "tool_call",
            "guard_decision",
            "tool_started",
            "tool_completed",
            "approval_requested:host",
            "approval_resolved:allow",
            "network:allow",
        ]
    );
}
