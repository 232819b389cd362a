//! `bridle approvals`: pending requests, answered from any process.
//!
//! Rule: the answer is recorded first (of two answers the first wins, in any process); then, if
//! another process has the session open, that process runs the call; if none has, this one
//! takes the session and resumes the turn, as `bridle run` would. Without a provider (no
//! flags, nothing in the config) the answer is recorded and the turn resumes whenever the
//! session is next opened.

use std::sync::Arc;

use bridle_core::calls::{Answer, ApprovalQueue};
use bridle_core::clock::SystemClock;
use bridle_core::engine::SessionSpec;
use bridle_core::store::SessionLease;
use bridle_protocol::ApprovalAnswer;

use crate::cli::{ApprovalsAction, ApprovalsArgs, DriveArgs, Global, OnAsk, Scope, EXIT_ERROR};
use crate::drive;
use crate::setup;
use crate::terminal::safe;

pub async fn approvals(global: &Global, args: &ApprovalsArgs) -> anyhow::Result<u8> {
    let mut setup = setup::load(global)?;
    let store = setup.store()?;
    let (id, decision, feedback, edited_arguments, call_hash, provider, drive_args) = match &args.action {
        ApprovalsAction::List { session, json } => {
            for stored in store.inbox(session.as_deref())? {
                let request = &stored.request;
                // A child's question says which agent asks, and for which session (DESIGN §16.1).
                let agent = store.session(&request.session_id).ok().and_then(|s| s.agent);
                if *json {
                    let mut row = serde_json::to_value(request)?;
                    if let (Some(agent), Some(row)) = (&agent, row.as_object_mut()) {
                        row.insert(
                            "agent".into(),
                            serde_json::json!({"label": agent.label(), "parentId": agent.parent_id, "task": agent.task}),
                        );
                    }
                    println!("{row}");
                } else {
                    let from = match &agent {
                        Some(a) => format!("{} of session {}", safe(&a.label()), a.parent_id),
                        None => format!("session {}", request.session_id),
                    };
                    println!(
                        "{}  {from}  {}  ({} findings, expires {})",
                        request.id,
                        safe(&request.subject.sentence()),
                        request.findings.len(),
                        request.expires_at
                    );
                }
            }
            return Ok(0);
        }
        ApprovalsAction::Approve { id, scope, edited_arguments, call_hash, provider, drive } => {
            let decision = match scope {
                Scope::Once => ApprovalAnswer::ApproveOnce,
                Scope::Session => ApprovalAnswer::ApproveSession,
                Scope::Always => ApprovalAnswer::ApproveAlways,
            };
            (id, decision, None, edited_arguments.clone(), call_hash, provider, drive)
        }
        ApprovalsAction::Deny { id, feedback, call_hash, provider, drive } => {
            (id, ApprovalAnswer::Deny, feedback.clone(), None, call_hash, provider, drive)
        }
    };
    let Some(stored) = store.approval(id)? else {
        eprintln!("bridle approvals: no approval request `{id}`");
        return Ok(EXIT_ERROR);
    };
    let session_id = stored.request.session_id.clone();
    // The call runs in the session's own workspace, wherever this command is run from.
    setup.workspace = store.session(&session_id)?.workspace.into();
    // Resuming here needs a provider; know that before the answer is spent.
    let has_provider = drive::provider_config(&setup, provider).is_ok();
    let queue = ApprovalQueue::new(store.clone(), Arc::new(SystemClock));
    let answer = Answer { approval_id: id.clone(), decision, feedback, edited_arguments, call_hash: call_hash.clone() };
    let settled = match queue.answer(&answer, None) {
        Ok(settled) => settled,
        Err(e) => {
            eprintln!("bridle approvals: {e}");
            return Ok(EXIT_ERROR);
        }
    };
    let status = settled.status.as_str();
    // The lease is taken after the answer: of two racing answerers only the winner gets here.
    let lease = SessionLease::try_acquire(&setup.data_dir, &session_id)?;
    if lease.is_none() {
        println!(
            "{}",
            serde_json::json!({"approvalId": id, "status": status, "runsIn": "the process that has the session open"})
        );
        return Ok(0);
    }
    // A child runs only under its parent, which opens it again with itself.
    if let Some(agent) = store.session(&session_id)?.agent {
        let runs_in = format!("agent {}, when its parent session {} is next opened", agent.id, agent.parent_id);
        println!("{}", serde_json::json!({"approvalId": id, "status": status, "runsIn": runs_in}));
        return Ok(0);
    }
    if !has_provider {
        println!(
            "{}",
            serde_json::json!({"approvalId": id, "status": status, "runsIn": "the next process to open the session"})
        );
        eprintln!("bridle approvals: no provider configured; the turn resumes when the session is next opened");
        return Ok(0);
    }
    drop(lease);
    // Other requests of the turn stay pending unless --on-ask says otherwise.
    let drive_args = &DriveArgs { on_ask: drive_args.on_ask.or(Some(OnAsk::Defer)), ..drive_args.clone() };
    let (engine, mut events, audit, hub) =
        drive::start(&mut setup, provider, drive_args, SessionSpec::Resume(session_id)).await?;
    if engine.resumed_turn().is_none() {
        eprintln!("bridle approvals: the session has no turn waiting on this request");
        drive::finish(&engine, &audit).await;
        return Ok(0);
    }
    let code = drive::follow(&engine, &mut events, drive_args, false).await;
    drive::finish(&engine, &audit).await;
    hub.shutdown().await;
    code
}
