//! Reading the log back: [`AuditFilter`] and [`AuditLog::query`].
//!
//! Rule: results are newest first — the `limit` most recent matching rows — and every filter
//! but the text search is answered from an index, so a filtered query stays fast at millions
//! of rows.

use bridle_protocol::{AuditEvent, Decision};
use rusqlite::types::Value as SqlValue;

use super::chain::{StoredRow, COLUMNS};
use super::record::{decision_str, AuditKind};
use super::{AuditError, AuditLog};

/// Which rows to return; empty fields match everything.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AuditFilter {
    /// Only this session.
    pub session_id: Option<String>,
    /// Only this tool.
    pub tool: Option<String>,
    /// Only this kind.
    pub kind: Option<AuditKind>,
    /// Only rows with this decision.
    pub decision: Option<Decision>,
    /// Only rows at or after this time (ms since the epoch).
    pub since: Option<i64>,
    /// Only rows before this time (ms since the epoch).
    pub until: Option<i64>,
    /// Only rows whose stored payload JSON contains this text (ASCII case-insensitive; a
    /// full scan, so combine it with an indexed filter on big logs).
    pub text: Option<String>,
    /// Only rows with a smaller id (paging back from the oldest row of the previous page).
    pub before_id: Option<i64>,
    /// At most this many rows (the newest ones); `None`: all.
    pub limit: Option<u32>,
}

impl AuditLog {
    /// The rows matching `filter`, newest first.
    pub fn query(&self, filter: &AuditFilter) -> Result<Vec<AuditEvent>, AuditError> {
        let mut conditions = String::new();
        let mut args: Vec<SqlValue> = Vec::new();
        let mut clause = |sql: &str, value: SqlValue| {
            conditions.push_str(sql);
            args.push(value);
        };
        if let Some(s) = &filter.session_id {
            clause(" AND session_id = ?", SqlValue::Text(s.clone()));
        }
        if let Some(t) = &filter.tool {
            clause(" AND tool = ?", SqlValue::Text(t.clone()));
        }
        if let Some(k) = filter.kind {
            clause(" AND kind = ?", SqlValue::Text(k.as_str().into()));
        }
        if let Some(d) = filter.decision {
            clause(" AND decision = ?", SqlValue::Text(decision_str(d).into()));
        }
        if let Some(t) = filter.since {
            clause(" AND at >= ?", SqlValue::Integer(t));
        }
        if let Some(t) = filter.until {
            clause(" AND at < ?", SqlValue::Integer(t));
        }
        if let Some(text) = &filter.text {
            clause(r" AND payload LIKE ? ESCAPE '\'", SqlValue::Text(format!("%{}%", escape_like(text))));
        }
        if let Some(id) = filter.before_id {
            clause(" AND id < ?", SqlValue::Integer(id));
        }
        let sql = match filter.limit {
            // Ids first, then the rows: when the index cannot give id order (a time range),
            // SQLite sorts ids instead of whole rows with their payloads.
            Some(n) => {
                args.push(SqlValue::Integer(i64::from(n)));
                format!(
                    "SELECT {COLUMNS} FROM audit WHERE id IN \
                     (SELECT id FROM audit WHERE 1 = 1{conditions} ORDER BY id DESC LIMIT ?) ORDER BY id DESC"
                )
            }
            None => format!("SELECT {COLUMNS} FROM audit WHERE 1 = 1{conditions} ORDER BY id DESC"),
        };
        let conn = self.conn()?;
        let mut stmt = conn.prepare_cached(&sql)?;
        let rows = stmt.query_map(rusqlite::params_from_iter(args), StoredRow::from_row)?;
        let mut events = Vec::new();
        for row in rows {
            events.push(row?.into_event()?);
        }
        Ok(events)
    }
}

fn escape_like(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}
