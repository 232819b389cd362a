//! Landing a sorted layer in the workspace: the part that needs no question at once, the held
//! part with checkpoints when the call's owner lets it.
//!
//! Rules: every path is locked (in path order) and judged again as a write on the path as it
//! resolves now; a path changed since the command started (or since it was sorted) is refused by
//! name and left as the user made it; the checkpoint of every held path (its content before, as
//! a blob, streamed) is recorded before anything is written; removals go deepest first, the
//! rest in path order; if a write fails, what was already landed is put back from the
//! checkpoint and the rows are forgotten — all of the held part or none. The disk work runs on a
//! blocking thread holding the locks.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{Free, Landing, State, Step};
use crate::changes::files::Recorded;
use crate::changes::WriteTicket;
use crate::changes::{blob_name, diff_stat, unified_diff, ChangeKind, CommitError, CommitScope, FileChange};
use crate::fs::{FsError, WorkspaceFs};

/// Text at most this large (each side) is diffed; larger content is named with its size.
const MAX_DIFFED: u64 = 1 << 20;

/// What the held part did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Landed {
    /// What changed, in path order (folders are not listed).
    pub changes: Vec<FileChange>,
    /// Paths left as they are, and why.
    pub refused: Vec<(String, String)>,
}

impl Landing {
    /// Lands the ignored paths and git's data (no checkpoint), all or none: what each step
    /// replaces is set aside first and removed only once every step is written, so a call
    /// stopped midway (its timeout, an interrupt) puts back what it wrote. What could not land is
    /// named.
    pub async fn land_free(self: &Arc<Self>, scope: &CommitScope) -> Free {
        let this = self.clone();
        let workspace = scope.workspace.clone();
        let session = scope.session_id.clone();
        let guards = workspace.locks.write_all(self.free.iter().map(|s| workspace.root().join(&s.rel))).await;
        let ticket = scope.writes.begin();
        let done = tokio::task::spawn_blocking(move || {
            // Git's summary is read before the layer's files move.
            let git = super::git::summary(&this.upper.join(".git"), &workspace.root().join(".git"), &this.git_changed);
            let mut free = Free { git, ..Free::default() };
            let steps = this.admit(this.free.iter(), &workspace, &session, &mut free.refused);
            let told = this.free_locked(&workspace.fs, steps, &ticket, &mut free);
            drop(guards);
            ticket.end(Some(told));
            free
        });
        done.await.unwrap_or_else(|e| Free {
            refused: vec![("(build output)".into(), format!("the landing was interrupted ({e})"))],
            ..Free::default()
        })
    }

    /// [`Self::land_free`]'s writes once every path is locked; what happened, for a stopped call.
    fn free_locked(&self, fs: &WorkspaceFs, steps: Vec<&Step>, ticket: &WriteTicket, free: &mut Free) -> String {
        let mut done: Vec<(&Step, Kept)> = Vec::new();
        for (step, ()) in order(steps.into_iter().map(|s| (s, ())).collect()) {
            if ticket.stopped() {
                let all = done.iter().rev().all(|(step, kept)| kept.put_back(fs, &step.rel));
                *free = Free { refused: free.refused.clone(), ..Free::default() };
                let back = if all { "put back" } else { "put back, but not all of them" };
                return format!(
                    "stopped while landing the command's ignored files and git data: the {} path(s) already written were {back}",
                    done.len()
                );
            }
            let kept = match Kept::set_aside(fs, step) {
                Ok(kept) => kept,
                Err(e) => {
                    free.refused.push((step.shown(), e.to_string()));
                    continue;
                }
            };
            match apply(fs, &self.upper, step) {
                Ok(()) => {
                    // Git's own files are summarised apart; the rest is counted as build output.
                    if !step.rel.starts_with(".git") {
                        let (files, bytes) = match step.after {
                            State::File { size, .. } => (1, size),
                            State::Link(_) => (1, 0),
                            _ if step.whole => step.inside,
                            _ => (0, 0),
                        };
                        free.files += files;
                        free.bytes += bytes;
                    }
                    done.push((step, kept));
                }
                Err(e) => {
                    kept.put_back(fs, &step.rel);
                    free.refused.push((step.shown(), e.to_string()));
                }
            }
        }
        // Every step is written: what was set aside goes.
        for (_, kept) in &done {
            if let Kept::Aside(aside) = kept {
                let _ = fs.remove_any(aside);
            }
        }
        format!("the command's ignored files and git data had landed in full ({} file(s)) when it stopped", free.files)
    }

