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
-- Most rows have no tool or decision: those indexes leave them out (smaller, and the planner's
-- statistics are not swamped by NULLs).
CREATE INDEX IF NOT EXISTS audit_session ON audit (session_id, id);
CREATE INDEX IF NOT EXISTS audit_tool ON audit (tool, id) WHERE tool IS NOT NULL;
CREATE INDEX IF NOT EXISTS audit_kind ON audit (kind, id);
CREATE INDEX IF NOT EXISTS audit_decision ON audit (decision, id) WHERE decision IS NOT NULL;
CREATE INDEX IF NOT EXISTS audit_at ON audit (at);
-- Append-only by accident-proofing, not by security: whoever can edit the file can drop these,
-- which is what the hash chain and the head are for.
CREATE TRIGGER IF NOT EXISTS audit_no_update BEFORE UPDATE ON audit
BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
CREATE TRIGGER IF NOT EXISTS audit_no_delete BEFORE DELETE ON audit
BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
";

/// Rows sampled per index when statistics are refreshed (bounds the cost at any size).
const ANALYSIS_LIMIT: i64 = 2000;

/// Refreshes the planner's statistics, so a query filtering on two columns walks the more
/// selective index (a session has hundreds of rows, a kind hundreds of thousands). Sampled, so
/// it takes milliseconds at any size.
pub fn refresh_stats(conn: &Connection) -> Result<(), AuditError> {
    conn.pragma_update(None, "analysis_limit", ANALYSIS_LIMIT)?;
    conn.execute_batch("ANALYZE audit")?;
    Ok(())
}

/// Whether the planner has statistics for the table yet.
pub fn has_stats(conn: &Connection) -> Result<bool, AuditError> {
    let table: i64 =
        conn.query_row("SELECT count(*) FROM sqlite_master WHERE name = 'sqlite_stat1'", [], |r| r.get(0))?;
    if table == 0 {
        return Ok(false);
    }
    let rows: i64 = conn.query_row("SELECT count(*) FROM sqlite_stat1 WHERE tbl = 'audit'", [], |r| r.get(0))?;
    Ok(rows > 0)
}

/// The schema version of the open file (0: new).
pub fn version(conn: &Connection) -> Result<i64, AuditError> {
    Ok(conn.query_row("PRAGMA user_version", [], |r| r.get(0))?)
}

/// Creates or checks the schema.
pub fn apply(conn: &Connection) -> Result<(), AuditError> {
    let found = version(conn)?;
    if found > VERSION {
        return Err(AuditError::TooNew { found, supported: VERSION });
    }
    if found < VERSION {
        conn.execute_batch(&format!("BEGIN IMMEDIATE; {V1} PRAGMA user_version = {VERSION}; COMMIT;"))?;
    }
    Ok(())
}
