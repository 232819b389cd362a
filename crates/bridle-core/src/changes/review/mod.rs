//! Reviewing a turn hunk by hunk (DESIGN §10.1): a turn's changes as hunks per file against the
//! file's content before the turn, kept or rejected one by one, and rejects undone.
//!
//! Rules: a turn's hunks are made once from its checkpoint rows (the content before its first
//! change, kept as a blob, and what each call left) and stored, so every front end names them by
//! the same ids; what changed since the turn (the user, a command, a later turn) is never the
//! agent's: a hunk is placed through those edits, and one they touched is a conflict, never
//! written. A reject or unreject is a write Bridle makes for the user through [`commit`] (locks,
//! content check under the lock, checkpoint, atomic write), all files or none; a conflict fails
//! the whole decision before anything is written, naming the file and the lines. A created file
//! rejected is removed, a deleted one restored; a binary change is one hunk. Audit rows and the
//! note the model gets are the callers' (they stand above), from what [`decide`] returns.

mod lines;
mod made;

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;

use bridle_protocol::{Hunk, HunkCall, HunkKind, HunkState, LineRange, ReviewDecision, TurnReview};

use super::{commit, BlobStore, ChangePlan, CommitError, CommitScope, FileChange, PlannedFile, SessionFiles};
use crate::store::{HunkRow, Store};
use crate::workspace::Workspace;

pub use made::rejection_note;

/// The call id a reviewer's write is checkpointed under (the turn's rows stay the turn's).
const REVIEW_CALL: &str = "review:";

/// Why a review could not list or decide.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReviewError {
    /// The store could not be read or written.
    #[error("{0}")]
    Store(String),
    /// The session has no turn with changes, or not that one.
    #[error("{0}")]
    NoTurn(String),
    /// No hunk of the session has that id.
    #[error("no hunk `{0}` in this session")]
    UnknownHunk(String),
    /// The decision does not apply to that hunk (keeping a rejected one, rejecting a mode
    /// change); nothing was changed.
    #[error("{0}; nothing was changed")]
    Refused(String),
    /// Lines of a hunk changed since the turn; nothing was changed.
    #[error("{0}; nothing was changed")]
    Conflict(String),
    /// A file could not be read, or a checkpoint is gone.
    #[error("{0}")]
    Read(String),
    /// The write failed (its message says what was left).
    #[error(transparent)]
    Commit(#[from] CommitError),
}

fn store_err(e: impl std::fmt::Display) -> ReviewError {
    ReviewError::Store(e.to_string())
}

/// What a review works on: one session's store, blobs and workspace.
#[derive(Clone, Copy)]
pub struct Reviewer<'a> {
    /// The conversation store.
    pub store: &'a Store,
    /// The checkpoint blobs.
    pub blobs: &'a BlobStore,
    /// The session's workspace.
    pub workspace: &'a Arc<Workspace>,
    /// The session.
    pub session_id: &'a str,
}

/// What a decision did.
#[derive(Debug)]
pub struct Decided {
    /// The hunks decided, as they were before (for the audit: path, range, text).
    pub hunks: Vec<HunkRow>,
    /// The files written.
    pub changes: Vec<FileChange>,
    /// The turn of the first hunk, as it stands after.
    pub review: TurnReview,
}

/// The hunks of `turn_id` (the session's last turn with changes when `None`), made and stored
/// the first time, with their states now.
pub fn turn(r: Reviewer<'_>, turn_id: Option<&str>) -> Result<TurnReview, ReviewError> {
    let turn = match turn_id {
        Some(t) => t.to_string(),
        None => made::last_turn(r)?
            .ok_or_else(|| ReviewError::NoTurn("this session has no file change to review".into()))?,
    };
    let rows = made::hunks_of(r, &turn)?;
    let mut hunks = Vec::with_capacity(rows.len());
    for (_, file) in by_file(&rows) {
        let now = File::load(r, file[0])?;
        let states = now.states(&file);
        hunks.extend(file.iter().zip(states).map(|(h, state)| shown(h, state)));
    }
    let decided = hunks.iter().filter(|h| matches!(h.state, HunkState::Kept | HunkState::Rejected)).count() as u64;
    Ok(TurnReview { session_id: r.session_id.to_string(), turn_id: turn, hunks, decided })
}

