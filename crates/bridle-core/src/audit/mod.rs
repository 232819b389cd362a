//! The audit log (DESIGN §7): every session start, user message, model request, tool call,
//! guard decision, approval, tool outcome, file change, compaction and error, one row each, in
//! its own SQLite file `<data-dir>/audit.db`.
//!
//! Rules: rows are append-only and hash-chained (each row's hash covers its id, its content and
//! the previous row's hash); payloads are sanitised before they are stored, so the log holds
//! no secrets; appends from several processes (the app and the CLI) extend one chain, because
//! each holds the exclusive `audit.lock` across a `BEGIN IMMEDIATE` transaction that reads the
//! last row and assigns the next id itself; the head (last id and hash) is also kept outside
//! the database in `audit.head`, so [`AuditLog::verify`] catches an edited, deleted or
//! truncated log and names the first bad row.
//!
//! ```
//! use bridle_core::audit::{AuditFilter, AuditKind, AuditLog, AuditRecord, AuditSink};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let dir = tempfile::tempdir()?;
//! let sink = AuditSink::start(AuditLog::open(dir.path())?);
//! sink.record(AuditRecord::new(AuditKind::ToolCall, 1_700_000_000_000).session("s1").tool("bash")
//!     .payload(serde_json::json!({"command": "echo $TOKEN", "env": {"TOKEN": "hunter2"}})));
//! sink.flush()?;
//! let log = AuditLog::open(dir.path())?;
//! let rows = log.query(&AuditFilter { session_id: Some("s1".into()), ..AuditFilter::default() })?;
//! assert_eq!(rows[0].payload["env"]["TOKEN"], "[redacted]");
//! assert!(log.verify()?.intact);
//! # Ok(()) }
//! ```

mod chain;
mod export;
mod head;
mod log;
mod markdown;
mod query;
mod record;
mod schema;
mod sink;
mod telemetry;
mod verify;

#[cfg(test)]
use crate::redact::fixtures;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};

pub use chain::GENESIS;
pub use export::{BadItem, ExportCheck, ExportFormat, SessionExport, EXPORT_FORMAT};
pub use head::{Head, HEAD_FILE, LOCK_FILE};
pub use log::{AuditLog, DB_FILE};
pub use query::AuditFilter;
pub use record::{AuditKind, AuditRecord};
pub use sink::AuditSink;
pub use telemetry::outage_record;
pub use verify::{BadRow, Problem, VerifyReport};

/// Why the audit log failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AuditError {
    /// SQLite reported an error.
    #[error("audit log: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// A file could not be read or written.
    #[error("audit log: {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// Rows were committed but the head file could not be updated.
    #[error("audit log: rows committed but the head {} was not updated: {source}", path.display())]
    HeadWrite {
        /// The head file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// A stored row cannot be read back.
    #[error("audit log: row {id} is corrupt: {message}")]
    Corrupt {
        /// Row id.
        id: i64,
        /// What is wrong.
        message: String,
    },
    /// No row names this session.
    #[error("audit log: no rows for session `{0}`")]
    NoSession(String),
    /// The database is newer than this build.
    #[error("audit log: schema version {found} is newer than this build understands ({supported})")]
    TooNew {
        /// Version in the file.
        found: i64,
        /// Highest version this build knows.
        supported: i64,
    },
    /// The handle's lock was poisoned by a panic elsewhere.
    #[error("audit log: lock poisoned")]
    Poisoned,
    /// The sink's writer thread is gone.
    #[error("audit log: the writer thread has stopped")]
    Stopped,
    /// An append on the sink's writer thread failed (the message of the original error).
    #[error("{0}")]
    Writer(String),
}

impl AuditError {
    fn io(path: &Path, source: std::io::Error) -> AuditError {
        AuditError::Io { path: path.to_path_buf(), source }
    }
}
