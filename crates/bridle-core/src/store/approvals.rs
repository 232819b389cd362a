//! Approval requests and remembered approvals, in the conversation store.
//!
//! Rules: a request is stored with the whole call, so any process holding the session can run
//! it once it is answered; an answer is accepted once — the update only matches a row that is
//! still pending, so of two answers racing (in one process or two) exactly one wins.

use std::collections::HashMap;

use bridle_protocol::{ApprovalAnswer, ApprovalRequest, ApprovalSubject, DecisionSource, ToolCall};
use rusqlite::{params, OptionalExtension};
use serde::{Deserialize, Serialize};

use super::{Store, StoreError};

/// Where a request stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ApprovalStatus {
    /// Waiting for an answer.
    Pending,
    /// Approved (once, for the session or always); runs when its session is open.
    Approved,
    /// Denied by a human.
    Denied,
    /// Nobody answered in time.
    Expired,
    /// The turn was interrupted (or a new message arrived) while it waited.
    Interrupted,
    /// Approved, but the file changed before it ran; a fresh request replaced it.
    Stale,
    /// Approved and started; a crash now must not run it a second time.
    Started,
}

impl ApprovalStatus {
    /// The stored word.
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalStatus::Pending => "pending",
            ApprovalStatus::Approved => "approved",
            ApprovalStatus::Denied => "denied",
            ApprovalStatus::Expired => "expired",
            ApprovalStatus::Interrupted => "interrupted",
            ApprovalStatus::Stale => "stale",
            ApprovalStatus::Started => "started",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        [Self::Pending, Self::Approved, Self::Denied, Self::Expired, Self::Interrupted, Self::Stale, Self::Started]
            .into_iter()
            .find(|v| v.as_str() == s)
    }
}

/// A recorded answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RecordedAnswer {
    /// What was answered.
    pub decision: ApprovalAnswer,
    /// Who answered: `user`, or `timeout` for an expiry.
    pub source: DecisionSource,
    /// Words for the model.
    pub feedback: Option<String>,
    /// Replacement arguments, judged again before they run.
    pub edited_arguments: Option<String>,
    /// When (ms since the epoch).
    pub at: i64,
}

/// One stored request.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredApproval {
    /// The request as emitted.
    pub request: ApprovalRequest,
    /// The turn that waits for it.
    pub turn_id: String,
    /// The call, as the model made it.
    pub call: ToolCall,
    /// Where it stands.
    pub status: ApprovalStatus,
    /// The answer, once there is one.
    pub answer: Option<RecordedAnswer>,
}

const COLUMNS: &str = "request, turn_id, call, status, answer";

impl Store {
    /// Stores a new pending request.
    pub fn insert_approval(&self, request: &ApprovalRequest, turn_id: &str, call: &ToolCall) -> Result<(), StoreError> {
        self.conn()?.execute(
            "INSERT INTO approvals (id, session_id, turn_id, call, request, status, created_at, expires_at)
             VALUES (?1, ?2, ?3, ?4, ?5, 'pending', ?6, ?7)",
            params![
                request.id,
                request.session_id,
                turn_id,
                to_json(call)?,
                to_json(request)?,
                request.created_at,
                request.expires_at
            ],
        )?;
        Ok(())
    }

    /// Records `answer` if the request is still pending; `false` when another answer (or an
    /// expiry, or an interrupt) got there first.
    pub fn answer_approval(
        &self,
        id: &str,
        status: ApprovalStatus,
        answer: &RecordedAnswer,
    ) -> Result<bool, StoreError> {
        let n = self.conn()?.execute(
            "UPDATE approvals SET status = ?2, answer = ?3, resolved_at = ?4 WHERE id = ?1 AND status = 'pending'",
            params![id, status.as_str(), to_json(answer)?, answer.at],
        )?;
        Ok(n == 1)
    }

    /// Moves an approved request on: `Stale` (its file changed before it ran) or `Started`.
    pub fn mark_approved(&self, id: &str, status: ApprovalStatus) -> Result<(), StoreError> {
        self.conn()?.execute(
            "UPDATE approvals SET status = ?2 WHERE id = ?1 AND status = 'approved'",
            params![id, status.as_str()],
        )?;
        Ok(())
    }

    /// The requests that still decide what happens to their calls: the latest per call id, not
    /// yet started. A loaded history leaves those calls open for the engine to finish.
    pub fn held_approvals(&self, session_id: &str) -> Result<HashMap<String, StoredApproval>, StoreError> {
        let mut latest = HashMap::new();
        // A question a running call asked (a host, its held changes) never runs anything.
        let calls = self.session_approvals(session_id)?.into_iter();
        for stored in calls.filter(|s| matches!(s.request.subject, ApprovalSubject::Call { .. })) {
            latest.insert(stored.call.id.clone(), stored);
        }
        latest.retain(|_, s: &mut StoredApproval| s.status != ApprovalStatus::Started);
        Ok(latest)
    }