/// Decides hunks `ids` (all or none): keep marks them reviewed, reject writes their lines back as
/// they were before the turn, unreject writes them as the turn made them. The writes go through
/// [`commit`] with `files`, the session's memory of its files.
pub async fn decide(
    r: Reviewer<'_>,
    files: Arc<SessionFiles>,
    decision: ReviewDecision,
    ids: &[String],
    now_ms: i64,
) -> Result<Decided, ReviewError> {
    let mut chosen = Vec::new();
    for id in ids {
        let n: i64 = id.trim().parse().map_err(|_| ReviewError::UnknownHunk(id.clone()))?;
        let row =
            r.store.hunk(r.session_id, n).map_err(store_err)?.ok_or_else(|| ReviewError::UnknownHunk(id.clone()))?;
        if !chosen.iter().any(|c: &HunkRow| c.id == row.id) {
            chosen.push(row);
        }
    }
    let Some(first) = chosen.first() else { return Err(ReviewError::Refused("no hunk was named".into())) };
    let first_turn = first.turn_id.clone();
    let flip: Vec<&HunkRow> = match decision {
        ReviewDecision::Keep => {
            if let Some(h) = chosen.iter().find(|h| h.state == "rejected") {
                return Err(ReviewError::Refused(format!("hunk {} is rejected; unreject it first", h.id)));
            }
            Vec::new()
        }
        ReviewDecision::Reject => chosen.iter().filter(|h| h.state != "rejected").collect(),
        ReviewDecision::Unreject => chosen.iter().filter(|h| h.state == "rejected").collect(),
    };
    // Every file's new content first, every conflict found before anything is written.
    let mut plans: BTreeMap<String, ChangePlan> = BTreeMap::new();
    let mut conflicts = Vec::new();
    let mut by_path: BTreeMap<(String, Vec<u8>), Vec<&HunkRow>> = BTreeMap::new();
    for h in &flip {
        by_path.entry((h.turn_id.clone(), h.name.clone())).or_default().push(h);
    }
    for ((turn, _), flipped) in by_path {
        let all = r.store.hunks(r.session_id, &turn).map_err(store_err)?;
        let file: Vec<&HunkRow> = all.iter().filter(|h| h.name == flipped[0].name).collect();
        let now = File::load(r, flipped[0])?;
        match now.flipped(&file, &flipped, decision) {
            Ok(after) => plans.entry(turn).or_default().files.push(PlannedFile {
                rel: now.rel.clone(),
                before: now.now.clone(),
                after,
            }),
            Err(e) => conflicts.push(e),
        }
    }
    if !conflicts.is_empty() {
        return Err(ReviewError::Conflict(conflicts.join("; ")));
    }
    let mut changes = Vec::new();
    for (turn, mut plan) in plans {
        plan.files.sort_by(|a, b| a.rel.cmp(&b.rel));
        // A reviewer's write is checked by content under the lock (the plan's `before`), not by
        // what the model last read: the session has seen the file as it is now.
        for f in &plan.files {
            files.saw(&f.rel, r.workspace.fs.stamp(&f.rel).ok().flatten());
        }
        let scope = CommitScope {
            workspace: r.workspace.clone(),
            session_id: r.session_id.to_string(),
            turn_id: turn,
            call_id: format!("{REVIEW_CALL}{}", flip.iter().map(|h| h.id.to_string()).collect::<Vec<_>>().join(",")),
            files: Some(files.clone()),
            writes: Arc::default(),
        };
        changes.extend(commit(&plan, scope).await?);
    }
    let state = match decision {
        ReviewDecision::Keep => "kept",
        ReviewDecision::Reject => "rejected",
        ReviewDecision::Unreject => "pending",
    };
    let ids: Vec<i64> = chosen.iter().map(|h| h.id).collect();
    r.store.set_hunk_states(&ids, state, now_ms).map_err(store_err)?;
    let review = turn(r, Some(&first_turn))?;
    Ok(Decided { hunks: chosen, changes, review })
}

