//! What Bridle's engine says, as ACP v1 says it: events and stored history become
//! `session/update`s, a prompt's content blocks become the user's message, an approval request
//! becomes `session/request_permission`'s tool call and options.
//!
//! Rules: plain functions over values, no I/O; every message is built with the protocol crate's
//! own types, so a field the schema does not have fails to compile instead of being dropped at
//! run time; a call is described by its tool ([`CallDescription`]: kind, title, paths), never by
//! reading its arguments here; what the model wrote is carried as data, never interpreted.

use std::path::Path;

use agent_client_protocol::v1::schema::{
    AvailableCommand, AvailableCommandInput, AvailableCommandsUpdate, ContentBlock, ContentChunk, CurrentModeUpdate,
    Diff, EmbeddedResourceResource, PermissionOption, PermissionOptionKind, Plan, PlanEntry, PlanEntryPriority,
    PlanEntryStatus, RequestPermissionRequest, SessionModeId, SessionUpdate, StopReason, ToolCall as AcpToolCall,
    ToolCallContent, ToolCallId, ToolCallLocation, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields, ToolKind,
};
use bridle_core::tools::CallDescription;
use bridle_protocol::{
    AbortReason, ApprovalAnswer, ApprovalRequest, ApprovalSubject, ClientKind, Mode, PlanItem, PlanStatus, ToolCall,
    ToolResult, ToolStatus,
};
use serde_json::Value;

/// A piece of the assistant's answer.
pub fn agent_text(text: &str) -> SessionUpdate {
    SessionUpdate::AgentMessageChunk(ContentChunk::new(text.into()))
}

/// The slash commands a client may offer, as `available_commands_update`.
pub fn available_commands(commands: &[bridle_protocol::SlashCommandInfo]) -> SessionUpdate {
    let commands = commands
        .iter()
        .map(|c| {
            let command = AvailableCommand::new(c.name.clone(), c.description.clone());
            match &c.hint {
                Some(hint) => command.input(AvailableCommandInput::Unstructured(
                    agent_client_protocol::v1::schema::UnstructuredCommandInput::new(hint.clone()),
                )),
                None => command,
            }
        })
        .collect();
    SessionUpdate::AvailableCommandsUpdate(AvailableCommandsUpdate::new(commands))
}

/// A piece of the user's message (a replayed history).
pub fn user_text(text: &str) -> SessionUpdate {
    SessionUpdate::UserMessageChunk(ContentChunk::new(text.into()))
}

/// ACP's kind for what a tool says its calls are.
fn kind(kind: ClientKind) -> ToolKind {
    match kind {
        ClientKind::Read => ToolKind::Read,
        ClientKind::Edit => ToolKind::Edit,
        ClientKind::Delete => ToolKind::Delete,
        ClientKind::Move => ToolKind::Move,
        ClientKind::Search => ToolKind::Search,
        ClientKind::Execute => ToolKind::Execute,
        ClientKind::Think => ToolKind::Think,
        ClientKind::Fetch => ToolKind::Fetch,
        ClientKind::Other => ToolKind::Other,
    }
}

/// What ACP says of a pending call, in its announcement and in a permission request alike: its
/// id, title, kind, raw input and the workspace paths it touches.
fn pending(call_id: &str, arguments: &str, described: &CallDescription, root: &Path) -> AcpToolCall {
    let locations = described.paths.iter().map(|p| ToolCallLocation::new(root.join(p))).collect();
    AcpToolCall::new(ToolCallId::new(call_id), described.title.clone())
        .kind(kind(described.kind))
        .status(ToolCallStatus::Pending)
        .raw_input(serde_json::from_str::<Value>(arguments).ok())
        .locations(locations)
}

/// The `tool_call` announcing `call`, as `described`.
pub fn tool_call(call: &ToolCall, described: &CallDescription, root: &Path) -> SessionUpdate {
    SessionUpdate::ToolCall(pending(&call.id, &call.arguments, described, root))
}

/// A call that runs now (approved).
pub fn in_progress(call_id: &str) -> SessionUpdate {
    let fields = ToolCallUpdateFields::new().status(ToolCallStatus::InProgress);
    SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(ToolCallId::new(call_id), fields))
}

/// A child agent's progress as the content of the `spawn_agent` call that started it (a call of
/// kind `think`, DESIGN §16.1): where it stands and its last message.
pub fn agent_progress(agent: &bridle_protocol::AgentInfo) -> SessionUpdate {
    let mut text = format!("{}: {}", agent.label(), agent.state.as_str());
    if let Some(error) = &agent.error {
        text.push_str(&format!(" ({error})"));
    }
    if let Some(message) = &agent.last_message {
        text.push_str(&format!("\n\n{message}"));
    }
    let raw = serde_json::to_value(agent).ok();
    let fields = ToolCallUpdateFields::new().content(vec![ToolCallContent::from(text.as_str())]).raw_output(raw);
    SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(ToolCallId::new(agent.call_id.as_str()), fields))
}

