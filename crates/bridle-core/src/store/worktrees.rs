//! The git worktree Bridle made for a session (DESIGN §16): where it is, what it was made from,
//! its git folders as git named them when it was made, and its archive once put away.
//!
//! Rule: the record, not the worktree's own files, says which git folders a session may write
//! and which repository Bridle's own git works on: the agent can rewrite the worktree's `.git`
//! file and its admin folder, never this row.

use std::path::PathBuf;

use rusqlite::{params, OptionalExtension};

use super::{Store, StoreError};
use crate::worktrees::{Archived, Worktree};

/// A session's worktree as recorded, and its archive while it is put away.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorktreeRecord {
    /// The session.
    pub session_id: String,
    /// The worktree.
    pub worktree: Worktree,
    /// Its archive, while archived.
    pub archived: Option<Archived>,
}

const COLUMNS: &str =
    "SELECT session_id, path, origin, common_dir, admin_dir, branch, base, archive_ref, archive_head FROM worktrees";

fn record_from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<WorktreeRecord> {
    let path = |i| row.get::<_, String>(i).map(PathBuf::from);
    let branch: String = row.get(5)?;
    let archive: (Option<String>, Option<String>) = (row.get(7)?, row.get(8)?);
    Ok(WorktreeRecord {
        session_id: row.get(0)?,
        worktree: Worktree {
            path: path(1)?,
            origin: path(2)?,
            common_dir: path(3)?,
            admin_dir: path(4)?,
            branch: branch.clone(),
            base: row.get(6)?,
            included: Vec::new(),
        },
        archived: match archive {
            (Some(reference), Some(head)) => Some(Archived { reference, branch, head }),
            _ => None,
        },
    })
}

impl Store {
    /// Records that `session_id` works in `worktree`.
    pub fn record_worktree(&self, session_id: &str, worktree: &Worktree, now_ms: i64) -> Result<(), StoreError> {
        let text = |p: &std::path::Path| p.display().to_string();
        self.conn()?.execute(
            "INSERT INTO worktrees (session_id, path, origin, common_dir, admin_dir, branch, base, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![
                session_id,
                text(&worktree.path),
                text(&worktree.origin),
                text(&worktree.common_dir),
                text(&worktree.admin_dir),
                worktree.branch,
                worktree.base,
                now_ms
            ],
        )?;
        Ok(())
    }

    /// The worktree `session_id` works in, if Bridle made one for it.
    pub fn worktree(&self, session_id: &str) -> Result<Option<WorktreeRecord>, StoreError> {
        Ok(self
            .conn()?
            .query_row(&format!("{COLUMNS} WHERE session_id = ?1"), [session_id], record_from_row)
            .optional()?)
    }

    /// Every recorded worktree, by session.
    pub fn worktrees(&self) -> Result<Vec<WorktreeRecord>, StoreError> {
        let conn = self.conn()?;
        let mut statement = conn.prepare(COLUMNS)?;
        let rows = statement.query_map([], record_from_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Records that `session_id`'s worktree was put away as `archived`.
    pub fn worktree_archived(&self, session_id: &str, archived: &Archived, now_ms: i64) -> Result<(), StoreError> {
        self.conn()?.execute(
            "UPDATE worktrees SET archive_ref = ?2, archive_head = ?3, archived_at = ?4 WHERE session_id = ?1",
            params![session_id, archived.reference, archived.head, now_ms],
        )?;
        Ok(())
    }

    /// Records that `session_id`'s worktree is back (restored or re-created) as `worktree`.
    pub fn worktree_back(&self, session_id: &str, worktree: &Worktree) -> Result<(), StoreError> {
        self.conn()?.execute(
            "UPDATE worktrees SET admin_dir = ?2, common_dir = ?3, archive_ref = NULL, archive_head = NULL,
             archived_at = NULL WHERE session_id = ?1",
            params![session_id, worktree.admin_dir.display().to_string(), worktree.common_dir.display().to_string()],
        )?;
        Ok(())
    }
}
