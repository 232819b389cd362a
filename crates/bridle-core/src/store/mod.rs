//! The conversation store: sessions and their history in one SQLite file (WAL).
//!
//! Rules: history is append-only; every item is written before the engine moves on, so a
//! session survives the process (`bridle run --session ID`); a history cut short by a crash
//! (tool calls without results) is closed with error results when loaded, so a resumed
//! conversation is always valid for the provider — except calls still waiting on an approval
//! request, which the engine finishes when it resumes the session.

mod agents;
mod approvals;
mod changes;
mod hunks;
mod lease;
mod migrations;
mod processes;
mod skill_trust;
mod snapshot;
mod state;
mod worktrees;

use std::path::Path;
use std::sync::{Mutex, MutexGuard};

use bridle_protocol::{HistoryItem, SessionInfo, ToolResult};
use rusqlite::{params, Connection, OptionalExtension};

pub use approvals::{ApprovalStatus, RecordedAnswer, StoredApproval};
pub use changes::ChangeRow;
pub use hunks::HunkRow;
pub use lease::SessionLease;
pub use processes::ProcessRow;
pub use state::TurnState;
pub use worktrees::WorktreeRecord;

/// A fresh id (UUID v4) for sessions, turns and calls.
pub fn new_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// Why the store failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// SQLite reported an error.
    #[error("conversation store: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// A stored item is not valid JSON for its type.
    #[error("conversation store: corrupt item {id}: {message}")]
    Corrupt {
        /// Row id.
        id: i64,
        /// What is wrong.
        message: String,
    },
    /// The database is newer than this build.
    #[error("conversation store: schema version {found} is newer than this build understands ({supported})")]
    TooNew {
        /// Version in the file.
        found: i64,
        /// Highest version this build knows.
        supported: i64,
    },
    /// No session has that id.
    #[error("no session `{0}`")]
    NoSession(String),
    /// The store's lock was poisoned by a panic elsewhere.
    #[error("conversation store: lock poisoned")]
    Poisoned,
}

/// How long a statement waits for another process's write to end.
const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Turns on WAL (the store and the audit log alike). Several processes may open a new file at
/// once, and the switch takes a lock SQLite does not wait for through the busy timeout: it is
/// retried here, for as long.
pub(crate) fn wal(conn: &Connection) -> rusqlite::Result<()> {
    let deadline = std::time::Instant::now() + BUSY_TIMEOUT;
    loop {
        match conn.pragma_update(None, "journal_mode", "WAL") {
            Err(rusqlite::Error::SqliteFailure(e, _))
                if e.code == rusqlite::ErrorCode::DatabaseBusy && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            other => return other,
        }
    }
}

/// Handle on `bridle.db`; cheap operations, called from async code directly.
pub struct Store {
    conn: Mutex<Connection>,
    /// The data dir the file lives in, where the sessions' leases are (none in memory).
    dir: Option<std::path::PathBuf>,
}