/// One file a call changed: its path and its text before and after (`None`: absent).
pub struct Changed {
    pub path: String,
    pub before: Option<String>,
    pub after: Option<String>,
}

/// The `tool_call_update` ending a call: its status, its output as text, a diff for every file it
/// changed, and as raw output what it did (a built-in tool's typed details, an MCP server's own
/// structured output).
pub fn tool_end(result: &ToolResult, status: ToolStatus, changed: &[Changed], root: &Path) -> SessionUpdate {
    let status = match status {
        ToolStatus::Ok => ToolCallStatus::Completed,
        _ => ToolCallStatus::Failed,
    };
    let mut content = vec![ToolCallContent::from(result.output.as_str())];
    for c in changed {
        let diff = Diff::new(root.join(&c.path), c.after.clone().unwrap_or_default()).old_text(c.before.clone());
        content.push(diff.into());
    }
    let raw_output = match &result.details {
        Some(details) => serde_json::to_value(details).ok(),
        None => result.data.clone(),
    };
    let fields = ToolCallUpdateFields::new().status(status).content(content).raw_output(raw_output);
    SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(ToolCallId::new(result.tool_call_id.as_str()), fields))
}

/// The model's plan.
pub fn plan(items: &[PlanItem]) -> SessionUpdate {
    let entries = items
        .iter()
        .map(|i| {
            let status = match i.status {
                PlanStatus::Pending => PlanEntryStatus::Pending,
                PlanStatus::InProgress => PlanEntryStatus::InProgress,
                PlanStatus::Done => PlanEntryStatus::Completed,
            };
            PlanEntry::new(i.step.clone(), PlanEntryPriority::Medium, status)
        })
        .collect();
    SessionUpdate::Plan(Plan::new(entries))
}

/// The mode now in force.
pub fn current_mode(mode: Mode) -> SessionUpdate {
    SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(SessionModeId::new(mode.as_str())))
}

/// How a turn that ended is told to the client.
pub fn stop_reason(aborted: Option<AbortReason>) -> StopReason {
    match aborted {
        None => StopReason::EndTurn,
        Some(AbortReason::Interrupted) => StopReason::Cancelled,
        Some(AbortReason::MaxSteps) => StopReason::MaxTurnRequests,
        Some(_) => StopReason::EndTurn,
    }
}

/// The user's message of a prompt: text as it is, a resource link as its URI, an embedded text
/// resource with its URI and text; other blocks (an image, audio) are named, not dropped unseen.
pub fn prompt_text(blocks: &[ContentBlock]) -> String {
    let mut parts = Vec::new();
    for block in blocks {
        match block {
            ContentBlock::Text(text) => parts.push(text.text.clone()),
            ContentBlock::ResourceLink(link) => parts.push(format!("[file: {}]", link.uri)),
            ContentBlock::Resource(embedded) => match &embedded.resource {
                EmbeddedResourceResource::TextResourceContents(r) => {
                    parts.push(format!("[file: {}]\n```\n{}\n```", r.uri, r.text))
                }
                EmbeddedResourceResource::BlobResourceContents(r) => {
                    parts.push(format!("[file: {} (binary, not included)]", r.uri))
                }
                _ => parts.push("[resource content not supported by this model, left out]".to_string()),
            },
            ContentBlock::Image(_) => parts.push("[image content not supported by this model, left out]".to_string()),
            ContentBlock::Audio(_) => parts.push("[audio content not supported by this model, left out]".to_string()),
            _ => parts.push("[content of an unknown kind, left out]".to_string()),
        }
    }
    parts.join("\n")
}

/// What a permission request is about, as the editor is shown it, each subject its own way: a
/// call as its tool describes it (`describe`); a host a command would reach (DESIGN §5.2); what
/// a command changed, by its files (DESIGN §4.3).
pub fn subject(request: &ApprovalRequest, describe: impl FnOnce(&str, &str) -> CallDescription) -> CallDescription {
    match &request.subject {
        ApprovalSubject::Call { tool, arguments } => describe(tool, arguments),
        ApprovalSubject::Host { host, port, .. } => {
            CallDescription { kind: ClientKind::Fetch, title: format!("Connect to {host}:{port}"), paths: Vec::new() }
        }
        ApprovalSubject::Changes { command, files } => CallDescription {
            kind: ClientKind::Edit,
            title: format!("Keep what `{}` changed", bridle_core::tools::quoted(command)),
            paths: files.clone(),
        },
    }
}