/// The audit payload of one decision: the hunk's file, range, the hash of its text, the decision
/// and who made it.
pub fn audit_payload(h: &HunkRow, decision: ReviewDecision, who: &str) -> serde_json::Value {
    let mut text = Vec::new();
    for line in lines::split(h.old_text.as_bytes()) {
        text.push(b'-');
        text.extend_from_slice(line);
    }
    for line in lines::split(h.new_text.as_bytes()) {
        text.push(b'+');
        text.extend_from_slice(line);
    }
    serde_json::json!({
        "hunk": h.id.to_string(),
        "path": h.path,
        "range": {"start": h.agent_start + 1, "lines": h.agent_lines},
        "hash": super::content_hash(Some(&text)),
        "decision": decision.as_str(),
        "who": who,
    })
}

/// Hunks grouped by file, in path order.
fn by_file(rows: &[HunkRow]) -> BTreeMap<Vec<u8>, Vec<&HunkRow>> {
    let mut out: BTreeMap<Vec<u8>, Vec<&HunkRow>> = BTreeMap::new();
    for h in rows {
        out.entry(h.name.clone()).or_default().push(h);
    }
    out
}

fn shown(h: &HunkRow, state: HunkState) -> Hunk {
    let kind = match h.kind.as_str() {
        "created" => HunkKind::Created,
        "deleted" => HunkKind::Deleted,
        "binary" => HunkKind::Binary,
        "mode" => HunkKind::Mode,
        _ => HunkKind::Text,
    };
    Hunk {
        id: h.id.to_string(),
        turn_id: h.turn_id.clone(),
        path: h.path.clone(),
        kind,
        range: LineRange { start: h.agent_start + 1, lines: h.agent_lines },
        base_range: LineRange { start: h.base_start + 1, lines: h.base_lines },
        state,
        old_text: h.old_text.clone(),
        new_text: h.new_text.clone(),
        call: HunkCall { call_id: h.call_id.clone(), tool: h.tool.clone(), command: h.command.clone() },
    }
}

/// One file of a turn as it stands: what the turn left (`agent`), and what it holds now.
struct File {
    rel: PathBuf,
    path: String,
    agent: Option<Vec<u8>>,
    base: Option<Vec<u8>>,
    now: Option<Vec<u8>>,
}

impl File {
    fn load(r: Reviewer<'_>, h: &HunkRow) -> Result<File, ReviewError> {
        let rel = PathBuf::from(<std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(&h.name));
        let (base, agent) = made::sides(r, &h.turn_id, &h.name)?;
        let now = r.workspace.fs.read_if_exists(&rel).map_err(|e| ReviewError::Read(e.to_string()))?;
        Ok(File { rel, path: h.path.clone(), agent, base, now })
    }

    /// What Bridle last left here, for a whole-file hunk in `state`.
    fn whole(&self, rejected: bool) -> Option<&[u8]> {
        if rejected {
            self.base.as_deref()
        } else {
            self.agent.as_deref()
        }
    }

