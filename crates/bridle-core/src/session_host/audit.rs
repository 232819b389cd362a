//! The host's view of the audit log: rows for the Audit view, the whole log as a file, and one
//! session's export with proof.
//!
//! Rule: the view reads through a read-only connection of its own, so the writer thread is never
//! blocked by it, and a query answers at most 5000 rows (500 unless it asks).

use bridle_protocol::{AuditEvent, AuditQuery, ErrorCode, ErrorInfo};

use super::{blocking, Failure, SessionHost};
use crate::audit::{AuditFilter, AuditKind, AuditLog, ExportFormat};
use crate::clock::{Clock, SystemClock};

impl SessionHost {
    /// Audit rows for the Audit view, newest first.
    pub async fn audit_query(&self, query: AuditQuery) -> Result<Vec<AuditEvent>, ErrorInfo> {
        let data_dir = self.wiring().data_dir;
        blocking(ErrorCode::AuditReadFailed, move || {
            let kind = match query.kind.as_deref().filter(|k| !k.is_empty()) {
                Some(k) => Some(k.parse::<AuditKind>().map_err(|e| Failure::from(e.to_string()))?),
                None => None,
            };
            let filter = AuditFilter {
                session_id: query.session_id.filter(|s| !s.is_empty()),
                tool: query.tool.filter(|s| !s.is_empty()),
                kind,
                decision: query.decision,
                since: query.since,
                until: query.until,
                text: query.text.filter(|s| !s.is_empty()),
                before_id: query.before_id,
                limit: Some(query.limit.unwrap_or(500).min(5000)),
            };
            Ok(AuditLog::open(&data_dir)?.query(&filter)?)
        })
        .await
    }

    /// Writes the whole audit log as JSON lines into the data dir; returns the file's path.
    pub async fn audit_export(&self) -> Result<String, ErrorInfo> {
        let data_dir = self.wiring().data_dir;
        blocking(ErrorCode::AuditExportFailed, move || {
            let path = data_dir.join(format!("audit-export-{}.jsonl", SystemClock.now_ms()));
            AuditLog::open(&data_dir)?.export(&path)?;
            Ok(path.display().to_string())
        })
        .await
    }

    /// Writes `session_id`'s export with proof (`md` or `json`) into `<data-dir>/exports`;
    /// answers the file's path.
    pub async fn session_export(&self, session_id: String, format: String) -> Result<String, ErrorInfo> {
        let data_dir = self.wiring().data_dir;
        blocking(ErrorCode::AuditExportFailed, move || {
            let (format, extension) = match format.as_str() {
                "json" => (ExportFormat::Json, "json"),
                _ => (ExportFormat::Markdown, "md"),
            };
            let now = SystemClock.now_ms();
            let export = AuditLog::open(&data_dir)?.export_session(&session_id, now)?;
            let dir = data_dir.join("exports");
            std::fs::create_dir_all(&dir)?;
            let path = dir.join(format!("session-{session_id}-{now}.{extension}"));
            crate::config::edit::write_atomically(&path, export.render(format).as_bytes(), None)?;
            Ok(path.display().to_string())
        })
        .await
    }
}
