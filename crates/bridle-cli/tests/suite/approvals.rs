//! Approvals across processes: `bridle run --on-ask defer` leaves a request pending and exits 3;
//! `bridle approvals` lists it and answers it from a new process, which resumes the turn.

use pretty_assertions::assert_eq;
use serde_json::Value;

use super::aimock::Aimock;
use super::bridle::*;

fn provider(url: &str) -> Vec<String> {
    ["--provider", "openai", "--base-url", &format!("{url}/v1"), "--model", "mock-model"]
        .iter()
        .map(|s| s.to_string())
        .collect()
}

fn with<'a>(args: &[&'a str], extra: &'a [String]) -> Vec<&'a str> {
    args.iter().copied().chain(extra.iter().map(String::as_str)).collect()
}

fn of_type<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == kind).collect()
}

#[tokio::test]
async fn a_deferred_request_is_approved_from_a_new_process_and_the_turn_completes() {
    let mock = Aimock::start().await;
    let dirs = Dirs::new();
    let p = provider(&mock.url);
    let note = dirs.workspace.join("notes/welcome.txt");

    let out =
        bridle(&dirs, &with(&["run", "write the welcome note", "--mode", "ask", "--on-ask", "defer", "--json"], &p))
            .await;
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let events = json_lines(&out);
    let requested = of_type(&events, "approvalRequested");
    assert_eq!(requested.len(), 1);
    let request = &requested[0]["request"];
    assert_eq!(request["subject"]["tool"], "write_file");
    assert!(request["preview"].as_str().unwrap().contains("+Welcome to Bridle"));
    assert_eq!(events.last().unwrap()["type"], "turnSuspended");
    // The read beside it ran; the write did not.
    assert_eq!(of_type(&events, "toolCallEnd").len(), 1);
    assert!(!note.exists());

    let out = bridle(&dirs, &["approvals", "list", "--json"]).await;
    assert_eq!(out.status.code(), Some(0));
    let listed = json_lines(&out);
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["id"], request["id"]);
    let id = request["id"].as_str().unwrap();

    // The suspended session, as a restarted window reads it back: history, the pending
    // request, the token totals.
    let session = events[0]["sessionId"].as_str().unwrap();
    let snapshot = |out: std::process::Output| -> Value { serde_json::from_str(stdout(&out).trim()).unwrap() };
    let before = snapshot(bridle(&dirs, &["sessions", "show", session, "--json"]).await);
    assert_eq!(before["pendingApprovals"][0]["id"], request["id"]);
    assert_eq!(before["items"][0]["item"], serde_json::json!({"type": "user", "text": "write the welcome note"}));
    let tokens_before = before["usage"]["inputTokens"].as_u64().unwrap();
    assert!(tokens_before > 0, "{}", before["usage"]);

    // A wrong call hash is refused and spends nothing.
    let out = bridle(&dirs, &with(&["approvals", "approve", id, "--call-hash", "abc", "--json"], &p)).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("another call"), "{}", stderr(&out));

    let hash = request["callHash"].as_str().unwrap();
    let out = bridle(&dirs, &with(&["approvals", "approve", id, "--call-hash", hash, "--json"], &p)).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let events = json_lines(&out);
    assert_eq!(events.last().unwrap()["type"], "turnCompleted", "{events:?}");
    let ended = of_type(&events, "toolCallEnd");
    assert_eq!(ended.len(), 1);
    assert_eq!(ended[0]["status"], "ok");
    assert!(events.iter().any(|e| e["type"] == "assistantMessage" && e["text"] == "The welcome note is written."));
    assert_eq!(std::fs::read_to_string(&note).unwrap(), "Welcome to Bridle\n");
    let after = snapshot(bridle(&dirs, &["sessions", "show", session, "--json"]).await);
    assert_eq!(after["pendingApprovals"], serde_json::json!([]));
    assert!(after["usage"]["inputTokens"].as_u64().unwrap() > tokens_before, "the totals count on across processes");
    assert_eq!(after["changes"][0]["path"], "notes/welcome.txt");
    assert_eq!(after["changes"][0]["kind"], "created");

    // Nothing is pending any more, and a second answer is refused.
    let out = bridle(&dirs, &["approvals", "list", "--json"]).await;
    assert_eq!(stdout(&out), "");
    let out = bridle(&dirs, &with(&["approvals", "deny", id], &p)).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("already"), "{}", stderr(&out));

    // The model received both results on its second request.
    let journal = mock.journal().await;
    let last = journal.last().unwrap().to_string();
    assert!(last.contains("call_write_1") && last.contains("call_time_1"), "{last}");

    // The answer and its source are on the record.
    let out = bridle(&dirs, &["audit", "--kind", "approval_resolved", "--json"]).await;
    let rows = json_lines(&out);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["decision"], "allow");
    assert_eq!(rows[0]["source"], "user");
    let out = bridle(&dirs, &["audit", "verify"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
}

#[tokio::test]
async fn two_processes_answering_at_once_one_wins() {
    let mock = Aimock::start().await;
    let dirs = Dirs::new();
    let p = provider(&mock.url);
    let out =
        bridle(&dirs, &with(&["run", "write the welcome note", "--mode", "ask", "--on-ask", "defer", "--json"], &p))
            .await;
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let id = of_type(&json_lines(&out), "approvalRequested")[0]["request"]["id"].as_str().unwrap().to_string();

    let approve = with(&["approvals", "approve", &id, "--json"], &p);
    let deny = with(&["approvals", "deny", &id, "--feedback", "not now", "--json"], &p);
    let (a, d) = tokio::join!(bridle(&dirs, &approve), bridle(&dirs, &deny));
    let codes = [a.status.code(), d.status.code()];
    assert!(codes.contains(&Some(0)) && codes.contains(&Some(1)), "{codes:?}: {} / {}", stderr(&a), stderr(&d));
    let approved = a.status.code() == Some(0);
    let note = dirs.workspace.join("notes/welcome.txt");
    assert_eq!(note.exists(), approved, "the file exists exactly when the approval won");
    let winner = if approved { &a } else { &d };
    assert_eq!(json_lines(winner).last().unwrap()["type"], "turnCompleted");
}

#[tokio::test]
async fn without_a_terminal_ask_defaults_to_deny_and_the_model_hears_it() {
    let mock = Aimock::start().await;
    let dirs = Dirs::new();
    let p = provider(&mock.url);
    let out = bridle(&dirs, &with(&["run", "write the welcome note", "--mode", "ask", "--json"], &p)).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let events = json_lines(&out);
    let denied: Vec<_> = of_type(&events, "toolCallEnd").into_iter().filter(|e| e["status"] == "denied").collect();
    assert_eq!(denied.len(), 1, "{events:?}");
    assert!(denied[0]["result"]["output"].as_str().unwrap().contains("--on-ask deny"));
    assert!(!dirs.workspace.join("notes/welcome.txt").exists());
}