impl Store {
    /// Opens (creating and migrating) the store at `path`.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        let conn = Connection::open(path)?;
        Self::init(conn, path.parent().map(Path::to_path_buf))
    }

    /// A private in-memory store (tests).
    pub fn open_in_memory() -> Result<Store, StoreError> {
        Self::init(Connection::open_in_memory()?, None)
    }

    fn init(conn: Connection, dir: Option<std::path::PathBuf>) -> Result<Store, StoreError> {
        conn.busy_timeout(BUSY_TIMEOUT)?;
        wal(&conn)?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        migrations::apply(&conn)?;
        Ok(Store { conn: Mutex::new(conn), dir })
    }

    fn conn(&self) -> Result<MutexGuard<'_, Connection>, StoreError> {
        self.conn.lock().map_err(|_| StoreError::Poisoned)
    }

    /// Records a new session.
    pub fn create_session(&self, id: &str, workspace: &str, now_ms: i64) -> Result<(), StoreError> {
        self.conn()?.execute(
            "INSERT INTO sessions (id, workspace, title, created_at, updated_at) VALUES (?1, ?2, '', ?3, ?3)",
            params![id, workspace, now_ms],
        )?;
        Ok(())
    }

    /// One session's summary.
    pub fn session(&self, id: &str) -> Result<SessionInfo, StoreError> {
        let row = self.session_row(id)?;
        Ok(self.with_states(vec![row], Some(id))?.remove(0))
    }

    /// The session's row as stored, without what [`Self::session`] derives from the leases, the
    /// questions and the workspace.
    fn session_row(&self, id: &str) -> Result<(SessionInfo, String), StoreError> {
        self.conn()?
            .query_row(&format!("{SESSION_COLUMNS} WHERE s.id = ?1"), [id], session_from_row)
            .optional()?
            .ok_or_else(|| StoreError::NoSession(id.to_string()))
    }

    /// Every session, most recently updated first.
    pub fn sessions(&self) -> Result<Vec<SessionInfo>, StoreError> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare(&format!("{SESSION_COLUMNS} ORDER BY s.updated_at DESC, s.id"))?;
        let rows = stmt.query_map([], session_from_row)?.collect::<Result<_, _>>()?;
        drop(stmt);
        drop(conn);
        self.with_states(rows, None)
    }

    /// Deletes a session and its history.
    pub fn delete_session(&self, id: &str) -> Result<(), StoreError> {
        let n = self.conn()?.execute("DELETE FROM sessions WHERE id = ?1", [id])?;
        if n == 0 {
            return Err(StoreError::NoSession(id.to_string()));
        }
        Ok(())
    }

    /// Appends one item; the first user message becomes the session's title.
    pub fn append(&self, session_id: &str, turn_id: &str, item: &HistoryItem, now_ms: i64) -> Result<(), StoreError> {
        let body = serde_json::to_string(item).map_err(|e| StoreError::Corrupt { id: 0, message: e.to_string() })?;
        let mut conn = self.conn()?;
        let tx = conn.transaction()?;
        tx.execute(
            "INSERT INTO items (session_id, turn_id, body, created_at) VALUES (?1, ?2, ?3, ?4)",
            params![session_id, turn_id, body, now_ms],
        )?;
        let title = match item {
            HistoryItem::User { text } => text.lines().next().unwrap_or_default().chars().take(80).collect(),
            _ => String::new(),
        };
        tx.execute(
            "UPDATE sessions SET updated_at = ?2, title = CASE WHEN title = '' THEN ?3 ELSE title END WHERE id = ?1",
            params![session_id, now_ms, title],
        )?;
        tx.commit()?;
        Ok(())
    }

    /// The session's history in order, with unanswered tool calls closed by error results
    /// (which are also written, so the repair happens once).
    pub fn history(&self, session_id: &str, now_ms: i64) -> Result<Vec<HistoryItem>, StoreError> {
        self.session_row(session_id)?;
        let items: Vec<HistoryItem> = self.history_with_turns(session_id)?.into_iter().map(|(_, item)| item).collect();
        let held: Vec<String> = self.held_approvals(session_id)?.into_keys().collect();
        let (history, added) = close_dangling_calls(items, &held);
        for item in &added {
            self.append(session_id, "", item, now_ms)?;
        }
        Ok(history)
    }

    /// The history with each item's turn, results after their calls (no repair).
    pub fn history_with_turns(&self, session_id: &str) -> Result<Vec<(String, HistoryItem)>, StoreError> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare("SELECT id, turn_id, body FROM items WHERE session_id = ?1 ORDER BY id")?;
        let rows = stmt.query_map([session_id], |row| {
            Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?, row.get::<_, String>(2)?))
        })?;
        let mut items = Vec::new();
        for row in rows {
            let (id, turn, body) = row?;
            let item = serde_json::from_str(&body).map_err(|e| StoreError::Corrupt { id, message: e.to_string() })?;
            items.push((turn, item));
        }
        Ok(results_in_call_order(items))
    }
}

/// A session's row with its token total (input and output; cached input is part of input).
const SESSION_COLUMNS: &str = "SELECT s.id, s.workspace, s.title, s.created_at, s.updated_at, \
     COALESCE(u.input_tokens + u.output_tokens, 0), s.turn_state, s.agent \
     FROM sessions s LEFT JOIN session_usage u ON u.session_id = s.id";

