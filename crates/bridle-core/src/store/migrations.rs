//! Schema migrations, tracked in `PRAGMA user_version`; each runs once, in a transaction.

use rusqlite::Connection;

use super::StoreError;

const MIGRATIONS: &[&str] = &[
    // 1: sessions and their history.
    "CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        workspace TEXT NOT NULL,
        title TEXT NOT NULL DEFAULT '',
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
    );
    CREATE TABLE items (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        turn_id TEXT NOT NULL,
        body TEXT NOT NULL,
        created_at INTEGER NOT NULL
    );
    CREATE INDEX items_by_session ON items(session_id, id);",
    // 2: approval requests (the whole call, so a turn can resume in another process) and the
    // session's remembered approvals.
    "CREATE TABLE approvals (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        turn_id TEXT NOT NULL,
        call TEXT NOT NULL,
        request TEXT NOT NULL,
        status TEXT NOT NULL,
        answer TEXT,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        resolved_at INTEGER
    );
    CREATE INDEX approvals_by_session ON approvals(session_id, status, created_at);
    CREATE TABLE grants (
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        key TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (session_id, key)
    );",
    // 3: checkpoints: each file a tool call changed, with the blobs of its content before and
    // after (in <data-dir>/blobs); the stamp of each file as the session last saw it, so a
    // file changed on disk since is not overwritten unseen, in this process or the next; and
    // each compaction's view of the history (the latest is what the model sees); and the
    // session's token totals and each turn's, so a resumed session counts on and shows them.
    "CREATE TABLE file_changes (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        turn_id TEXT NOT NULL,
        call_id TEXT NOT NULL,
        path TEXT NOT NULL,
        before_hash TEXT,
        before_mode INTEGER,
        after_hash TEXT,
        after_mode INTEGER,
        undone_at INTEGER,
        created_at INTEGER NOT NULL
    );
    CREATE INDEX file_changes_by_session ON file_changes(session_id, id);
    CREATE INDEX file_changes_by_turn ON file_changes(session_id, turn_id, path);
    CREATE TABLE seen_files (
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        path TEXT NOT NULL,
        mtime_ns INTEGER NOT NULL,
        size INTEGER NOT NULL,
        inode INTEGER NOT NULL,
        PRIMARY KEY (session_id, path)
    );
    CREATE TABLE session_usage (
        session_id TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
        input_tokens INTEGER NOT NULL,
        cached_input_tokens INTEGER NOT NULL,
        output_tokens INTEGER NOT NULL,
        context_used INTEGER NOT NULL
    );
    CREATE TABLE turn_usage (
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        turn_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        input_tokens INTEGER NOT NULL,
        cached_input_tokens INTEGER NOT NULL,
        output_tokens INTEGER NOT NULL,
        PRIMARY KEY (session_id, turn_id)
    );
    CREATE TABLE compactions (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        view TEXT NOT NULL,
        tokens_before INTEGER NOT NULL,
        tokens_after INTEGER NOT NULL,
        created_at INTEGER NOT NULL
    );",
    // 4: the model's plan (`update_plan`), one per session.
    "CREATE TABLE plans (
        session_id TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
        items TEXT NOT NULL,
        updated_at INTEGER NOT NULL
    );",
    // 5: the background processes a session started (DESIGN §4.4): who runs each (its pid and
    // start time, and the Bridle process that owns it), so a crash leaves nothing behind.
    "CREATE TABLE processes (
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        id TEXT NOT NULL,
        call_id TEXT NOT NULL,
        command TEXT NOT NULL,
        pid INTEGER NOT NULL,
        pid_start INTEGER NOT NULL,
        owner_pid INTEGER NOT NULL,
        owner_start INTEGER NOT NULL,
        started_at INTEGER NOT NULL,
        ended_at INTEGER,
        state TEXT NOT NULL,
        exit_code INTEGER,
        told INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (session_id, id)
    );",
    // 9: a changed path's exact bytes, so a name that is not UTF-8 is put back as it was (the
    // `path` column is its text for people, lossy for such a name).
    "ALTER TABLE file_changes ADD COLUMN name BLOB;",
    // 10: the workspace skills the user trusted (DESIGN §13.1), each with the hash of the
    // `SKILL.md` trusted: a file that changed since is not trusted.
    "CREATE TABLE skill_trust (
        workspace TEXT NOT NULL,
        path TEXT NOT NULL,
        hash TEXT NOT NULL,
        trusted_at INTEGER NOT NULL,
        PRIMARY KEY (workspace, path)
    );",
    // 11: how the session's last turn stands (`working` while one runs, then `completed`,
    // `failed`, `interrupted` or `suspended`), so a list says which session works or failed.
    "ALTER TABLE sessions ADD COLUMN turn_state TEXT NOT NULL DEFAULT 'idle';",
    // 12: the hunks of each reviewed turn (DESIGN §10.1), with where each came from and its
    // state, so the window and `bridle sessions review` see the same ids; `told` once the model
    // heard of a reject; `rows` is the newest change row of the turn the hunks were made from.
    "CREATE TABLE hunks (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        turn_id TEXT NOT NULL,
        path TEXT NOT NULL,
        name BLOB NOT NULL,
        kind TEXT NOT NULL,
        base_start INTEGER NOT NULL,
        base_lines INTEGER NOT NULL,
        agent_start INTEGER NOT NULL,
        agent_lines INTEGER NOT NULL,
        old_text TEXT NOT NULL,
        new_text TEXT NOT NULL,
        call_id TEXT NOT NULL,
        tool TEXT NOT NULL,
        command TEXT,
        state TEXT NOT NULL DEFAULT 'pending',
        told INTEGER NOT NULL DEFAULT 0,
        decided_at INTEGER,
        rows INTEGER NOT NULL
    );
    CREATE INDEX hunks_turn ON hunks (session_id, turn_id);",
    // 13: the git worktree Bridle made for a session, and its archive when put away.
    "CREATE TABLE worktrees (
        session_id TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
        path TEXT NOT NULL UNIQUE,
        origin TEXT NOT NULL,
        common_dir TEXT NOT NULL,
        admin_dir TEXT NOT NULL,
        branch TEXT NOT NULL,
        base TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        archive_ref TEXT,
        archive_head TEXT,
        archived_at INTEGER
    );",
    // 14: a child session's parent (DESIGN §16.1): the parent's session and turn, and the child
    // as its parent knows it (task, role, state, last message), as JSON.
    "ALTER TABLE sessions ADD COLUMN parent_id TEXT REFERENCES sessions(id) ON DELETE CASCADE;
     ALTER TABLE sessions ADD COLUMN parent_turn_id TEXT;
     ALTER TABLE sessions ADD COLUMN agent TEXT;
     CREATE INDEX sessions_parent ON sessions(parent_id);",
];

/// Brings the schema up to date.
pub(super) fn apply(conn: &Connection) -> Result<(), StoreError> {
    let current: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
    let supported = MIGRATIONS.len() as i64;
    if current > supported {
        return Err(StoreError::TooNew { found: current, supported });
    }
    if current == supported {
        return Ok(());
    }
    // Another process may be migrating the same file: each step takes the write lock first
    // (waiting out the other through the busy timeout) and reads the version again under it.
    for (i, sql) in MIGRATIONS.iter().enumerate() {
        let tx = rusqlite::Transaction::new_unchecked(conn, rusqlite::TransactionBehavior::Immediate)?;
        let now: i64 = tx.pragma_query_value(None, "user_version", |r| r.get(0))?;
        if now > i as i64 {
            continue;
        }
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", (i + 1) as i64)?;
        tx.commit()?;
    }
    Ok(())
}
