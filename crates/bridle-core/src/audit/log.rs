//! [`AuditLog`]: the synchronous handle on `<data-dir>/audit.db` — open, append, export.
//! Queries are in `query.rs`, verification in `verify.rs`.
//!
//! Rule: an append holds the exclusive `audit.lock` across its whole `BEGIN IMMEDIATE`
//! transaction and the head write that follows; ids are assigned explicitly as the last id + 1
//! read inside that transaction, so writers in different processes extend one chain and the
//! head only moves forward.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use rusqlite::{params, Connection, OptionalExtension, Transaction, TransactionBehavior};

use super::chain::{StoredRow, COLUMNS, GENESIS};
use super::head::{self, Head, HeadState, LockFile};
use super::record::{decision_str, source_str, AuditRecord};
use super::{schema, AuditError};
use crate::redact;
use crate::telemetry::Telemetry;

/// Name of the database file in the data dir.
pub const DB_FILE: &str = "audit.db";

/// How long a writer waits for another process's transaction.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);
/// Planner statistics are refreshed each time the log grows past a multiple of this.
const STATS_EVERY: i64 = 50_000;

/// Synchronous handle on the audit log of one data dir. Cheap calls are fine from async code;
/// the engine goes through [`super::AuditSink`], which batches on its own thread.
#[derive(Debug)]
pub struct AuditLog {
    pub(crate) conn: Mutex<Connection>,
    pub(crate) dir: PathBuf,
    lock: LockFile,
    /// Whether the "head is inconsistent" error was already logged (once per handle is enough).
    warned_head: AtomicBool,
    /// Where committed rows are exported, when `[telemetry]` is on.
    telemetry: Option<Telemetry>,
}

impl AuditLog {
    /// Opens (creating) `<data_dir>/audit.db` in WAL mode, its lock file, and — for a new, empty
    /// log — the head file.
    pub fn open(data_dir: &Path) -> Result<AuditLog, AuditError> {
        std::fs::create_dir_all(data_dir).map_err(|e| AuditError::io(data_dir, e))?;
        let lock = LockFile::open(data_dir).map_err(|e| AuditError::io(&data_dir.join(head::LOCK_FILE), e))?;
        let conn = Connection::open(data_dir.join(DB_FILE))?;
        conn.busy_timeout(BUSY_TIMEOUT)?;
        crate::store::wal(&conn)?;
        // FULL: a commit is on disk before the head (fsynced too) names it, so a power cut
        // cannot leave the head ahead of the log and look like tampering.
        conn.pragma_update(None, "synchronous", "FULL")?;
        // A log already set up is opened without the lock (readers, such as a UI view opening a
        // handle per query, never wait for the writer); setting one up takes it.
        if schema::version(&conn)? != schema::VERSION || head::read(data_dir) == HeadState::Missing {
            let _guard = lock.lock().map_err(|e| AuditError::io(lock.path(), e))?;
            schema::apply(&conn)?;
            // Only a log with no rows gets a fresh head: a missing head beside existing rows
            // is evidence that `verify` must see, not something to paper over.
            if head::read(data_dir) == HeadState::Missing && last_row(&conn)?.is_none() {
                head::write(data_dir, &Head { id: 0, hash: GENESIS.into() })
                    .map_err(|e| AuditError::io(&data_dir.join(head::HEAD_FILE), e))?;
            }
        }
        if !schema::has_stats(&conn)? && last_row(&conn)?.is_some() {
            refresh_stats(&conn);
        }
        Ok(AuditLog {
            conn: Mutex::new(conn),
            dir: data_dir.to_path_buf(),
            lock,
            warned_head: AtomicBool::new(false),
            telemetry: None,
        })
    }

    /// Exports every row committed from now on through `telemetry` (DESIGN §17).
    pub fn with_telemetry(mut self, telemetry: Option<Telemetry>) -> AuditLog {
        self.telemetry = telemetry;
        self
    }

