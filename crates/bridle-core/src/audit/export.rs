//! A session exported with proof (DESIGN §17): its audit rows — messages, model answers, tool
//! calls and results, decisions, diffs, all sanitised as the log keeps them — with their hashes
//! and the chain head at export time, as JSON or Markdown; and the check of such an export
//! against the log.
//!
//! Rule: an export holds nothing but rows of the log, so it is redacted exactly as the audit is
//! and every item can be checked: a JSON item must hash to its own `hash` and match the log's
//! row of that id; a Markdown section must be what the log's row renders to. The first item
//! that differs is named.

use bridle_protocol::AuditEvent;
use rusqlite::params;
use serde::{Deserialize, Serialize};

use super::chain::{StoredRow, COLUMNS};
use super::log::last_row;
use super::record::{decision_str, source_str};
use super::{markdown, AuditError, AuditLog, Head};

/// The `format` of a JSON export.
pub const EXPORT_FORMAT: &str = "bridle-session-export/1";

/// One session's rows and the chain head when they were exported.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionExport {
    /// [`EXPORT_FORMAT`].
    pub format: String,
    /// The session.
    pub session_id: String,
    /// When (ms since the epoch).
    pub exported_at: i64,
    /// The log's last row at export time.
    pub chain_head: Head,
    /// The session's rows, oldest first.
    pub items: Vec<AuditEvent>,
}

/// What checking an export found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExportCheck {
    /// Every item matches the log.
    pub intact: bool,
    /// Items checked.
    pub items: u64,
    /// The first item that differs.
    pub first_bad: Option<BadItem>,
}

/// The first item of an export that differs from the log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BadItem {
    /// Its place in the export (1-based; 0: the export's header).
    pub item: u64,
    /// The log row it claims to be.
    pub id: i64,
    /// A sentence for humans.
    pub reason: String,
}

/// The text form of an export.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFormat {
    /// One JSON document ([`SessionExport`]).
    Json,
    /// A readable transcript whose sections are the rows.
    Markdown,
}

impl AuditLog {
    /// The export of `session_id`: its rows and the head now; an error when it has no rows.
    pub fn export_session(&self, session_id: &str, now_ms: i64) -> Result<SessionExport, AuditError> {
        let conn = self.conn()?;
        // One read transaction: the head and the rows are of the same moment.
        let tx = conn.unchecked_transaction()?;
        let (id, hash) = last_row(&tx)?.unwrap_or((0, super::GENESIS.to_string()));
        let mut stmt =
            tx.prepare(&format!("SELECT {COLUMNS} FROM audit WHERE session_id = ?1 AND id <= ?2 ORDER BY id"))?;
        let rows = stmt.query_map(params![session_id, id], StoredRow::from_row)?;
        let mut items = Vec::new();
        for row in rows {
            items.push(row?.into_event()?);
        }
        drop(stmt);
        tx.commit()?;
        if items.is_empty() {
            return Err(AuditError::NoSession(session_id.into()));
        }
        Ok(SessionExport {
            format: EXPORT_FORMAT.into(),
            session_id: session_id.into(),
            exported_at: now_ms,
            chain_head: Head { id, hash },
            items,
        })
    }

    /// Checks an export's text (JSON or Markdown, told apart by its first character) against
    /// this log.
    pub fn check_export(&self, text: &str) -> Result<ExportCheck, AuditError> {
        if text.trim_start().starts_with('{') {
            let export: SessionExport = match serde_json::from_str(text) {
                Ok(export) => export,
                Err(e) => return Ok(bad(0, 0, 0, format!("not a session export: {e}"))),
            };
            self.check_json(&export)
        } else {
            self.check_markdown(text)
        }
    }