    /// Lands the held part (the steps and git's code-running files) with checkpoints: all of it
    /// but the paths refused by name, or none.
    pub async fn land_held(self: &Arc<Self>, scope: &CommitScope) -> Result<Landed, CommitError> {
        let this = self.clone();
        let ctx = scope.clone();
        let root = scope.workspace.root();
        let guards = scope.workspace.locks.write_all(self.held().map(|s| root.join(&s.rel))).await;
        tokio::task::spawn_blocking(move || {
            let landed = this.held_locked(&ctx);
            drop(guards);
            landed
        })
        .await
        .map_err(|e| CommitError::Interrupted(e.to_string()))?
    }

    fn held_locked(&self, ctx: &CommitScope) -> Result<Landed, CommitError> {
        let fs = &ctx.workspace.fs;
        let mut landed = Landed::default();
        let mut steps = self.admit(self.held(), &ctx.workspace, &ctx.session_id, &mut landed.refused);
        // A folder refused keeps what is below it too.
        let kept: Vec<String> = landed.refused.iter().map(|(p, _)| p.clone()).collect();
        steps.retain(|s| !kept.iter().any(|k| s.shown().starts_with(&format!("{k}/"))));

        // The checkpoint first: each path's content before is safe on disk before it changes
        // (kept unsynced, then one sync for all), and its rows recorded in one transaction.
        // The layer beneath its own root, opened once for every step's hash and diff.
        let layer = WorkspaceFs::open(&self.upper).map_err(|e| e.to_string());
        let layer = layer.as_ref().map_err(String::as_str);
        let mut befores = Vec::new();
        let mut recorded = Vec::new();
        for step in &steps {
            let (before_hash, after_hash) = self.checkpoint(fs, layer, ctx, step)?;
            befores.push(before_hash.clone());
            recorded.push(Recorded {
                rel: &step.rel,
                before_hash,
                before_mode: step.before.row_mode(),
                after_hash,
                after_mode: step.after.row_mode(),
            });
        }
        let mut rows = Vec::new();
        if let Some(files) = &ctx.files {
            files.sync_kept().map_err(|e| CommitError::Keep("(checkpoints)".into(), e.to_string()))?;
            rows = files
                .record_all(&ctx.turn_id, &ctx.call_id, recorded)
                .map_err(|e| CommitError::Record("(checkpoints)".into(), e))?;
        }

        let diffs: Vec<Option<String>> = steps.iter().map(|s| diff_of(s, layer, Ok(fs))).collect();
        let mut done = Vec::new();
        for (step, before) in order(steps.iter().copied().zip(&befores).collect()) {
            if let Err(error) = apply(fs, &self.upper, step) {
                let restored = put_back(fs, ctx, &done);
                forget(ctx, &rows);
                return Err(CommitError::Write { error, restored });
            }
            done.push((step, before));
        }
        let _ = fs.sync();
        for (step, diff) in steps.iter().zip(diffs) {
            let Some(diff) = diff else { continue };
            let (added, removed) = diff_stat(&diff);
            let kind = match (&step.before, &step.after) {
                (State::Absent, _) => ChangeKind::Created,
                (_, State::Absent) => ChangeKind::Deleted,
                _ => ChangeKind::Modified,
            };
            let bytes = match step.after {
                State::File { size, .. } => size as usize,
                _ => 0,
            };
            landed.changes.push(FileChange { path: step.shown(), kind, diff, added, removed, bytes });
        }
        Ok(landed)
    }