    /// One request.
    pub fn approval(&self, id: &str) -> Result<Option<StoredApproval>, StoreError> {
        let conn = self.conn()?;
        let row =
            conn.query_row(&format!("SELECT {COLUMNS} FROM approvals WHERE id = ?1"), [id], raw_row).optional()?;
        row.map(parse_row).transpose()
    }

    /// Pending requests, oldest first: of one session, or of every session.
    pub fn pending_approvals(&self, session_id: Option<&str>) -> Result<Vec<StoredApproval>, StoreError> {
        self.approvals_where("status = 'pending' AND (?1 IS NULL OR session_id = ?1)", session_id)
    }

    /// Every request of a session, oldest first.
    pub fn session_approvals(&self, session_id: &str) -> Result<Vec<StoredApproval>, StoreError> {
        self.approvals_where("session_id = ?1", Some(session_id))
    }

    fn approvals_where(&self, condition: &str, session_id: Option<&str>) -> Result<Vec<StoredApproval>, StoreError> {
        let conn = self.conn()?;
        let mut stmt =
            conn.prepare(&format!("SELECT {COLUMNS} FROM approvals WHERE {condition} ORDER BY created_at, rowid"))?;
        let rows = stmt.query_map([session_id], raw_row)?;
        let mut out = Vec::new();
        for row in rows {
            out.push(parse_row(row?)?);
        }
        Ok(out)
    }

    /// Remembers an approval for the rest of the session.
    pub fn add_grant(&self, session_id: &str, key: &str, now_ms: i64) -> Result<(), StoreError> {
        self.conn()?.execute(
            "INSERT OR IGNORE INTO grants (session_id, key, created_at) VALUES (?1, ?2, ?3)",
            params![session_id, key, now_ms],
        )?;
        Ok(())
    }

    /// Whether the session remembers `key`.
    pub fn has_grant(&self, session_id: &str, key: &str) -> Result<bool, StoreError> {
        let n: i64 = self.conn()?.query_row(
            "SELECT count(*) FROM grants WHERE session_id = ?1 AND key = ?2",
            params![session_id, key],
            |r| r.get(0),
        )?;
        Ok(n > 0)
    }

    /// The keys of `session_id`'s grants that start with `prefix`, oldest first.
    pub fn grants_with_prefix(&self, session_id: &str, prefix: &str) -> Result<Vec<String>, StoreError> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare(
            "SELECT key FROM grants WHERE session_id = ?1 AND substr(key, 1, length(?2)) = ?2 ORDER BY created_at, key",
        )?;
        let keys = stmt.query_map(params![session_id, prefix], |row| row.get::<_, String>(0))?;
        Ok(keys.collect::<Result<Vec<_>, _>>()?)
    }

    /// Forgets the session's remembered approvals whose key starts with `prefix`.
    pub fn forget_grants(&self, session_id: &str, prefix: &str) -> Result<usize, StoreError> {
        Ok(self.conn()?.execute(
            "DELETE FROM grants WHERE session_id = ?1 AND substr(key, 1, length(?2)) = ?2",
            params![session_id, prefix],
        )?)
    }
}

type RawRow = (String, String, String, String, Option<String>);

fn raw_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<RawRow> {
    Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?, row.get(4)?))
}

fn parse_row((request, turn_id, call, status, answer): RawRow) -> Result<StoredApproval, StoreError> {
    let corrupt = |message: String| StoreError::Corrupt { id: 0, message: format!("approval: {message}") };
    Ok(StoredApproval {
        request: request_of(&request).map_err(|e| corrupt(e.to_string()))?,
        turn_id,
        call: serde_json::from_str(&call).map_err(|e| corrupt(e.to_string()))?,
        status: ApprovalStatus::parse(&status).ok_or_else(|| corrupt(format!("unknown status `{status}`")))?,
        answer: answer.map(|a| serde_json::from_str(&a)).transpose().map_err(|e| corrupt(e.to_string()))?,
    })
}

/// A stored request; one written before requests had a subject (a `tool` and its `arguments`,
/// with `network` and `effects` naming a host's and a command's changes) is read as the subject
/// it meant.
fn request_of(text: &str) -> serde_json::Result<ApprovalRequest> {
    let mut value: serde_json::Value = serde_json::from_str(text)?;
    if let Some(object) = value.as_object_mut().filter(|o| !o.contains_key("subject")) {
        let tool = object.remove("tool").unwrap_or_default();
        let arguments = object.remove("arguments").unwrap_or_default();
        let args: serde_json::Value = arguments.as_str().and_then(|a| serde_json::from_str(a).ok()).unwrap_or_default();
        let subject = match tool.as_str() {
            Some("network") => {
                serde_json::json!({"type": "host", "host": args["host"], "port": args["port"], "command": args["command"]})
            }
            Some("effects") => {
                serde_json::json!({"type": "changes", "command": args["command"], "files": args["files"]})
            }
            _ => serde_json::json!({"type": "call", "tool": tool, "arguments": arguments}),
        };
        object.insert("subject".into(), subject);
    }
    serde_json::from_value(value)
}

fn to_json(value: &impl Serialize) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(|e| StoreError::Corrupt { id: 0, message: e.to_string() })
}