    fn row(&self, id: i64) -> Result<Option<AuditEvent>, AuditError> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare_cached(&format!("SELECT {COLUMNS} FROM audit WHERE id = ?1"))?;
        let mut rows = stmt.query(params![id])?;
        match rows.next()? {
            Some(row) => Ok(Some(StoredRow::from_row(row)?.into_event()?)),
            None => Ok(None),
        }
    }

    fn session_ids(&self, session_id: &str, up_to: i64) -> Result<Vec<i64>, AuditError> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare("SELECT id FROM audit WHERE session_id = ?1 AND id <= ?2 ORDER BY id")?;
        let ids = stmt.query_map(params![session_id, up_to], |r| r.get(0))?.collect::<Result<Vec<i64>, _>>()?;
        Ok(ids)
    }

    /// The head must be a row of the log with that hash, and the items every row of the
    /// session up to it.
    fn check_frame(&self, session_id: &str, head: &Head, ids: &[i64]) -> Result<Option<ExportCheck>, AuditError> {
        match self.row(head.id)? {
            Some(row) if row.hash == head.hash => {}
            _ => {
                return Ok(Some(bad(
                    0,
                    head.id,
                    0,
                    format!("the chain head (row {}) is not in the audit log", head.id),
                )));
            }
        }
        let logged = self.session_ids(session_id, head.id)?;
        if let Some((n, id)) = logged.iter().enumerate().find(|(n, id)| ids.get(*n) != Some(id)) {
            let reason = format!("row {id} of the session is missing from the export (or out of order)");
            return Ok(Some(bad(n as u64 + 1, *id, n as u64, reason)));
        }
        if ids.len() > logged.len() {
            let n = logged.len();
            return Ok(Some(bad(n as u64 + 1, ids[n], n as u64, "not a row of this session in the log".into())));
        }
        Ok(None)
    }

    fn check_json(&self, export: &SessionExport) -> Result<ExportCheck, AuditError> {
        let ids: Vec<i64> = export.items.iter().map(|i| i.id).collect();
        for (n, item) in export.items.iter().enumerate() {
            let place = n as u64 + 1;
            let what = format!("row {}, {}", item.id, item.kind);
            if stored(item).compute_hash() != item.hash {
                return Ok(bad(
                    place,
                    item.id,
                    n as u64,
                    format!("item {place} ({what}) does not match its hash: edited"),
                ));
            }
            match self.row(item.id)? {
                None => {
                    return Ok(bad(place, item.id, n as u64, format!("item {place} ({what}) is not in the audit log")))
                }
                Some(row) if row.hash != item.hash => {
                    return Ok(bad(
                        place,
                        item.id,
                        n as u64,
                        format!("item {place} ({what}) differs from the audit log"),
                    ));
                }
                Some(_) => {}
            }
        }
        if let Some(check) = self.check_frame(&export.session_id, &export.chain_head, &ids)? {
            return Ok(check);
        }
        Ok(ExportCheck { intact: true, items: export.items.len() as u64, first_bad: None })
    }

    fn check_markdown(&self, text: &str) -> Result<ExportCheck, AuditError> {
        let Some(parsed) = markdown::parse(text) else {
            return Ok(bad(0, 0, 0, "not a Bridle session export (no header)".into()));
        };
        let ids: Vec<i64> = parsed.sections.iter().map(|(id, _)| *id).collect();
        for (n, (id, section)) in parsed.sections.iter().enumerate() {
            let place = n as u64 + 1;
            let Some(row) = self.row(*id)? else {
                return Ok(bad(place, *id, n as u64, format!("item {place} (row {id}) is not in the audit log")));
            };
            if markdown::section(place, &row) != *section {
                let reason = format!("item {place} (row {id}, {}) differs from the audit log", row.kind);
                return Ok(bad(place, *id, n as u64, reason));
            }
        }
        if let Some(check) = self.check_frame(&parsed.session_id, &parsed.head, &ids)? {
            return Ok(check);
        }
        Ok(ExportCheck { intact: true, items: ids.len() as u64, first_bad: None })
    }
}

impl SessionExport {
    /// The export as text in `format`.
    pub fn render(&self, format: ExportFormat) -> String {
        match format {
            // Serialising plain data (string keys) cannot fail.
            ExportFormat::Json => serde_json::to_string_pretty(self).unwrap_or_default(),
            ExportFormat::Markdown => markdown::render(self),
        }
    }
}

fn bad(item: u64, id: i64, checked: u64, reason: String) -> ExportCheck {
    ExportCheck { intact: false, items: checked, first_bad: Some(BadItem { item, id, reason }) }
}

/// An exported row back in stored form, to hash it.
fn stored(e: &AuditEvent) -> StoredRow {
    StoredRow {
        id: e.id,
        at: e.at,
        session_id: e.session_id.clone(),
        turn_id: e.turn_id.clone(),
        call_id: e.call_id.clone(),
        tool: e.tool.clone(),
        kind: e.kind.clone(),
        decision: e.decision.map(|d| decision_str(d).to_string()),
        source: e.source.map(|s| source_str(s).to_string()),
        status: e.status.clone(),
        latency_ms: e.latency_ms,
        payload: e.payload.to_string(),
        prev_hash: e.prev_hash.clone(),
        hash: e.hash.clone(),
    }
}
