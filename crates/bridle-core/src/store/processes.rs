//! The background processes sessions started (DESIGN §4.4): one row each, written when it starts
//! and closed when it ends, naming it by pid and start time and the Bridle process that owns it.
//!
//! Rule: a row is closed once, with how the process ended; a row left open belongs to a Bridle
//! process that is still running it, or to one that died (whose leftovers the next start ends).

use rusqlite::{params, OptionalExtension, Row};

use super::{Store, StoreError};

/// One background process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessRow {
    /// The session that started it.
    pub session_id: String,
    /// Its id in the session (`p1`, `p2`, ...).
    pub id: String,
    /// The call that started it (its processes carry the call's marker).
    pub call_id: String,
    /// The command line.
    pub command: String,
    /// The process Bridle spawned (the leader of its group).
    pub pid: i64,
    /// Its start time, in clock ticks after boot (`/proc/PID/stat`): with the pid, who it is.
    pub pid_start: i64,
    /// The Bridle process running it.
    pub owner_pid: i64,
    /// That process's start time.
    pub owner_start: i64,
    /// When it started (ms since the epoch).
    pub started_at: i64,
    /// When it ended (ms since the epoch); `None` while it runs.
    pub ended_at: Option<i64>,
    /// `running`, `exited` or `stopped`.
    pub state: String,
    /// Its exit code, when it exited with one.
    pub exit_code: Option<i32>,
}

const COLUMNS: &str =
    "session_id, id, call_id, command, pid, pid_start, owner_pid, owner_start, started_at, ended_at, state, exit_code";

fn row(r: &Row<'_>) -> rusqlite::Result<ProcessRow> {
    Ok(ProcessRow {
        session_id: r.get(0)?,
        id: r.get(1)?,
        call_id: r.get(2)?,
        command: r.get(3)?,
        pid: r.get(4)?,
        pid_start: r.get(5)?,
        owner_pid: r.get(6)?,
        owner_start: r.get(7)?,
        started_at: r.get(8)?,
        ended_at: r.get(9)?,
        state: r.get(10)?,
        exit_code: r.get(11)?,
    })
}

impl Store {
    /// Records a process that started.
    pub fn insert_process(&self, p: &ProcessRow) -> Result<(), StoreError> {
        self.conn()?.execute(
            &format!("INSERT INTO processes ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)"),
            params![
                p.session_id,
                p.id,
                p.call_id,
                p.command,
                p.pid,
                p.pid_start,
                p.owner_pid,
                p.owner_start,
                p.started_at,
                p.ended_at,
                p.state,
                p.exit_code
            ],
        )?;
        Ok(())
    }

    /// Closes the row of a process that ended (`exited` or `stopped`); `told`: while its session
    /// ran, so the model can learn it there (else it is told when the session resumes). A row
    /// already closed keeps what it says.
    pub fn end_process(&self, p: &ProcessRow, told: bool) -> Result<(), StoreError> {
        self.conn()?.execute(
            "UPDATE processes SET ended_at = ?3, state = ?4, exit_code = ?5, told = ?6
             WHERE session_id = ?1 AND id = ?2 AND ended_at IS NULL",
            params![p.session_id, p.id, p.ended_at, p.state, p.exit_code, told],
        )?;
        Ok(())
    }

    /// The processes of a session, oldest first.
    pub fn processes(&self, session_id: &str) -> Result<Vec<ProcessRow>, StoreError> {
        let conn = self.conn()?;
        let mut stmt =
            conn.prepare(&format!("SELECT {COLUMNS} FROM processes WHERE session_id = ?1 ORDER BY started_at, rowid"))?;
        let rows = stmt.query_map(params![session_id], row)?.collect::<Result<_, _>>()?;
        Ok(rows)
    }

    /// The processes of every session whose rows are still open.
    pub fn open_processes(&self) -> Result<Vec<ProcessRow>, StoreError> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare(&format!("SELECT {COLUMNS} FROM processes WHERE ended_at IS NULL"))?;
        let rows = stmt.query_map([], row)?.collect::<Result<_, _>>()?;
        Ok(rows)
    }

    /// The processes of `session_id` that ended in an earlier run and its model was not told of
    /// yet; they are marked told.
    pub fn untold_processes(&self, session_id: &str) -> Result<Vec<ProcessRow>, StoreError> {
        let conn = self.conn()?;
        let rows: Vec<ProcessRow> = {
            let mut stmt = conn.prepare(&format!(
                "SELECT {COLUMNS} FROM processes WHERE session_id = ?1 AND told = 0 AND ended_at IS NOT NULL
                 ORDER BY started_at, rowid"
            ))?;
            let rows = stmt.query_map(params![session_id], row)?.collect::<Result<_, _>>()?;
            rows
        };
        conn.execute(
            "UPDATE processes SET told = 1 WHERE session_id = ?1 AND ended_at IS NOT NULL",
            params![session_id],
        )?;
        Ok(rows)
    }

    /// How many processes `session_id` has started (its next one is numbered after them).
    pub fn process_count(&self, session_id: &str) -> Result<u64, StoreError> {
        let count: Option<i64> = self
            .conn()?
            .query_row("SELECT COUNT(*) FROM processes WHERE session_id = ?1", params![session_id], |r| r.get(0))
            .optional()?;
        Ok(count.unwrap_or(0) as u64)
    }
}
