//! What Bridle's engine says, as ACP v1 says it: events and stored history become
//! `session/update`s, a prompt's content blocks become the user's message, an approval request
//! becomes `session/request_permission`'s tool call and options.
//!
//! Rule: plain functions over values, no I/O but the one read of a changed file's text; what the
//! model wrote is carried as data, never interpreted.

use std::path::Path;

use agent_client_protocol::v1::schema::{ContentBlock, SessionUpdate, StopReason};
use bridle_protocol::{
    AbortReason, ApprovalAnswer, ApprovalRequest, ApprovalSubject, ToolCall, ToolResult, ToolStatus,
};
use serde_json::{json, Value};

/// An update from its JSON form (the schema's own field names).
pub fn update(value: Value) -> Option<SessionUpdate> {
    serde_json::from_value(value).map_err(|e| tracing::warn!("an ACP update could not be built: {e}")).ok()
}

/// A piece of the assistant's answer.
pub fn agent_text(text: &str) -> Option<SessionUpdate> {
    update(json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}))
}

/// A piece of the user's message (a replayed history).
pub fn user_text(text: &str) -> Option<SessionUpdate> {
    update(json!({"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": text}}))
}

/// ACP's kind of a tool.
pub fn kind(tool: &str) -> &'static str {
    match tool {
        "read_file" | "list_files" | "process_output" | "process_list" | "get_token_usage" | "get_current_time" => {
            "read"
        }
        "write_file" | "edit_file" | "append_file" | "apply_patch" => "edit",
        "glob_search" | "grep_search" => "search",
        "bash" | "process_stop" => "execute",
        "update_plan" => "think",
        _ => "other",
    }
}

/// What a person reads for a call: the tool and its main argument.
fn title(tool: &str, args: &Value) -> String {
    let main = ["command", "path", "pattern", "process_id", "host"]
        .iter()
        .find_map(|k| args.get(*k).and_then(Value::as_str))
        .map(|s| s.chars().take(120).collect::<String>());
    match (tool, main) {
        ("bash", Some(command)) => format!("Run `{command}`"),
        (name, Some(main)) => format!("{name} {main}"),
        (name, None) => name.to_string(),
    }
}

/// The workspace files a call's arguments name: its `path`, or the files its patch names.
fn named_paths(args: &Value) -> Vec<String> {
    if let Some(path) = args.get("path").and_then(Value::as_str) {
        return vec![path.to_string()];
    }
    let patch = args.get("patch").and_then(Value::as_str).unwrap_or_default();
    let mut found: Vec<String> = Vec::new();
    for line in patch.lines() {
        let named = ["*** Update File: ", "*** Delete File: ", "*** Add File: ", "*** Move to: ", "--- a/", "+++ b/"]
            .iter()
            .find_map(|prefix| line.strip_prefix(prefix));
        if let Some(path) = named.map(str::trim).filter(|p| !p.is_empty()) {
            if !found.iter().any(|f| f == path) {
                found.push(path.to_string());
            }
        }
    }
    found
}

/// What ACP says of a pending call, in its announcement and in a permission request alike: its
/// id, title, kind, raw input and the files it names (the arguments read once).
fn pending(call_id: &str, tool: &str, arguments: &str, root: &Path) -> serde_json::Map<String, Value> {
    let args: Value = serde_json::from_str(arguments).unwrap_or(Value::Null);
    let locations: Vec<Value> = named_paths(&args).iter().map(|p| json!({"path": root.join(p)})).collect();
    described(json!({
        "toolCallId": call_id,
        "title": title(tool, &args),
        "kind": kind(tool),
        "status": "pending",
        "rawInput": args,
        "locations": locations,
    }))
}

/// A description built as an object, as a map.
fn described(value: Value) -> serde_json::Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => serde_json::Map::new(),
    }
}

/// The `tool_call` announcing `call`.
pub fn tool_call(call: &ToolCall, root: &Path) -> Option<SessionUpdate> {
    let mut announced = pending(&call.id, &call.name, &call.arguments, root);
    announced.insert("sessionUpdate".into(), json!("tool_call"));
    update(Value::Object(announced))
}

/// A call that runs now (approved).
pub fn in_progress(call_id: &str) -> Option<SessionUpdate> {
    update(json!({"sessionUpdate": "tool_call_update", "toolCallId": call_id, "status": "in_progress"}))
}

/// One file a call changed: its path and its text before and after (`None`: absent).
pub struct Changed {
    pub path: String,
    pub before: Option<String>,
    pub after: Option<String>,
}