    /// The data dir this log lives in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub(crate) fn conn(&self) -> Result<MutexGuard<'_, Connection>, AuditError> {
        self.conn.lock().map_err(|_| AuditError::Poisoned)
    }

    /// Sanitises each record's payload (and free-text columns), then appends them all in one
    /// transaction, extending the chain, and moves the head to the last one.
    ///
    /// If the head file disagrees with the log (rows removed from the end, a head deleted or
    /// edited), the rows are still appended but the head is left as it is, so `verify` keeps
    /// reporting the damage instead of the new rows hiding it.
    pub fn append(&self, records: &[AuditRecord]) -> Result<(), AuditError> {
        if records.is_empty() {
            return Ok(());
        }
        // An export outage that ended is reported by one row, with the next rows written.
        let reported = self.telemetry.as_ref().and_then(Telemetry::take_ended_outage);
        let with_report: Vec<AuditRecord>;
        let records = match reported {
            Some(outage) => {
                let at = records.last().map_or(0, |r| r.at);
                with_report = records.iter().cloned().chain([super::outage_record(&outage, at)]).collect();
                &with_report[..]
            }
            None => records,
        };
        let (prepared, payloads): (Vec<StoredRow>, Vec<serde_json::Value>) = records.iter().map(prepare).unzip();
        let mut exported = Vec::with_capacity(if self.telemetry.is_some() { records.len() } else { 0 });
        let mut conn = self.conn()?;
        let _guard = self.lock.lock().map_err(|e| AuditError::io(self.lock.path(), e))?;
        let head = head::read(&self.dir);
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let (mut id, mut prev) = last_row(&tx)?.unwrap_or((0, GENESIS.to_string()));
        let first_id = id;
        let head_agrees = head_agrees(&tx, &head, id, &prev)?;
        {
            let mut insert = tx.prepare_cached(
                "INSERT INTO audit (id, at, session_id, turn_id, call_id, tool, kind, decision, source, status, \
                 latency_ms, payload, prev_hash, hash) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
            )?;
            for ((mut row, payload), record) in prepared.into_iter().zip(payloads).zip(records) {
                id += 1;
                row.id = id;
                row.prev_hash = prev;
                row.hash = row.compute_hash();
                if self.telemetry.is_some() {
                    exported.push(super::telemetry::event(&row, record, payload));
                }
                insert.execute(params![
                    row.id,
                    row.at,
                    row.session_id,
                    row.turn_id,
                    row.call_id,
                    row.tool,
                    row.kind,
                    row.decision,
                    row.source,
                    row.status,
                    row.latency_ms,
                    row.payload,
                    row.prev_hash,
                    row.hash,
                ])?;
                prev = row.hash;
            }
        }
        tx.commit()?;
        if head_agrees {
            head::write(&self.dir, &Head { id, hash: prev })
                .map_err(|e| AuditError::HeadWrite { path: self.dir.join(head::HEAD_FILE), source: e })?;
        } else if !self.warned_head.swap(true, Ordering::Relaxed) {
            tracing::error!(
                dir = %self.dir.display(),
                "audit log: the head file does not match the log (rows removed or head edited); \
                 appending without moving the head — run `bridle audit verify`"
            );
        }
        if first_id / STATS_EVERY != id / STATS_EVERY {
            refresh_stats(&conn);
        }
        drop(conn);
        if let Some(telemetry) = &self.telemetry {
            let at = exported.last().map_or(0, |e| e.at);
            telemetry.offer(exported, at);
        }
        Ok(())
    }

    /// Writes every row, oldest first, as one JSON [`bridle_protocol::AuditEvent`] per line to
    /// `path` (atomically: a temp file beside it, fsynced, then renamed). Returns the row count.
    pub fn export(&self, path: &Path) -> Result<u64, AuditError> {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "audit".into());
        let temp = path.with_file_name(format!(".{name}.tmp-{}", std::process::id()));
        let result = self.export_to(&temp).and_then(|n| {
            std::fs::rename(&temp, path).map_err(|e| AuditError::io(path, e))?;
            Ok(n)
        });
        if result.is_err() {
            let _ = std::fs::remove_file(&temp);
        }
        result
    }

    fn export_to(&self, temp: &Path) -> Result<u64, AuditError> {
        let file = std::fs::File::create(temp).map_err(|e| AuditError::io(temp, e))?;
        let mut out = BufWriter::new(file);
        let mut conn = self.conn()?;
        let tx = conn.transaction()?;
        let mut stmt = tx.prepare(&format!("SELECT {COLUMNS} FROM audit ORDER BY id"))?;
        let mut rows = stmt.query([])?;
        let mut n = 0u64;
        while let Some(row) = rows.next()? {
            let event = StoredRow::from_row(row)?.into_event()?;
            serde_json::to_writer(&mut out, &event).map_err(|e| AuditError::io(temp, e.into()))?;
            out.write_all(b"\n").map_err(|e| AuditError::io(temp, e))?;
            n += 1;
        }
        let file = out.into_inner().map_err(|e| AuditError::io(temp, e.into_error()))?;
        file.sync_all().map_err(|e| AuditError::io(temp, e))?;
        Ok(n)
    }
}

/// Statistics are an optimisation: a failure is logged, never fatal.
fn refresh_stats(conn: &Connection) {
    if let Err(e) = schema::refresh_stats(conn) {
        tracing::warn!("audit log: cannot refresh query statistics: {e}");
    }
}

/// The last row's id and hash.
pub(crate) fn last_row(conn: &Connection) -> Result<Option<(i64, String)>, AuditError> {
    Ok(conn
        .query_row("SELECT id, hash FROM audit ORDER BY id DESC LIMIT 1", [], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?)
}

/// Whether the head names a row the log still has, unchanged (rows after it are fine: a crash
/// between a commit and its head write leaves them).
fn head_agrees(tx: &Transaction<'_>, head: &HeadState, last_id: i64, last_hash: &str) -> Result<bool, AuditError> {
    let head = match head {
        HeadState::At(head) => head,
        HeadState::Missing => return Ok(last_id == 0),
        HeadState::Unreadable(_) => return Ok(false),
    };
    if head.id == last_id {
        return Ok(head.hash == last_hash);
    }
    if head.id > last_id {
        return Ok(false);
    }
    if head.id == 0 {
        return Ok(head.hash == GENESIS);
    }
    let hash: Option<String> =
        tx.query_row("SELECT hash FROM audit WHERE id = ?1", [head.id], |r| r.get(0)).optional()?;
    Ok(hash.as_deref() == Some(head.hash.as_str()))
}

/// A record sanitised and in stored form, waiting for its id, chain link and hash; and its
/// sanitised payload as a value (for the exporter).
fn prepare(r: &AuditRecord) -> (StoredRow, serde_json::Value) {
    let text = |s: &Option<String>| s.as_deref().map(redact::sanitize_text);
    let payload = redact::sanitize(&r.payload);
    let row = StoredRow {
        id: 0,
        at: r.at,
        session_id: text(&r.session_id),
        turn_id: text(&r.turn_id),
        call_id: text(&r.call_id),
        tool: text(&r.tool),
        kind: r.kind.as_str().to_string(),
        decision: r.decision.map(|d| decision_str(d).to_string()),
        source: r.source.map(|s| source_str(s).to_string()),
        status: text(&r.status),
        latency_ms: r.latency_ms,
        // `Value`'s Display is its JSON text, which cannot fail (map keys are strings).
        payload: payload.to_string(),
        prev_hash: String::new(),
        hash: String::new(),
    };
    (row, payload)
}
