//! Checking the log end to end: [`AuditLog::verify`] and its [`VerifyReport`].
//!
//! Rule: every row is re-hashed and linked to the one before, ids must run 1, 2, 3… without
//! gaps, and the head file must name a row that still exists with that hash. The first
//! problem found is named; rows after the head (a crash between a commit and its head write)
//! are not a problem as long as their chain is valid.

use serde::Serialize;

use super::chain::{StoredRow, COLUMNS, GENESIS};
use super::head::{self, HeadState};
use super::{AuditError, AuditLog};

/// What `verify` found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VerifyReport {
    /// No problem found.
    pub intact: bool,
    /// Rows checked (up to the first bad one).
    pub rows: u64,
    /// The last row's id (0: no rows).
    pub last_id: i64,
    /// The id the head file names, if it could be read.
    pub head_id: Option<i64>,
    /// Valid rows after the head: a crash between a commit and its head write, not tampering.
    pub beyond_head: u64,
    /// The first problem, if any.
    pub first_bad: Option<BadRow>,
}

/// The first problem `verify` found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BadRow {
    /// The row it concerns (0 when it is the head file itself that is missing or unreadable).
    pub id: i64,
    /// What kind of problem.
    pub problem: Problem,
    /// A sentence for humans.
    pub reason: String,
}

/// Kinds of damage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Problem {
    /// A row's content no longer matches its hash (edited).
    Altered,
    /// A row's `prevHash` is not the previous row's hash (a row replaced or re-hashed).
    BrokenLink,
    /// An id is missing from the sequence (a row deleted).
    Missing,
    /// The head names rows the log no longer has (rows removed from the end).
    Truncated,
    /// The row the head names has a different hash (the log was rewritten from there).
    HeadMismatch,
    /// The head file is missing or unreadable while the log has rows.
    HeadUnreadable,
}

impl VerifyReport {
    /// One line for humans.
    pub fn summary(&self) -> String {
        match &self.first_bad {
            None if self.beyond_head > 0 => format!(
                "intact: {} rows checked; {} valid rows after the head (an interrupted write, not tampering)",
                self.rows, self.beyond_head
            ),
            None => format!("intact: {} rows checked", self.rows),
            Some(bad) if bad.id > 0 => format!("broken at row {}: {}", bad.id, bad.reason),
            Some(bad) => format!("broken: {}", bad.reason),
        }
    }
}

impl AuditLog {
    /// Walks every row, re-hashing and re-linking, then checks the head.
    pub fn verify(&self) -> Result<VerifyReport, AuditError> {
        // The head first: it is written after each commit, so the snapshot read below can only
        // be at or after it, never behind.
        let head = head::read(&self.dir);
        let head_row = match &head {
            HeadState::At(h) => Some(h.clone()),
            _ => None,
        };
        let mut report = VerifyReport {
            intact: false,
            rows: 0,
            last_id: 0,
            head_id: head_row.as_ref().map(|h| h.id),
            beyond_head: 0,
            first_bad: None,
        };
        let bad = |id, problem, reason: String| Some(BadRow { id, problem, reason });

        let mut conn = self.conn()?;
        let tx = conn.transaction()?;
        let mut stmt = tx.prepare(&format!("SELECT {COLUMNS} FROM audit ORDER BY id"))?;
        let mut rows = stmt.query([])?;
        let mut prev_hash = GENESIS.to_string();
        while let Some(row) = rows.next()? {
            let row = StoredRow::from_row(row)?;
            let expected = report.last_id + 1;
            report.first_bad = if row.id != expected {
                let reason = if row.id > expected && expected == row.id - 1 {
                    format!("row {expected} is missing (row {} follows row {})", row.id, report.last_id)
                } else if row.id > expected {
                    format!(
                        "rows {expected} to {} are missing (row {} follows row {})",
                        row.id - 1,
                        row.id,
                        report.last_id
                    )
                } else {
                    format!("unexpected row id {} where {expected} should be", row.id)
                };
                bad(expected, Problem::Missing, reason)
            } else if row.prev_hash != prev_hash {
                bad(row.id, Problem::BrokenLink, format!("its prevHash is not the hash of row {}", row.id - 1))
            } else if row.compute_hash() != row.hash {
                bad(row.id, Problem::Altered, "its content does not match its hash (edited)".into())
            } else if head_row.as_ref().is_some_and(|h| h.id == row.id && h.hash != row.hash) {
                bad(row.id, Problem::HeadMismatch, "its hash differs from the head's: the log was rewritten".into())
            } else {
                None
            };
            if report.first_bad.is_some() {
                return Ok(report);
            }
            report.rows += 1;
            report.last_id = row.id;
            prev_hash = row.hash;
        }

        let last = report.last_id;
        report.first_bad = match &head {
            HeadState::Missing if last > 0 => {
                bad(0, Problem::HeadUnreadable, format!("the head file {} is missing", head::HEAD_FILE))
            }
            HeadState::Unreadable(why) => {
                bad(0, Problem::HeadUnreadable, format!("the head file {} is unreadable: {why}", head::HEAD_FILE))
            }
            HeadState::At(h) if h.id > last => bad(
                last + 1,
                Problem::Truncated,
                format!("the head names row {} but the log ends at row {last}: rows removed from the end", h.id),
            ),
            HeadState::At(h) if h.id == 0 && h.hash != GENESIS => {
                bad(0, Problem::HeadMismatch, "the head names no rows but an unknown hash".into())
            }
            HeadState::At(h) => {
                report.beyond_head = u64::try_from(last - h.id).unwrap_or(0);
                None
            }
            _ => None,
        };
        report.intact = report.first_bad.is_none();
        Ok(report)
    }
}