/// A session's row, and how its turn stands as recorded.
fn session_from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<(SessionInfo, String)> {
    let info = SessionInfo {
        id: row.get(0)?,
        workspace: row.get(1)?,
        title: row.get(2)?,
        created_at: row.get(3)?,
        updated_at: row.get(4)?,
        total_tokens: row.get::<_, i64>(5)?.max(0) as u64,
        state: Default::default(),
        waiting_for: None,
        waiting: 0,
        branch: None,
        worktree: None,
        // A child's record is the engine's own JSON; one it cannot read shows as no parent.
        agent: row.get::<_, Option<String>>(7)?.and_then(|json| serde_json::from_str(&json).ok()),
    };
    Ok((info, row.get(6)?))
}

/// Results are stored as their calls end, in any order, and a repaired result is stored after
/// whatever came later: each result is put right after the assistant item that made its call,
/// in the order of the calls (a result of an unknown call keeps its place).
fn results_in_call_order(items: Vec<(String, HistoryItem)>) -> Vec<(String, HistoryItem)> {
    let calls: std::collections::HashSet<String> = items
        .iter()
        .flat_map(|(_, i)| match i {
            HistoryItem::Assistant { tool_calls, .. } => tool_calls.iter().map(|c| c.id.clone()).collect(),
            _ => Vec::new(),
        })
        .collect();
    let mut results: std::collections::HashMap<String, (String, HistoryItem)> = std::collections::HashMap::new();
    let mut rest = Vec::with_capacity(items.len());
    for (turn, item) in items {
        match &item {
            HistoryItem::ToolResult { result } if calls.contains(&result.tool_call_id) => {
                // The first result of a call wins (a later duplicate cannot happen, but is dropped).
                results.entry(result.tool_call_id.clone()).or_insert((turn, item));
            }
            _ => rest.push((turn, item)),
        }
    }
    let mut out = Vec::with_capacity(rest.len() + results.len());
    for (turn, item) in rest {
        let ids: Vec<String> = match &item {
            HistoryItem::Assistant { tool_calls, .. } => tool_calls.iter().map(|c| c.id.clone()).collect(),
            _ => Vec::new(),
        };
        out.push((turn, item));
        out.extend(ids.iter().filter_map(|id| results.remove(id)));
    }
    out
}

/// Inserts an error result after every tool call that has none; returns the history and the
/// inserted items.
fn close_dangling_calls(items: Vec<HistoryItem>, held: &[String]) -> (Vec<HistoryItem>, Vec<HistoryItem>) {
    let answered: std::collections::HashSet<String> = items
        .iter()
        .filter_map(|i| match i {
            HistoryItem::ToolResult { result } => Some(result.tool_call_id.clone()),
            _ => None,
        })
        .collect();
    let dangling: Vec<String> = items
        .iter()
        .flat_map(|i| match i {
            HistoryItem::Assistant { tool_calls, .. } => tool_calls.iter().map(|c| c.id.clone()).collect(),
            _ => Vec::new(),
        })
        .filter(|id| !answered.contains(id) && !held.contains(id))
        .collect();
    if dangling.is_empty() {
        return (items, Vec::new());
    }
    // Results appended at the end would not follow their calls; rebuild in order instead.
    let mut history = Vec::with_capacity(items.len() + dangling.len());
    let mut added = Vec::new();
    let mut open: Vec<String> = Vec::new();
    let close = |open: &mut Vec<String>, history: &mut Vec<HistoryItem>, added: &mut Vec<HistoryItem>| {
        for id in open.drain(..) {
            let item = HistoryItem::ToolResult {
                result: ToolResult::error(id, "No result: the session ended before this call finished."),
            };
            added.push(item.clone());
            history.push(item);
        }
    };
    for item in items {
        match &item {
            HistoryItem::ToolResult { result } => open.retain(|id| id != &result.tool_call_id),
            _ => close(&mut open, &mut history, &mut added),
        }
        if let HistoryItem::Assistant { tool_calls, .. } = &item {
            open = tool_calls.iter().map(|c| c.id.clone()).filter(|id| dangling.contains(id)).collect();
        }
        history.push(item);
    }
    close(&mut open, &mut history, &mut added);
    (history, added)
}

#[cfg(test)]
mod tests;
