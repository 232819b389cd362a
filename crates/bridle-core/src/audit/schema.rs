//! The `audit` table, its indexes and the triggers that keep it append-only.
//!
//! Rule: the schema only grows; `PRAGMA user_version` says which version a file has, and a file
//! newer than this build is refused rather than written with the wrong rules.

use rusqlite::Connection;

use super::AuditError;

/// The version this build writes.
pub const VERSION: i64 = 1;

const V1: &str = "
CREATE TABLE IF NOT EXISTS audit (
    id         INTEGER PRIMARY KEY,
    at         INTEGER NOT NULL,
    session_id TEXT,
    turn_id    TEXT,
    call_id    TEXT,
    tool       TEXT,
    kind       TEXT NOT NULL,
    decision   TEXT,
    source     TEXT,
    status     TEXT,
    latency_ms INTEGER,
    payload    TEXT NOT NULL,
    prev_hash  TEXT NOT NULL,
    hash       TEXT NOT NULL
);
-- Each filter walks its own index in id order, so `ORDER BY id DESC LIMIT n` stops early.
CREATE INDEX IF NOT EXISTS audit_session ON audit (session_id, id);
CREATE INDEX IF NOT EXISTS audit_tool ON audit (tool, id);
CREATE INDEX IF NOT EXISTS audit_kind ON audit (kind, id);
CREATE INDEX IF NOT EXISTS audit_decision ON audit (decision, id);
CREATE INDEX IF NOT EXISTS audit_at ON audit (at);
-- Append-only by accident-proofing, not by security: whoever can edit the file can drop these,
-- which is what the hash chain and the head are for.
CREATE TRIGGER IF NOT EXISTS audit_no_update BEFORE UPDATE ON audit
BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
CREATE TRIGGER IF NOT EXISTS audit_no_delete BEFORE DELETE ON audit
BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
";

/// Creates or checks the schema.
pub fn apply(conn: &Connection) -> Result<(), AuditError> {
    let found: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if found > VERSION {
        return Err(AuditError::TooNew { found, supported: VERSION });
    }
    if found < VERSION {
        conn.execute_batch(&format!("BEGIN IMMEDIATE; {V1} PRAGMA user_version = {VERSION}; COMMIT;"))?;
    }
    Ok(())
}