    fn placed<'a>(&self, file: &[&'a HunkRow]) -> Vec<lines::Placed<'a>> {
        file.iter()
            .map(|h| lines::Placed {
                agent_start: h.agent_start as usize,
                agent_lines: h.agent_lines as usize,
                old_text: h.old_text.as_bytes(),
                new_text: h.new_text.as_bytes(),
                rejected: h.state == "rejected",
            })
            .collect()
    }

    /// Each hunk's state now (a pending one touched since is a conflict).
    fn states(&self, file: &[&HunkRow]) -> Vec<HunkState> {
        let decided = |h: &HunkRow| match h.state.as_str() {
            "kept" => Some(HunkState::Kept),
            "rejected" => Some(HunkState::Rejected),
            _ => None,
        };
        if file.iter().all(|h| decided(h).is_some()) {
            return file.iter().filter_map(|h| decided(h)).collect();
        }
        let touched: Vec<bool> = match (file[0].kind.as_str(), &self.agent, &self.now) {
            ("text", Some(agent), Some(now)) => {
                let placed = self.placed(file);
                let (reference, spans) = lines::reference(agent, &placed);
                let since = lines::Since::of(&reference, &lines::split(now));
                spans.into_iter().map(|s| since.touched(s)).collect()
            }
            ("text", _, _) => vec![true; file.len()],
            _ => file.iter().map(|h| self.whole(h.state == "rejected") != self.now.as_deref()).collect(),
        };
        file.iter()
            .zip(touched)
            .map(|(h, t)| decided(h).unwrap_or(if t { HunkState::Conflict } else { HunkState::Pending }))
            .collect()
    }

    /// The file's content once `flipped` (some of `file`) are rejected or unrejected, or why not.
    fn flipped(
        &self,
        file: &[&HunkRow],
        flipped: &[&HunkRow],
        decision: ReviewDecision,
    ) -> Result<Option<Vec<u8>>, String> {
        let reject = decision == ReviewDecision::Reject;
        let kind = file[0].kind.as_str();
        let changed_since = |what: &str| format!("`{}` {what} since the turn", self.path);
        match kind {
            "mode" => Err(format!(
                "`{}`: a permission change is not rejected hunk by hunk; undo the turn's file instead",
                self.path
            )),
            "text" => {
                let (Some(agent), Some(now)) = (&self.agent, &self.now) else {
                    return Err(changed_since("was deleted or replaced"));
                };
                let placed = self.placed(file);
                let (reference, spans) = lines::reference(agent, &placed);
                let now_lines = lines::split(now);
                let since = lines::Since::of(&reference, &now_lines);
                let flips: Vec<((usize, usize), &[u8])> = file
                    .iter()
                    .zip(&spans)
                    .filter(|(h, _)| flipped.iter().any(|f| f.id == h.id))
                    .map(|(h, span)| (*span, if reject { h.old_text.as_bytes() } else { h.new_text.as_bytes() }))
                    .collect();
                lines::flip(&now_lines, &since, &flips).map(Some).map_err(|spans| {
                    let shown: Vec<String> = spans
                        .iter()
                        .map(|(s, l)| match l {
                            0 => format!("the place after line {s}"),
                            1 => format!("line {}", s + 1),
                            l => format!("lines {}-{}", s + 1, s + l),
                        })
                        .collect();
                    changed_since(&format!("{} changed", shown.join(", ")))
                })
            }
            _ => {
                let rejected = file[0].state == "rejected";
                if self.whole(rejected) != self.now.as_deref() {
                    return Err(changed_since("changed"));
                }
                Ok(self.whole(reject).map(<[u8]>::to_vec))
            }
        }
    }
}

/// Where each call of a session came from: its tool and, for `bash`, its command.
fn calls_of(store: &Store, session_id: &str) -> Result<HashMap<String, (String, Option<String>)>, ReviewError> {
    let mut out = HashMap::new();
    for (_, item) in store.history_with_turns(session_id).map_err(store_err)? {
        if let bridle_protocol::HistoryItem::Assistant { tool_calls, .. } = item {
            for call in tool_calls {
                let command = (call.name == "bash")
                    .then(|| serde_json::from_str::<serde_json::Value>(&call.arguments).ok())
                    .flatten()
                    .and_then(|v| v.get("command").and_then(|c| c.as_str()).map(str::to_string));
                out.insert(call.id, (call.name, command));
            }
        }
    }
    Ok(out)
}
