//! Handing a worktree's work back to the main checkout (DESIGN §16): "apply" brings its changes
//! since its base in as uncommitted changes, "merge" merges its branch.
//!
//! Rules: apply takes the worktree as it is on disk (committed, staged, unstaged and untracked
//! files alike, ignored ones left out), keeps whatever else is dirty in the main checkout, and on
//! a conflict changes nothing and names the files; merge runs only on a clean main checkout and a
//! merge that conflicts is undone, naming the files. A dry run says what would change and writes
//! nothing.

use std::path::{Path, PathBuf};

use super::git::{paths, Git, GitError};
use super::{Worktree, WorktreeError};

/// What an apply did, or would do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    /// The files it changes, relative to the checkout.
    pub files: Vec<PathBuf>,
    /// The change, as a git patch.
    pub patch: String,
}

/// Why a hand-off refused.
#[derive(Debug, thiserror::Error)]
pub enum HandoffError {
    /// Git or the files refused.
    #[error(transparent)]
    Worktree(#[from] WorktreeError),
    /// The change does not apply: these files differ where it changes them.
    #[error("the session's changes conflict with the main checkout in {}; nothing was changed", list(.0))]
    Conflict(Vec<PathBuf>),
    /// A merge needs a clean main checkout.
    #[error("the main checkout has uncommitted changes ({}); commit or stash them first, or apply instead", list(.0))]
    Dirty(Vec<PathBuf>),
}

impl From<GitError> for HandoffError {
    fn from(e: GitError) -> Self {
        HandoffError::Worktree(WorktreeError::Git(e))
    }
}

fn list(files: &[PathBuf]) -> String {
    files.iter().map(|f| format!("`{}`", f.display())).collect::<Vec<_>>().join(", ")
}

/// Brings the changes of the worktree `w` since its base into its main checkout, uncommitted;
/// with `dry_run`, only says what they are.
pub fn apply(w: &Worktree, dry_run: bool) -> Result<Applied, HandoffError> {
    let patch = changes_since(w)?;
    let files = touched(&patch);
    let origin_git = Git::new(&w.origin);
    if patch.is_empty() || dry_run {
        return Ok(Applied { files, patch: String::from_utf8_lossy(&patch).into_owned() });
    }
    // `git apply` is all or nothing: checked, then applied; a failure names its files.
    let check = origin_git.run_input(["apply", "--check", "--binary", "-"], &patch);
    if let Err(e) = check {
        return Err(HandoffError::Conflict(conflicting(&e.said, &files)));
    }
    origin_git.run_input(["apply", "--binary", "-"], &patch)?;
    Ok(Applied { files, patch: String::from_utf8_lossy(&patch).into_owned() })
}

/// Merges the worktree's `branch` into the main checkout `origin`, which must be clean; a
/// conflicting merge is undone.
pub fn merge(origin: &Path, branch: &str) -> Result<String, HandoffError> {
    let git = Git::new(origin);
    let dirty = paths(&git.run(["status", "--porcelain=v1", "-z", "--untracked-files=no"])?)
        .into_iter()
        .map(|p| PathBuf::from(p.to_string_lossy().get(3..).unwrap_or_default()))
        .collect::<Vec<_>>();
    if !dirty.is_empty() {
        return Err(HandoffError::Dirty(dirty));
    }
    match git.run(["merge", "--no-ff", "--no-edit", "-m", &format!("Merge {branch} (a Bridle session)"), "--", branch])
    {
        Ok(_) => Ok(git.line(["rev-parse", "HEAD"])?),
        Err(e) => {
            let conflicted = paths(&git.run(["diff", "-z", "--name-only", "--diff-filter=U"]).unwrap_or_default());
            let _ = git.run(["merge", "--abort"]);
            if conflicted.is_empty() {
                Err(e.into())
            } else {
                Err(HandoffError::Conflict(conflicted))
            }
        }
    }
}

/// The worktree's state on disk (tracked and untracked files, not ignored ones) against `base`,
/// as a binary patch; the worktree's own index is not touched.
fn changes_since(w: &Worktree) -> Result<Vec<u8>, HandoffError> {
    let base = w.base.as_str();
    let git = Git::in_worktree(w);
    // An index of Bridle's own in the worktree's admin folder, started from the real one's tree.
    let scratch =
        PathBuf::from(git.line(["rev-parse", "--path-format=absolute", "--git-path", "bridle-handoff-index"])?);
    let scratch_git = Git::in_worktree(w).with_index(&scratch);
    scratch_git.run(["read-tree", &git.line(["write-tree"])?])?;
    scratch_git.run(["add", "--all", "--", ":/"])?;
    let tree = scratch_git.line(["write-tree"])?;
    // Emptied rather than removed: the next hand-off starts it again, and the admin folder goes
    // with the worktree.
    scratch_git.run(["read-tree", "--empty"])?;
    Ok(git.run(["diff", "--binary", "--full-index", "--no-renames", "--no-ext-diff", "--no-textconv", base, &tree])?)
}

/// The files a patch touches (its `diff --git a/X b/X` lines).
fn touched(patch: &[u8]) -> Vec<PathBuf> {
    String::from_utf8_lossy(patch)
        .lines()
        .filter_map(|l| l.strip_prefix("diff --git a/"))
        .filter_map(|l| l.split(" b/").next())
        .map(PathBuf::from)
        .collect()
}

/// The files `git apply` named in its refusal, or every file of the patch when it named none.
fn conflicting(said: &str, files: &[PathBuf]) -> Vec<PathBuf> {
    let named: Vec<PathBuf> = files.iter().filter(|f| said.contains(&*f.to_string_lossy())).cloned().collect();
    if named.is_empty() {
        files.to_vec()
    } else {
        named
    }
}