/// `session/request_permission` for `request` of session `session_id`, about what `described`
/// says: its findings and preview as content, and the four options (keep or discard for a
/// command's held changes, which no rule covers).
pub fn permission(
    session_id: &str,
    request: &ApprovalRequest,
    described: &CallDescription,
    root: &Path,
) -> RequestPermissionRequest {
    let mut content: Vec<ToolCallContent> =
        request.findings.iter().map(|f| format!("{:?}: {}", f.severity, f.message).into()).collect();
    if let Some(preview) = &request.preview {
        content.push(preview.as_str().into());
    }
    // The raw input: a call's arguments as the model sent them; a host's or changes' subject.
    let raw = match &request.subject {
        ApprovalSubject::Call { arguments, .. } => arguments.clone(),
        other => serde_json::to_string(other).unwrap_or_default(),
    };
    let call = pending(&request.call_id, &raw, described, root).content(content);
    let option = |id: &str, name: &str, kind| PermissionOption::new(id.to_string(), name, kind);
    let options = if matches!(request.subject, ApprovalSubject::Changes { .. }) {
        vec![
            option("allow_once", "Keep the changes", PermissionOptionKind::AllowOnce),
            option("reject_once", "Discard them", PermissionOptionKind::RejectOnce),
        ]
    } else {
        vec![
            option("allow_once", "Allow once", PermissionOptionKind::AllowOnce),
            option("allow_always", "Always allow", PermissionOptionKind::AllowAlways),
            option("reject_once", "Reject", PermissionOptionKind::RejectOnce),
            option("reject_always", "Always reject", PermissionOptionKind::RejectAlways),
        ]
    };
    RequestPermissionRequest::new(session_id.to_string(), call.into(), options)
}

/// Bridle's answer for the option a client selected (`None`: cancelled, or an option not offered).
pub fn answer(option: Option<&str>) -> ApprovalAnswer {
    match option {
        Some("allow_once") => ApprovalAnswer::ApproveOnce,
        Some("allow_always") => ApprovalAnswer::ApproveAlways,
        _ => ApprovalAnswer::Deny,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn described(kind: ClientKind, title: &str, paths: &[&str]) -> CallDescription {
        CallDescription { kind, title: title.into(), paths: paths.iter().map(|p| p.to_string()).collect() }
    }

    #[test]
    fn a_call_is_announced_as_its_tool_describes_it() {
        let call = ToolCall {
            id: "c1".into(),
            provider_id: "p1".into(),
            name: "apply_patch".into(),
            arguments: r#"{"patch":"..."}"#.into(),
        };
        let update =
            tool_call(&call, &described(ClientKind::Edit, "Patch a.rs, b.rs", &["a.rs", "b.rs"]), Path::new("/w"));
        assert_eq!(
            serde_json::to_value(update).unwrap(),
            json!({
                "sessionUpdate": "tool_call",
                "toolCallId": "c1",
                "title": "Patch a.rs, b.rs",
                "kind": "edit",
                "rawInput": {"patch": "..."},
                "locations": [{"path": "/w/a.rs"}, {"path": "/w/b.rs"}],
            })
        );
    }

    #[test]
    fn an_end_carries_the_text_the_diffs_and_the_typed_details() {
        let mut result = ToolResult::ok("c1", "done");
        result.details = Some(bridle_protocol::ToolDetails::Plan { items: vec![] });
        let changed = [Changed { path: "a.txt".into(), before: None, after: Some("new\n".into()) }];
        let update = serde_json::to_value(tool_end(&result, ToolStatus::Ok, &changed, Path::new("/w"))).unwrap();
        assert_eq!(update["status"], "completed");
        assert_eq!(update["content"][0], json!({"type": "content", "content": {"type": "text", "text": "done"}}));
        assert_eq!(update["content"][1], json!({"type": "diff", "path": "/w/a.txt", "newText": "new\n"}));
        assert_eq!(update["rawOutput"], json!({"type": "plan", "items": []}));
    }

    #[test]
    fn a_plan_maps_each_status() {
        let items = [
            PlanItem { step: "a".into(), status: PlanStatus::Done },
            PlanItem { step: "b".into(), status: PlanStatus::InProgress },
            PlanItem { step: "c".into(), status: PlanStatus::Pending },
        ];
        let update = serde_json::to_value(plan(&items)).unwrap();
        let statuses: Vec<&str> =
            update["entries"].as_array().unwrap().iter().map(|e| e["status"].as_str().unwrap()).collect();
        assert_eq!(statuses, ["completed", "in_progress", "pending"]);
    }
}