    /// Keeps `step`'s content before as a blob; returns the blob names before and after (the
    /// after read in `layer`, or why the layer cannot be opened).
    fn checkpoint(
        &self,
        fs: &WorkspaceFs,
        layer: Side<'_>,
        ctx: &CommitScope,
        step: &Step,
    ) -> Result<(Option<String>, Option<String>), CommitError> {
        let keep_err = |e: std::io::Error| CommitError::Keep(step.shown(), e.to_string());
        let before = match (&step.before, &ctx.files) {
            (State::File { .. }, Some(files)) => {
                let file = fs.open_read(&step.rel).map_err(CommitError::Read)?;
                Some(files.keep_stream(file).map_err(keep_err)?)
            }
            (State::File { .. }, None) => {
                Some(super::super::hash_stream(fs.open_read(&step.rel).map_err(CommitError::Read)?).map_err(keep_err)?)
            }
            (State::Link(target), Some(files)) => {
                files.keep(Some(target.as_os_str().as_encoded_bytes())).map_err(keep_err)?
            }
            (State::Link(target), None) => Some(blob_name(target.as_os_str().as_encoded_bytes())),
            _ => None,
        };
        let after = match &step.after {
            State::File { .. } if !step.content => before.clone(),
            State::File { .. } => {
                let upper = layer.map_err(|e| CommitError::Keep(step.shown(), e.to_string()))?;
                let file = upper.open_read(&step.rel).map_err(CommitError::Read)?;
                // What the command left is kept too: a review makes a turn's hunks from it.
                Some(match &ctx.files {
                    Some(files) => files.keep_stream(file).map_err(keep_err)?,
                    None => super::super::hash_stream(file).map_err(keep_err)?,
                })
            }
            State::Link(target) => Some(blob_name(target.as_os_str().as_encoded_bytes())),
            _ => None,
        };
        Ok((before, after))
    }

    /// The steps that may land, every one judged before any is written (removing a folder's
    /// content changes the folder, and that is not someone else's edit); the others go to
    /// `refused` with why: the sandbox refuses the write, or the path changed meanwhile.
    fn admit<'a>(
        &self,
        steps: impl Iterator<Item = &'a Step>,
        workspace: &crate::workspace::Workspace,
        session_id: &str,
        refused: &mut Vec<(String, String)>,
    ) -> Vec<&'a Step> {
        let mut admitted = Vec::new();
        for step in steps {
            if let Err(e) = crate::changes::judge_entry(workspace, &step.rel, step.is_link(), session_id) {
                refused.push((step.shown(), e));
            } else if self.stale(&workspace.fs, step) {
                refused.push((step.shown(), CHANGED_MEANWHILE.into()));
            } else {
                admitted.push(step);
            }
        }
        admitted
    }

    /// Whether what stands at `step`'s path changed since the command started, or since it was
    /// sorted.
    fn stale(&self, fs: &WorkspaceFs, step: &Step) -> bool {
        let now = fs.changed_at(&step.rel).ok().flatten();
        now != step.changed_at || now.is_some_and(|t| t > self.started_ns)
    }
}

const CHANGED_MEANWHILE: &str =
    "changed in the workspace while the command ran (by the user or another program); that version was kept";

/// Steps (each with what goes along) in the order they are written: removals deepest first,
/// then the rest in path order.
fn order<T>(mut steps: Vec<(&Step, T)>) -> Vec<(&Step, T)> {
    steps.sort_by(|a, b| a.0.rel.cmp(&b.0.rel));
    let (mut removals, rest): (Vec<_>, Vec<_>) = steps.into_iter().partition(|(s, _)| s.after == State::Absent);
    removals.reverse();
    removals.extend(rest);
    removals
}

/// What a step without a checkpoint replaced, kept until its landing is done.
enum Kept {
    /// Nothing stood there: going back removes what the step made.
    Nothing,
    /// What stood there, set aside under this name beside it.
    Aside(PathBuf),
    /// Only the mode changes: going back sets this one.
    Mode(u32),
}

impl Kept {
    /// Keeps what `step` will replace. A folder that stays a folder is never moved (what it
    /// holds stays where it is); only its mode is kept.
    fn set_aside(fs: &WorkspaceFs, step: &Step) -> Result<Kept, FsError> {
        match (&step.before, &step.after) {
            (State::File { mode, .. }, State::File { .. }) if !step.content => Ok(Kept::Mode(*mode)),
            (State::Folder { mode }, State::Folder { .. }) => Ok(Kept::Mode(*mode)),
            (State::Absent, _) => Ok(Kept::Nothing),
            _ => Ok(fs.set_aside(&step.rel)?.map_or(Kept::Nothing, Kept::Aside)),
        }
    }

    /// Leaves `rel` as it was before its step; whether that worked.
    fn put_back(&self, fs: &WorkspaceFs, rel: &Path) -> bool {
        match self {
            Kept::Nothing => fs.remove_any(rel),
            Kept::Aside(aside) => fs.bring_back(aside, rel),
            Kept::Mode(mode) => fs.set_mode(rel, *mode),
        }
        .is_ok()
    }
}

