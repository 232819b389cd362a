//! What a session keeps beside its history: a checkpoint row per file a tool call changed (with
//! the blobs of its content before and after, so a turn can be undone whole or file by file),
//! how it last saw each file, and the views its compactions left.

use std::collections::HashSet;

use rusqlite::params;

use super::{Store, StoreError};
use crate::fs::Stamp;

/// One file one call changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangeRow {
    /// Row id (the order changes happened in).
    pub id: i64,
    /// The session.
    pub session_id: String,
    /// The turn it happened in.
    pub turn_id: String,
    /// The call that made it.
    pub call_id: String,
    /// Workspace-relative POSIX path, as text (lossy for a name that is not UTF-8).
    pub path: String,
    /// The path's exact bytes (`None` in a row recorded before names were kept exactly).
    pub name: Option<Vec<u8>>,
    /// Blob of the content before (`None`: the file did not exist).
    pub before_hash: Option<String>,
    /// Its mode before.
    pub before_mode: Option<u32>,
    /// Blob of the content after (`None`: the call deleted it).
    pub after_hash: Option<String>,
    /// Its mode after.
    pub after_mode: Option<u32>,
    /// When an undo put the file back (ms since the epoch).
    pub undone_at: Option<i64>,
    /// When it happened (ms since the epoch).
    pub created_at: i64,
}

impl ChangeRow {
    /// The exact bytes of the path this row names: its `name`, or for an older row its text,
    /// which is exact unless a name that was not UTF-8 was replaced by `U+FFFD` (`None`).
    pub fn exact_name(&self) -> Option<Vec<u8>> {
        match &self.name {
            Some(name) => Some(name.clone()),
            None if self.path.contains('\u{FFFD}') => None,
            None => Some(self.path.as_bytes().to_vec()),
        }
    }
}

impl Store {
    /// Records one file change; returns its row id.
    pub fn insert_change(&self, row: &ChangeRow) -> Result<i64, StoreError> {
        insert(&*self.conn()?, row)
    }

    /// Records the changes of one call in one transaction (all or none); returns their row ids.
    pub fn insert_changes(&self, rows: &[ChangeRow]) -> Result<Vec<i64>, StoreError> {
        let mut conn = self.conn()?;
        let tx = conn.transaction()?;
        let ids = rows.iter().map(|row| insert(&tx, row)).collect::<Result<Vec<_>, _>>()?;
        tx.commit()?;
        Ok(ids)
    }

    /// Whether the turn already changed `path` (and the change was not undone).
    pub fn has_change(&self, session_id: &str, turn_id: &str, path: &str) -> Result<bool, StoreError> {
        let n: i64 = self.conn()?.query_row(
            "SELECT COUNT(*) FROM file_changes WHERE session_id = ?1 AND turn_id = ?2 AND path = ?3 AND undone_at IS NULL",
            params![session_id, turn_id, path],
            |r| r.get(0),
        )?;
        Ok(n > 0)
    }

    /// Forgets change rows whose write did not happen.
    pub fn delete_changes(&self, ids: &[i64]) -> Result<(), StoreError> {
        let conn = self.conn()?;
        for id in ids {
            conn.execute("DELETE FROM file_changes WHERE id = ?1", [id])?;
        }
        Ok(())
    }

