//! The hunks of reviewed turns (DESIGN §10.1): made once per turn from its change rows, then
//! only their states change.
//!
//! Rule: a turn's hunks are replaced only while none of them is decided (a turn still running
//! when it was first listed); once one is kept or rejected, the ids stay.

use rusqlite::params;

use super::{Store, StoreError};

/// One stored hunk. Line numbers are 0-based here (the protocol's are 1-based).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HunkRow {
    /// Row id: the hunk's id.
    pub id: i64,
    /// The session.
    pub session_id: String,
    /// The turn.
    pub turn_id: String,
    /// Workspace-relative POSIX path, as text.
    pub path: String,
    /// The path's exact bytes.
    pub name: Vec<u8>,
    /// `text`, `created`, `deleted`, `binary` or `mode`.
    pub kind: String,
    /// First line it replaced in the content before the turn.
    pub base_start: u64,
    /// How many lines it replaced.
    pub base_lines: u64,
    /// First line it wrote in the content the turn left.
    pub agent_start: u64,
    /// How many lines it wrote.
    pub agent_lines: u64,
    /// The lines before.
    pub old_text: String,
    /// The lines the turn wrote.
    pub new_text: String,
    /// The call that made it.
    pub call_id: String,
    /// That call's tool.
    pub tool: String,
    /// For `bash`, its command.
    pub command: Option<String>,
    /// `pending`, `kept` or `rejected`.
    pub state: String,
    /// Whether the model was told of its reject.
    pub told: bool,
    /// When it was last decided.
    pub decided_at: Option<i64>,
    /// The newest change row of the turn it was made from.
    pub rows: i64,
}

const COLUMNS: &str = "id, session_id, turn_id, path, name, kind, base_start, base_lines, agent_start, agent_lines,
    old_text, new_text, call_id, tool, command, state, told, decided_at, rows";

fn read(r: &rusqlite::Row<'_>) -> rusqlite::Result<HunkRow> {
    Ok(HunkRow {
        id: r.get(0)?,
        session_id: r.get(1)?,
        turn_id: r.get(2)?,
        path: r.get(3)?,
        name: r.get(4)?,
        kind: r.get(5)?,
        base_start: r.get::<_, i64>(6)? as u64,
        base_lines: r.get::<_, i64>(7)? as u64,
        agent_start: r.get::<_, i64>(8)? as u64,
        agent_lines: r.get::<_, i64>(9)? as u64,
        old_text: r.get(10)?,
        new_text: r.get(11)?,
        call_id: r.get(12)?,
        tool: r.get(13)?,
        command: r.get(14)?,
        state: r.get(15)?,
        told: r.get(16)?,
        decided_at: r.get(17)?,
        rows: r.get(18)?,
    })
}

impl Store {
    /// A turn's hunks, in path order then line order.
    pub fn hunks(&self, session_id: &str, turn_id: &str) -> Result<Vec<HunkRow>, StoreError> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare(&format!(
            "SELECT {COLUMNS} FROM hunks WHERE session_id = ?1 AND turn_id = ?2 ORDER BY path, agent_start, id"
        ))?;
        let rows = stmt.query_map(params![session_id, turn_id], read)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// One hunk of a session by id.
    pub fn hunk(&self, session_id: &str, id: i64) -> Result<Option<HunkRow>, StoreError> {
        use rusqlite::OptionalExtension as _;
        let conn = self.conn()?;
        Ok(conn
            .query_row(
                &format!("SELECT {COLUMNS} FROM hunks WHERE session_id = ?1 AND id = ?2"),
                params![session_id, id],
                read,
            )
            .optional()?)
    }

    /// Replaces a turn's hunks (none of them decided) with `hunks`, in one transaction; returns
    /// them with their ids. Refused (`Ok(None)`) when one was decided meanwhile.
    pub fn replace_hunks(
        &self,
        session_id: &str,
        turn_id: &str,
        hunks: Vec<HunkRow>,
    ) -> Result<Option<Vec<HunkRow>>, StoreError> {
        let mut conn = self.conn()?;
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let decided: i64 = tx.query_row(
            "SELECT COUNT(*) FROM hunks WHERE session_id = ?1 AND turn_id = ?2 AND state != 'pending'",
            params![session_id, turn_id],
            |r| r.get(0),
        )?;
        if decided > 0 {
            return Ok(None);
        }
        tx.execute("DELETE FROM hunks WHERE session_id = ?1 AND turn_id = ?2", params![session_id, turn_id])?;
        let mut out = Vec::with_capacity(hunks.len());
        {
            let mut stmt = tx.prepare(
                "INSERT INTO hunks (session_id, turn_id, path, name, kind, base_start, base_lines, agent_start,
                    agent_lines, old_text, new_text, call_id, tool, command, state, rows)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, 'pending', ?15)",
            )?;
            for mut h in hunks {
                stmt.execute(params![
                    session_id,
                    turn_id,
                    h.path,
                    h.name,
                    h.kind,
                    h.base_start as i64,
                    h.base_lines as i64,
                    h.agent_start as i64,
                    h.agent_lines as i64,
                    h.old_text,
                    h.new_text,
                    h.call_id,
                    h.tool,
                    h.command,
                    h.rows
                ])?;
                h.id = tx.last_insert_rowid();
                h.state = "pending".into();
                out.push(h);
            }
        }
        tx.commit()?;
        Ok(Some(out))
    }

    /// Sets the state of hunks at once (a reject's `told` goes back to false: the model hears
    /// of it, or of it again).
    pub fn set_hunk_states(&self, ids: &[i64], state: &str, now_ms: i64) -> Result<(), StoreError> {
        let mut conn = self.conn()?;
        let tx = conn.transaction()?;
        for id in ids {
            tx.execute(
                "UPDATE hunks SET state = ?2, decided_at = ?3, told = 0 WHERE id = ?1",
                params![id, state, now_ms],
            )?;
        }
        tx.commit()?;
        Ok(())
    }

    /// The rejected hunks of a session the model was not told of yet, oldest decision first.
    pub fn untold_rejections(&self, session_id: &str) -> Result<Vec<HunkRow>, StoreError> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare(&format!(
            "SELECT {COLUMNS} FROM hunks WHERE session_id = ?1 AND state = 'rejected' AND told = 0
             ORDER BY decided_at, path, agent_start"
        ))?;
        let rows = stmt.query_map([session_id], read)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The model was told of these rejects.
    pub fn mark_told(&self, ids: &[i64]) -> Result<(), StoreError> {
        let mut conn = self.conn()?;
        let tx = conn.transaction()?;
        for id in ids {
            tx.execute("UPDATE hunks SET told = 1 WHERE id = ?1", [id])?;
        }
        tx.commit()?;
        Ok(())
    }
}