/// Leaves `step.after` at its path.
fn apply(fs: &WorkspaceFs, upper: &Path, step: &Step) -> Result<(), FsError> {
    match &step.after {
        State::Absent => fs.remove_any(&step.rel),
        State::File { mode, .. } if !step.content => fs.set_mode(&step.rel, *mode),
        State::File { mode, .. } => fs.place_file(&step.rel, &upper.join(&step.rel), *mode),
        State::Link(target) => fs.place_link(&step.rel, target),
        State::Folder { .. } if step.whole => fs.place_tree(&step.rel, &upper.join(&step.rel)),
        State::Folder { mode } => fs.place_folder(&step.rel, *mode),
    }
}

/// Puts `done` (each step with its checkpoint's blob) back as it was; whether all of it went
/// back.
fn put_back(fs: &WorkspaceFs, ctx: &CommitScope, done: &[(&Step, &Option<String>)]) -> bool {
    let mut all = true;
    for (step, hash) in done.iter().rev() {
        let back = match (&step.before, hash, &ctx.files) {
            (State::Absent, ..) => fs.remove_any(&step.rel).is_ok(),
            (State::Folder { mode }, ..) => fs.place_folder(&step.rel, *mode).is_ok(),
            (State::Link(target), ..) => fs.place_link(&step.rel, target).is_ok(),
            (State::File { mode, .. }, Some(hash), Some(files)) => files.blob(hash).is_ok_and(|mut content| {
                fs.remove_any(&step.rel)
                    .and_then(|()| fs.write_atomic_from(&step.rel, &mut content, Some(*mode)))
                    .is_ok()
            }),
            (State::File { .. }, ..) => false,
        };
        all &= back;
    }
    all
}

fn forget(ctx: &CommitScope, rows: &[i64]) {
    if let Some(files) = &ctx.files {
        files.forget(rows);
    }
}

/// One side of a diff, opened once for all steps: the workspace or the layer, beneath its own
/// root, or why it could not be opened.
pub(super) type Side<'a> = Result<&'a WorkspaceFs, &'a str>;

/// The diff of one step for people and the model, its content before read in `workspace` and
/// after in `layer` (`None`: a folder, shown by what it holds).
pub(super) fn diff_of(step: &Step, layer: Side<'_>, workspace: Side<'_>) -> Option<String> {
    let path = step.shown();
    let folder = |s: &State| matches!(s, State::Folder { .. });
    if folder(&step.after) || (folder(&step.before) && step.after == State::Absent) {
        return None;
    }
    // Each side beneath its own root (the workspace, the layer): no link out of either is read.
    let text = |state: &State, side: Side<'_>| -> Result<Option<String>, String> {
        match state {
            State::File { size, .. } if *size <= MAX_DIFFED => {
                let fs = side.map_err(str::to_string)?;
                match fs.read_at_most(&step.rel, MAX_DIFFED) {
                    Ok(Some(bytes)) => String::from_utf8(bytes).map(Some).map_err(|_| format!("binary, {size} bytes")),
                    Ok(None) => Err("gone".into()),
                    Err(e) => Err(e.to_string()),
                }
            }
            State::File { size, .. } => Err(format!("{size} bytes, not shown")),
            State::Link(target) => Ok(Some(format!("symlink -> {}\n", target.display()))),
            _ => Ok(None),
        }
    };
    let before = text(&step.before, workspace);
    let after = if step.content { text(&step.after, layer) } else { before.clone() };
    let mut out = match (before, after) {
        (Ok(b), Ok(a)) if b == a => String::new(),
        (Ok(b), Ok(a)) => unified_diff(&step.rel, b.as_deref(), a.as_deref()),
        (b, a) => {
            let say = |s: Result<Option<String>, String>| match s {
                Ok(None) => "absent".to_string(),
                Ok(Some(_)) => "text".to_string(),
                Err(why) => why,
            };
            format!("Binary file {path} changed (before: {}; after: {})\n", say(b), say(a))
        }
    };
    let mode = |s: &State| match s {
        State::File { mode, .. } => Some(*mode),
        _ => None,
    };
    if let (Some(old), Some(new)) = (mode(&step.before), mode(&step.after)) {
        if old != new {
            if out.is_empty() {
                out = format!("--- a/{path}\n+++ b/{path}\n");
            }
            out.push_str(&format!("old mode {old:o}\nnew mode {new:o}\n"));
        }
    }
    Some(out)
}