    /// Every change of a session, and of its children in its workspace, oldest first.
    pub fn changes(&self, session_id: &str) -> Result<Vec<ChangeRow>, StoreError> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare(
            // A child's changes in its parent's workspace count as the parent turn's that started
            // it (DESIGN §16.1: the parent's undo covers them); a child in a worktree of its own
            // changed another checkout.
            "SELECT c.id, c.session_id, CASE WHEN c.session_id = ?1 THEN c.turn_id ELSE s.parent_turn_id END,
                c.call_id, c.path, c.before_hash, c.before_mode, c.after_hash, c.after_mode, c.undone_at,
                c.created_at, c.name
             FROM file_changes c JOIN sessions s ON s.id = c.session_id
             WHERE c.session_id = ?1
                OR (s.parent_id = ?1 AND NOT EXISTS (SELECT 1 FROM worktrees w WHERE w.session_id = s.id))
             ORDER BY c.id",
        )?;
        let rows = stmt.query_map([session_id], |r| {
            Ok(ChangeRow {
                id: r.get(0)?,
                session_id: r.get(1)?,
                turn_id: r.get(2)?,
                call_id: r.get(3)?,
                path: r.get(4)?,
                before_hash: r.get(5)?,
                before_mode: r.get(6)?,
                after_hash: r.get(7)?,
                after_mode: r.get(8)?,
                undone_at: r.get(9)?,
                created_at: r.get(10)?,
                name: r.get(11)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Marks changes as undone.
    pub fn mark_undone(&self, ids: &[i64], now_ms: i64) -> Result<(), StoreError> {
        let mut conn = self.conn()?;
        let tx = conn.transaction()?;
        for id in ids {
            tx.execute("UPDATE file_changes SET undone_at = ?2 WHERE id = ?1", params![id, now_ms])?;
        }
        tx.commit()?;
        Ok(())
    }

    /// Remembers how `path` looked when the session last saw it (`None`: forget it).
    pub fn set_seen(&self, session_id: &str, path: &str, stamp: Option<Stamp>) -> Result<(), StoreError> {
        let conn = self.conn()?;
        match stamp {
            Some(s) => conn.execute(
                "INSERT INTO seen_files (session_id, path, mtime_ns, size, inode) VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT (session_id, path) DO UPDATE SET mtime_ns = ?3, size = ?4, inode = ?5",
                params![session_id, path, s.mtime_ns as i64, s.size as i64, s.inode as i64],
            )?,
            None => {
                conn.execute("DELETE FROM seen_files WHERE session_id = ?1 AND path = ?2", params![session_id, path])?
            }
        };
        Ok(())
    }

    /// How the session last saw each file it read or wrote.
    pub fn seen(&self, session_id: &str) -> Result<Vec<(String, Stamp)>, StoreError> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare("SELECT path, mtime_ns, size, inode FROM seen_files WHERE session_id = ?1")?;
        let rows = stmt.query_map([session_id], |r| {
            let stamp = Stamp {
                mtime_ns: i128::from(r.get::<_, i64>(1)?),
                size: r.get::<_, i64>(2)? as u64,
                inode: r.get::<_, i64>(3)? as u64,
            };
            Ok((r.get::<_, String>(0)?, stamp))
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Records a compaction: the view the model sees from now on.
    pub fn save_view(
        &self,
        session_id: &str,
        view: &str,
        before: u64,
        after: u64,
        now_ms: i64,
    ) -> Result<(), StoreError> {
        self.conn()?.execute(
            "INSERT INTO compactions (session_id, view, tokens_before, tokens_after, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![session_id, view, before as i64, after as i64, now_ms],
        )?;
        Ok(())
    }

    /// The latest compaction view of a session (JSON), if it was ever compacted.
    pub fn view(&self, session_id: &str) -> Result<Option<String>, StoreError> {
        use rusqlite::OptionalExtension as _;
        Ok(self
            .conn()?
            .query_row(
                "SELECT view FROM compactions WHERE session_id = ?1 ORDER BY id DESC LIMIT 1",
                [session_id],
                |r| r.get(0),
            )
            .optional()?)
    }

    /// Every blob a change row still names (the rest can be collected).
    pub fn referenced_blobs(&self) -> Result<HashSet<String>, StoreError> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare(
            "SELECT before_hash FROM file_changes WHERE before_hash IS NOT NULL
             UNION SELECT after_hash FROM file_changes WHERE after_hash IS NOT NULL",
        )?;
        let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

/// One `file_changes` row through `conn`; its id.
fn insert(conn: &rusqlite::Connection, row: &ChangeRow) -> Result<i64, StoreError> {
    conn.execute(
        "INSERT INTO file_changes (session_id, turn_id, call_id, path, before_hash, before_mode, after_hash,
            after_mode, created_at, name) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        params![
            row.session_id,
            row.turn_id,
            row.call_id,
            row.path,
            row.before_hash,
            row.before_mode,
            row.after_hash,
            row.after_mode,
            row.created_at,
            row.name
        ],
    )?;
    Ok(conn.last_insert_rowid())
}
