//! A session as a window shows it again after a restart: its history with each item's turn, the
//! approvals still waiting, its token totals, its file changes and its plan.
//!
//! Rule: the store reads rows, it does not interpret them: what a compaction made of the history
//! (each item's mark, the summary) is the compaction's to say, and is added above the store.

use bridle_protocol::{CheckpointChange, PlanItem, SessionSnapshot, SnapshotItem, TokenUsage, TurnUsage};
use rusqlite::{params, OptionalExtension};

use super::{ApprovalStatus, Store, StoreError};

impl Store {
    /// Keeps `items` as the session's plan, replacing the last one.
    pub fn set_plan(&self, session_id: &str, items: &[PlanItem], now_ms: i64) -> Result<(), StoreError> {
        let body = serde_json::to_string(items).map_err(|e| StoreError::Corrupt { id: 0, message: e.to_string() })?;
        self.conn()?.execute(
            "INSERT INTO plans (session_id, items, updated_at) VALUES (?1, ?2, ?3)
             ON CONFLICT (session_id) DO UPDATE SET items = ?2, updated_at = ?3",
            params![session_id, body, now_ms],
        )?;
        Ok(())
    }

    /// The session's plan; empty when the model never set one.
    pub fn plan(&self, session_id: &str) -> Result<Vec<PlanItem>, StoreError> {
        let body: Option<String> = self
            .conn()?
            .query_row("SELECT items FROM plans WHERE session_id = ?1", [session_id], |r| r.get(0))
            .optional()?;
        match body {
            None => Ok(Vec::new()),
            Some(body) => {
                serde_json::from_str(&body).map_err(|e| StoreError::Corrupt { id: 0, message: e.to_string() })
            }
        }
    }

    /// Keeps the session's token totals and the last request's size, and adds `step` to its
    /// turn's tokens.
    pub fn set_usage(
        &self,
        session_id: &str,
        turn_id: &str,
        step: &TokenUsage,
        total: &TokenUsage,
        context_used: u64,
    ) -> Result<(), StoreError> {
        self.conn()?.execute(
            "INSERT INTO turn_usage (session_id, turn_id, seq, input_tokens, cached_input_tokens, output_tokens)
             VALUES (?1, ?2, (SELECT COUNT(*) FROM turn_usage WHERE session_id = ?1), ?3, ?4, ?5)
             ON CONFLICT (session_id, turn_id) DO UPDATE SET input_tokens = input_tokens + ?3,
             cached_input_tokens = cached_input_tokens + ?4, output_tokens = output_tokens + ?5",
            params![
                session_id,
                turn_id,
                step.input_tokens as i64,
                step.cached_input_tokens as i64,
                step.output_tokens as i64
            ],
        )?;
        self.conn()?.execute(
            "INSERT INTO session_usage (session_id, input_tokens, cached_input_tokens, output_tokens, context_used)
             VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (session_id) DO UPDATE SET input_tokens = ?2,
             cached_input_tokens = ?3, output_tokens = ?4, context_used = ?5",
            params![
                session_id,
                total.input_tokens as i64,
                total.cached_input_tokens as i64,
                total.output_tokens as i64,
                context_used as i64
            ],
        )?;
        Ok(())
    }

    /// The session's token totals and last request size (zero before any request).
    pub fn usage(&self, session_id: &str) -> Result<(TokenUsage, u64), StoreError> {
        let row = self
            .conn()?
            .query_row(
                "SELECT input_tokens, cached_input_tokens, output_tokens, context_used FROM session_usage
                 WHERE session_id = ?1",
                [session_id],
                |r| {
                    Ok((
                        TokenUsage {
                            input_tokens: r.get::<_, i64>(0)? as u64,
                            cached_input_tokens: r.get::<_, i64>(1)? as u64,
                            output_tokens: r.get::<_, i64>(2)? as u64,
                        },
                        r.get::<_, i64>(3)? as u64,
                    ))
                },
            )
            .optional()?;
        Ok(row.unwrap_or_default())
    }

    /// Each turn's tokens, in the order the turns ran.
    pub fn turn_usage(&self, session_id: &str) -> Result<Vec<TurnUsage>, StoreError> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare(
            "SELECT turn_id, input_tokens, cached_input_tokens, output_tokens FROM turn_usage
             WHERE session_id = ?1 ORDER BY seq",
        )?;
        let rows = stmt.query_map([session_id], |r| {
            Ok(TurnUsage {
                turn_id: r.get(0)?,
                usage: TokenUsage {
                    input_tokens: r.get::<_, i64>(1)? as u64,
                    cached_input_tokens: r.get::<_, i64>(2)? as u64,
                    output_tokens: r.get::<_, i64>(3)? as u64,
                },
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The session's rows, each item's compaction mark and the summary left empty: only
    /// [`crate::compaction::snapshot`], which fills them in, reads it (a window or `bridle sessions
    /// show --json` must show the marks).
    pub(crate) fn unmarked_snapshot(&self, session_id: &str, now_ms: i64) -> Result<SessionSnapshot, StoreError> {
        let session = self.session(session_id)?;
        // Repairs a history cut short first (the same reading a resumed engine gets).
        self.history(session_id, now_ms)?;
        let items = self
            .history_with_turns(session_id)?
            .into_iter()
            .map(|(turn_id, item)| SnapshotItem { turn_id, compacted: None, item })
            .collect();
        let pending_approvals = self
            .held_approvals(session_id)?
            .into_values()
            .filter(|a| a.status == ApprovalStatus::Pending)
            .map(|a| a.request)
            .collect();
        let (usage, context_used) = self.usage(session_id)?;
        let turn_usage = self.turn_usage(session_id)?;
        let changes = self
            .changes(session_id)?
            .into_iter()
            .map(|c| CheckpointChange {
                kind: match (&c.before_hash, &c.after_hash) {
                    (None, _) => "created",
                    (_, None) => "deleted",
                    _ => "modified",
                }
                .to_string(),
                turn_id: c.turn_id,
                call_id: c.call_id,
                path: c.path,
                undone: c.undone_at.is_some(),
            })
            .collect();
        Ok(SessionSnapshot {
            session,
            items,
            summary: None,
            pending_approvals,
            usage,
            context_used,
            turn_usage,
            changes,
            plan: self.plan(session_id)?,
            agents: self.agents(session_id)?,
            seq: 0,
        })
    }
}
