//! Child sessions (DESIGN §16.1): which session and turn started each, and the child as its
//! parent last knew it.
//!
//! Rule: the parent's engine writes the record as the child changes; the row is a session like
//! any other, so its history, approvals and audit are the child's own.

use bridle_protocol::AgentInfo;
use rusqlite::params;

use super::{Store, StoreError};

impl Store {
    /// Records `agent` on its child's session row: its parent, the parent's turn, and the rest.
    pub fn set_agent(&self, agent: &AgentInfo) -> Result<(), StoreError> {
        let json = serde_json::to_string(agent).map_err(|e| StoreError::Corrupt { id: 0, message: e.to_string() })?;
        let n = self.conn()?.execute(
            "UPDATE sessions SET parent_id = ?2, parent_turn_id = ?3, agent = ?4 WHERE id = ?1",
            params![agent.id, agent.parent_id, agent.turn_id, json],
        )?;
        if n == 0 {
            return Err(StoreError::NoSession(agent.id.clone()));
        }
        Ok(())
    }

    /// The children of `parent_id`, oldest first, as last recorded.
    pub fn agents(&self, parent_id: &str) -> Result<Vec<AgentInfo>, StoreError> {
        let conn = self.conn()?;
        let mut stmt =
            conn.prepare("SELECT id, agent FROM sessions WHERE parent_id = ?1 ORDER BY created_at, rowid")?;
        let rows = stmt.query_map([parent_id], |r| Ok((r.get::<_, String>(0)?, r.get::<_, Option<String>>(1)?)))?;
        let mut agents = Vec::new();
        for row in rows {
            let (id, json) = row?;
            let agent = json.as_deref().and_then(|j| serde_json::from_str(j).ok()).ok_or_else(|| {
                StoreError::Corrupt { id: 0, message: format!("session {id}: its record as a child is unreadable") }
            })?;
            agents.push(agent);
        }
        Ok(agents)
    }
}
