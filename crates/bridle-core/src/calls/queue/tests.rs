#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::Duration;

use bridle_protocol::{ApprovalAnswer, ApprovalRequest, DecisionSource, ToolCall};
use tokio_util::sync::CancellationToken;

use super::*;
use crate::clock::SystemClock;

fn request(session: &str, id: &str, expires_in_ms: i64) -> (ApprovalRequest, ToolCall) {
    let now = SystemClock.now_ms();
    let call = ToolCall {
        id: format!("call-{id}"),
        provider_id: "p".into(),
        name: "bash".into(),
        arguments: r#"{"command":"ls"}"#.into(),
    };
    let request = ApprovalRequest {
        id: id.into(),
        session_id: session.into(),
        call_id: call.id.clone(),
        subject: bridle_protocol::ApprovalSubject::Call { tool: "bash".into(), arguments: call.arguments.clone() },
        findings: Vec::new(),
        preview: None,
        call_hash: format!("hash-{id}"),
        created_at: now,
        expires_at: now + expires_in_ms,
    };
    (request, call)
}

fn open(path: &std::path::Path) -> ApprovalQueue {
    ApprovalQueue::new(Arc::new(Store::open(path).unwrap()), Arc::new(SystemClock))
}

fn seeded(dir: &tempfile::TempDir, ids: &[(&str, i64)]) -> ApprovalQueue {
    let path = dir.path().join("bridle.db");
    let queue = open(&path);
    queue.store.create_session("s1", "/w", 0).unwrap();
    for (id, expires) in ids {
        let (request, call) = request("s1", id, *expires);
        queue.store.insert_approval(&request, "t1", &call).unwrap();
    }
    queue
}

fn answer(id: &str, decision: ApprovalAnswer) -> Answer {
    Answer { approval_id: id.into(), decision, feedback: None, edited_arguments: None, call_hash: None }
}

#[test]
fn of_two_racing_answers_from_two_processes_exactly_one_wins() {
    let dir = tempfile::tempdir().unwrap();
    seeded(&dir, &[("a1", 60_000)]);
    for round in 0..20 {
        let id = format!("r{round}");
        let queue = open(&dir.path().join("bridle.db"));
        let (request, call) = request("s1", &id, 60_000);
        queue.store.insert_approval(&request, "t1", &call).unwrap();
        // Two separate connections, as two processes would have.
        let barrier = Arc::new(std::sync::Barrier::new(2));
        let handles: Vec<_> = [ApprovalAnswer::ApproveOnce, ApprovalAnswer::Deny]
            .into_iter()
            .map(|decision| {
                let (barrier, path, id) = (barrier.clone(), dir.path().join("bridle.db"), id.clone());
                std::thread::spawn(move || {
                    let queue = open(&path);
                    barrier.wait();
                    queue.answer(&answer(&id, decision), None).map(|s| s.status)
                })
            })
            .collect();
        let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        let wins: Vec<_> = results.iter().filter_map(|r| r.as_ref().ok()).collect();
        assert_eq!(wins.len(), 1, "round {round}: {results:?}");
        let loser = results.iter().find_map(|r| r.as_ref().err()).unwrap();
        assert!(matches!(loser, AnswerError::AlreadyAnswered { .. }), "{loser}");
        assert_eq!(queue.store.approval(&id).unwrap().unwrap().status, *wins[0]);
    }
}

#[test]
fn an_answer_naming_another_calls_hash_or_session_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let queue = seeded(&dir, &[("a1", 60_000), ("a2", 60_000)]);
    let mut wrong = answer("a1", ApprovalAnswer::ApproveOnce);
    wrong.call_hash = Some("hash-a2".into());
    assert!(matches!(queue.answer(&wrong, None), Err(AnswerError::WrongCall(_))));
    assert!(matches!(queue.answer(&answer("a1", ApprovalAnswer::Deny), Some("s2")), Err(AnswerError::WrongSession(_))));
    assert!(matches!(queue.answer(&answer("nope", ApprovalAnswer::Deny), None), Err(AnswerError::Unknown(_))));
    // Still pending after the refusals; the right hash is accepted.
    assert_eq!(queue.store.approval("a1").unwrap().unwrap().status, ApprovalStatus::Pending);
    let mut right = answer("a1", ApprovalAnswer::ApproveOnce);
    right.call_hash = Some("hash-a1".into());
    assert_eq!(queue.answer(&right, Some("s1")).unwrap().status, ApprovalStatus::Approved);
}

#[tokio::test]
async fn an_unanswered_request_expires_as_denied() {
    let dir = tempfile::tempdir().unwrap();
    let queue = seeded(&dir, &[("a1", 300)]);
    let started = std::time::Instant::now();
    let settled = queue.wait("a1", &CancellationToken::new()).await.unwrap();
    assert_eq!(settled.status, ApprovalStatus::Expired);
    assert_eq!(settled.answer.unwrap().source, DecisionSource::Timeout);
    assert!(started.elapsed() >= Duration::from_millis(250));
    // A late answer is refused.
    assert!(matches!(
        queue.answer(&answer("a1", ApprovalAnswer::ApproveOnce), None),
        Err(AnswerError::AlreadyAnswered { .. })
    ));
}

#[tokio::test]
async fn an_interrupt_denies_the_waiting_request() {
    let dir = tempfile::tempdir().unwrap();
    let queue = seeded(&dir, &[("a1", 60_000)]);
    let cancel = CancellationToken::new();
    let waiter = tokio::spawn({
        let (queue, cancel) = (queue.clone(), cancel.clone());
        async move { queue.wait("a1", &cancel).await }
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    cancel.cancel();
    let settled = waiter.await.unwrap().unwrap();
    assert_eq!(settled.status, ApprovalStatus::Interrupted);
}

#[tokio::test]
async fn an_answer_from_another_process_wakes_the_waiter() {
    let dir = tempfile::tempdir().unwrap();
    let queue = seeded(&dir, &[("a1", 60_000)]);
    let waiter = tokio::spawn({
        let queue = queue.clone();
        async move { queue.wait("a1", &CancellationToken::new()).await }
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    // A separate queue on its own connection: nothing notifies the waiter but its poll.
    let other = open(&dir.path().join("bridle.db"));
    other.answer(&answer("a1", ApprovalAnswer::ApproveSession), None).unwrap();
    let settled = tokio::time::timeout(Duration::from_secs(5), waiter).await.unwrap().unwrap().unwrap();
    assert_eq!(settled.status, ApprovalStatus::Approved);
    assert_eq!(settled.answer.unwrap().decision, ApprovalAnswer::ApproveSession);
}

#[test]
fn a_new_message_denies_every_pending_request_of_its_session() {
    let dir = tempfile::tempdir().unwrap();
    let queue = seeded(&dir, &[("a1", 60_000), ("a2", 60_000)]);
    queue.answer(&answer("a2", ApprovalAnswer::ApproveOnce), None).unwrap();
    assert_eq!(queue.deny_pending("s1", "new message").unwrap(), vec!["a1".to_string()]);
    assert_eq!(queue.store.approval("a1").unwrap().unwrap().status, ApprovalStatus::Interrupted);
    assert_eq!(queue.store.approval("a2").unwrap().unwrap().status, ApprovalStatus::Approved);
}