/// The `tool_call_update` ending a call: its status, its output as text, and a diff for every
/// file it changed.
pub fn tool_end(result: &ToolResult, status: ToolStatus, changed: &[Changed], root: &Path) -> Option<SessionUpdate> {
    let status = match status {
        ToolStatus::Ok => "completed",
        _ => "failed",
    };
    let mut content = vec![json!({"type": "content", "content": {"type": "text", "text": result.output}})];
    for c in changed {
        content.push(json!({
            "type": "diff",
            "path": root.join(&c.path),
            "oldText": c.before,
            "newText": c.after.clone().unwrap_or_default(),
        }));
    }
    update(json!({
        "sessionUpdate": "tool_call_update",
        "toolCallId": result.tool_call_id,
        "status": status,
        "content": content,
        "rawOutput": result.data,
    }))
}

/// The model's plan.
pub fn plan(items: &[bridle_protocol::PlanItem]) -> Option<SessionUpdate> {
    let entries: Vec<Value> = items
        .iter()
        .map(|i| {
            let status = serde_json::to_value(i.status).unwrap_or(Value::Null);
            let status = match status.as_str() {
                Some("inProgress" | "in_progress") => "in_progress",
                Some("completed" | "done") => "completed",
                _ => "pending",
            };
            json!({"content": i.step, "priority": "medium", "status": status})
        })
        .collect();
    update(json!({"sessionUpdate": "plan", "entries": entries}))
}

/// The mode now in force.
pub fn current_mode(mode: bridle_protocol::Mode) -> Option<SessionUpdate> {
    update(json!({"sessionUpdate": "current_mode_update", "currentModeId": mode.as_str()}))
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
        let value = serde_json::to_value(block).unwrap_or(Value::Null);
        let kind = value.get("type").and_then(Value::as_str).unwrap_or_default();
        match kind {
            "text" => parts.push(value["text"].as_str().unwrap_or_default().to_string()),
            "resource_link" => {
                parts.push(format!("[file: {}]", value["uri"].as_str().unwrap_or_default()));
            }
            "resource" => {
                let resource = &value["resource"];
                let uri = resource["uri"].as_str().unwrap_or_default();
                match resource["text"].as_str() {
                    Some(text) => parts.push(format!("[file: {uri}]\n```\n{text}\n```")),
                    None => parts.push(format!("[file: {uri} (binary, not included)]")),
                }
            }
            other => parts.push(format!("[{other} content not supported by this model, left out]")),
        }
    }
    parts.join("\n")
}

/// `session/request_permission`'s tool call and its four options, for `request`.
pub fn permission(request: &ApprovalRequest, root: &Path) -> Value {
    let mut content: Vec<Value> = request
        .findings
        .iter()
        .map(|f| json!({"type": "content", "content": {"type": "text", "text": format!("{:?}: {}", f.severity, f.message)}}))
        .collect();
    if let Some(preview) = &request.preview {
        content.push(json!({"type": "content", "content": {"type": "text", "text": preview}}));
    }
    // What is asked, each subject its own way: a call as its announcement says it; a host as
    // the place the command wants to reach; held changes (DESIGN §4.3) as the files they touch.
    let mut call = match &request.subject {
        ApprovalSubject::Call { tool, arguments } => pending(&request.call_id, tool, arguments, root),
        ApprovalSubject::Host { host, port, command } => described(json!({
            "toolCallId": request.call_id,
            "title": format!("Let `{command}` reach {host}:{port}"),
            "kind": "fetch",
            "status": "pending",
            "rawInput": {"host": host, "port": port, "command": command},
            "locations": [],
        })),
        ApprovalSubject::Changes { command, files } => described(json!({
            "toolCallId": request.call_id,
            "title": format!("Keep what `{command}` changed"),
            "kind": "edit",
            "status": "pending",
            "rawInput": {"command": command, "files": files},
            "locations": files.iter().map(|f| json!({"path": root.join(f)})).collect::<Vec<_>>(),
        })),
    };
    call.insert("content".into(), Value::Array(content));
    // A command's held changes are kept or discarded once: no rule covers them.
    let options = if matches!(request.subject, ApprovalSubject::Changes { .. }) {
        json!([
            {"optionId": "allow_once", "name": "Keep the changes", "kind": "allow_once"},
            {"optionId": "reject_once", "name": "Discard them", "kind": "reject_once"},
        ])
    } else {
        json!([
            {"optionId": "allow_once", "name": "Allow once", "kind": "allow_once"},
            {"optionId": "allow_always", "name": "Always allow", "kind": "allow_always"},
            {"optionId": "reject_once", "name": "Reject", "kind": "reject_once"},
            {"optionId": "reject_always", "name": "Always reject", "kind": "reject_always"},
        ])
    };
    json!({"toolCall": call, "options": options})
}

/// Bridle's answer for the option a client selected (`None`: cancelled, or an option not offered).
pub fn answer(option: Option<&str>) -> ApprovalAnswer {
    match option {
        Some("allow_once") => ApprovalAnswer::ApproveOnce,
        Some("allow_always") => ApprovalAnswer::ApproveAlways,
        _ => ApprovalAnswer::Deny,
    }
}
