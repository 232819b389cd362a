//! The workspace skills the user trusted (DESIGN §13.1): one row per `SKILL.md`, by workspace and
//! path, with the hash of the file as it was trusted.
//!
//! Rule: trust is of one file's content: a row whose hash differs from the file's now trusts
//! nothing (the reader compares); trusting again replaces the row.

use std::collections::BTreeMap;

use rusqlite::params;

use super::{Store, StoreError};

impl Store {
    /// Trusts the `SKILL.md` at `path` of `workspace` as it is now (`hash`).
    pub fn trust_skill(&self, workspace: &str, path: &str, hash: &str, now_ms: i64) -> Result<(), StoreError> {
        self.conn()?.execute(
            "INSERT INTO skill_trust (workspace, path, hash, trusted_at) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (workspace, path) DO UPDATE SET hash = excluded.hash, trusted_at = excluded.trusted_at",
            params![workspace, path, hash, now_ms],
        )?;
        Ok(())
    }

    /// The trusted hash of each `SKILL.md` of `workspace`, by path.
    pub fn trusted_skills(&self, workspace: &str) -> Result<BTreeMap<String, String>, StoreError> {
        let conn = self.conn()?;
        let mut statement = conn.prepare("SELECT path, hash FROM skill_trust WHERE workspace = ?1")?;
        let rows = statement.query_map(params![workspace], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}
