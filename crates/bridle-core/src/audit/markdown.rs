//! The Markdown form of a session export: a readable transcript whose sections are the
//! session's audit rows, each with its hash; and the parser `bridle audit verify --export` uses
//! to take one apart again.
//!
//! Rule: a section is a pure function of its row ([`section`]), so checking a Markdown export
//! is rendering the log's row again and comparing text; headings inside fenced blocks (a tool's
//! output that holds Markdown) are never taken for sections.

use bridle_protocol::AuditEvent;
use serde_json::Value;

use super::export::SessionExport;
use super::Head;

/// Payload fields shown as blocks of their own, in this order.
const BLOCKS: &[(&str, &str)] = &[("text", "text"), ("arguments", "json"), ("output", "text"), ("diff", "diff")];

/// What [`parse`] finds: the header's session and head, and each section with its row id.
pub(super) struct Parsed {
    pub session_id: String,
    pub head: Head,
    pub sections: Vec<(i64, String)>,
}

pub(super) fn render(export: &SessionExport) -> String {
    let mut out = format!(
        "# Session {}\n\nExported {} from the Bridle audit log: {} item(s), redacted as the log is.\n\n\
         Chain head at export: row {}, hash `{}`.\n\nCheck it against the log: `bridle audit verify --export FILE`.\n\n",
        export.session_id,
        when(export.exported_at),
        export.items.len(),
        export.chain_head.id,
        export.chain_head.hash,
    );
    for (n, item) in export.items.iter().enumerate() {
        out.push_str(&section(n as u64 + 1, item));
    }
    out
}

/// Item `place`'s section: a heading naming the row, its fields, its hash, its content.
pub(super) fn section(place: u64, row: &AuditEvent) -> String {
    let mut s = format!("## {place}. {} · row {}\n\n- at: {}\n", row.kind, row.id, when(row.at));
    if let Some(turn) = &row.turn_id {
        s.push_str(&format!("- turn: `{turn}`\n"));
    }
    if let Some(tool) = &row.tool {
        s.push_str(&format!("- tool: `{tool}`"));
        if let Some(call) = &row.call_id {
            s.push_str(&format!(" · call `{call}`"));
        }
        s.push('\n');
    }
    if let Some(decision) = row.decision.and_then(wire) {
        let source = row.source.and_then(wire).unwrap_or_default();
        s.push_str(&format!("- decision: {decision} ({source})\n"));
    }
    if let Some(status) = &row.status {
        s.push_str(&format!("- status: {status}\n"));
    }
    if let Some(ms) = row.latency_ms {
        s.push_str(&format!("- took: {ms} ms\n"));
    }
    s.push_str(&format!("- hash: `{}` (previous `{}`)\n\n", row.hash, row.prev_hash));
    let mut rest = row.payload.clone();
    for (key, lang) in BLOCKS {
        let Some(value) = rest.as_object_mut().and_then(|m| m.remove(*key)) else { continue };
        let body = match value {
            Value::String(text) => text,
            Value::Null => continue,
            other => serde_json::to_string_pretty(&other).unwrap_or_default(),
        };
        s.push_str(&format!("**{key}**\n\n{}\n\n", fenced(&body, lang)));
    }
    let empty = rest.as_object().is_some_and(|m| m.is_empty()) || rest.is_null();
    if !empty {
        s.push_str(&format!("{}\n\n", fenced(&serde_json::to_string_pretty(&rest).unwrap_or_default(), "json")));
    }
    s
}

pub(super) fn parse(text: &str) -> Option<Parsed> {
    let lines: Vec<&str> = text.lines().collect();
    let session_id = lines.first()?.strip_prefix("# Session ")?.to_string();
    let head_line = lines.iter().find_map(|l| l.strip_prefix("Chain head at export: row "))?;
    let (id, hash) = head_line.split_once(", hash `")?;
    let head = Head { id: id.parse().ok()?, hash: hash.strip_suffix("`.")?.to_string() };
    // Headings outside fenced blocks.
    let mut starts = Vec::new();
    let mut fence: Option<String> = None;
    for (i, line) in lines.iter().enumerate() {
        match &fence {
            Some(open) if line.trim_end() == open => fence = None,
            Some(_) => {}
            None if line.starts_with("```") => {
                fence = Some(line.chars().take_while(|c| *c == '`').collect());
            }
            None if line.starts_with("## ") => starts.push(i),
            None => {}
        }
    }
    let mut sections = Vec::new();
    for (n, start) in starts.iter().enumerate() {
        let end = starts.get(n + 1).copied().unwrap_or(lines.len());
        let id = lines[*start].rsplit_once(" · row ").and_then(|(_, id)| id.trim().parse().ok()).unwrap_or(0);
        let mut body = lines[*start..end].join("\n");
        body.push('\n');
        sections.push((id, body));
    }
    Some(Parsed { session_id, head, sections })
}

/// `body` in a fence longer than any run of backticks inside it.
fn fenced(body: &str, lang: &str) -> String {
    let longest = body.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    format!("{fence}{lang}\n{body}\n{fence}")
}

fn when(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
        .unwrap_or_else(|| ms.to_string())
}

fn wire<T: serde::Serialize>(value: T) -> Option<String> {
    serde_json::to_value(value).ok()?.as_str().map(String::from)
}
