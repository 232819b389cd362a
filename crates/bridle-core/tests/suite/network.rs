//! The engine's side of the network proxy: a question about a host in a session is an approval
//! request like any other, and it goes with its command when that ends first.

use bridle_core::config::{NetworkConfig, NetworkMode};
use bridle_core::shell_sandbox::HostEnvironment;
use bridle_protocol::{ApprovalAnswer, ApprovalSubject, Event, Mode, ToolStatus};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::harness::*;

#[tokio::test]
async fn a_question_about_a_host_goes_when_its_command_ends_unanswered() {
    // Nobody listens on the port: nothing is reached whatever happens, and nobody answers; curl
    // gives up after 5 s of its own (however long the sandbox took to start it).
    let command = json!({"command": "curl -sS --max-time 5 http://new.test:9/", "timeout_secs": 60}).to_string();
    let wire = Wire::OpenAi;
    let script = Script::new([sse(wire.tool_calls(&[("c1", "bash", &command)])), sse(wire.text("gave up"))]);
    let server = mock_server(wire, script).await;
    let mut t = engine(wire.provider(&server.uri()), |c| {
        c.mode = Mode::Auto;
        c.rules.allow = vec!["bash(curl *)".into()];
        c.sandbox.network = NetworkConfig {
            mode: NetworkMode::Ask,
            allow: vec!["127.0.0.1".into()],
            deny: Vec::new(),
            host_ports: Vec::new(),
        };
        c.host_environment = HostEnvironment::new([("BRIDLE_NET_RESOLVE".into(), "new.test=127.0.0.1".into())]);
    });
    t.say("fetch it").await;
    let events = t.turn().await;
    let request = events
        .iter()
        .find_map(|e| match e {
            Event::ApprovalRequested { request, .. } if matches!(request.subject, ApprovalSubject::Host { .. }) => {
                Some(request.clone())
            }
            _ => None,
        })
        .expect("the host was asked about");
    let ApprovalSubject::Host { host, port, .. } = &request.subject else { unreachable!() };
    assert_eq!((host.as_str(), *port), ("new.test", 9));
    assert!(events.iter().any(|e| matches!(
        e,
        Event::ApprovalResolved { approval_id, decision: ApprovalAnswer::Deny, .. } if *approval_id == request.id
    )));
    let ends = tool_ends(&events);
    assert_eq!(ends[0].0, ToolStatus::Ok, "{ends:?}");
    assert!(ends[0].1.starts_with("exit code 28"), "curl gave up waiting: {ends:?}");
    assert!(t.store.pending_approvals(None).unwrap().is_empty(), "the question was left pending");
    let rows = t.audit_rows();
    assert!(rows.iter().any(|(kind, _, p)| kind == "approval_requested" && p["approvalId"] == request.id.as_str()));
}
