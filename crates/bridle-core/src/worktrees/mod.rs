//! Git worktrees for sessions (DESIGN §16): made from the main checkout on a branch of their own,
//! put away exactly, and brought back exactly.
//!
//! Rules: a worktree is made only from the top of a main checkout, on a new branch
//! `bridle/<name>` cut from a commit named up front, and locked so no `git worktree prune` takes
//! it; the gitignored files `.worktreeinclude` names are copied in (regular files only, never
//! through a link). Archiving saves the staged, unstaged and untracked states as three commits
//! under `refs/bridle/archive/<id>` (reachable, so `git gc` keeps them) before anything is
//! removed; restoring refuses when the branch moved since, and brings back the same three states
//! byte for byte. Bridle's own git never runs a hook or a configured command (`git.rs`).

mod git;
pub mod handoff;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};

pub use git::GitError;
use git::{paths, Git};

/// What went wrong with a worktree.
#[derive(Debug, thiserror::Error)]
pub enum WorktreeError {
    /// Git refused.
    #[error(transparent)]
    Git(#[from] GitError),
    /// The folder is not the top of a git checkout.
    #[error("`{0}` is not the top folder of a git checkout")]
    NotACheckout(PathBuf),
    /// The name cannot make a branch.
    #[error("`{0}` cannot name a worktree: use letters, digits, `.`, `_` and `-`, not starting with `.` or `-`")]
    BadName(String),
    /// Something is already where the worktree would go.
    #[error("`{0}` already exists")]
    Exists(PathBuf),
    /// The branch moved since the worktree was archived.
    #[error("the branch `{branch}` is at {now}, not at {archived} where it was archived; nothing was restored")]
    BranchMoved {
        /// The branch.
        branch: String,
        /// Its commit when archived.
        archived: String,
        /// Its commit now.
        now: String,
    },
    /// A file could not be copied or removed.
    #[error("{path}: {error}")]
    Io {
        /// The path.
        path: PathBuf,
        /// What the system said.
        error: std::io::Error,
    },
}

/// A worktree Bridle made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Worktree {
    /// Its folder.
    pub path: PathBuf,
    /// The main checkout it was made from.
    pub origin: PathBuf,
    /// Its branch (`bridle/<name>`).
    pub branch: String,
    /// The commit it was cut from.
    pub base: String,
    /// The gitignored files copied in from the main checkout (relative paths).
    pub included: Vec<PathBuf>,
    /// The repository's common git folder (the main checkout's `.git`).
    pub common_dir: PathBuf,
    /// The worktree's own admin folder in it (`.git/worktrees/<name>`).
    pub admin_dir: PathBuf,
}

impl Worktree {
    /// The paths outside the worktree that a commit in it writes (DESIGN §16): the objects, the
    /// refs and ref logs of Bridle's branches, and its own admin folder. Never the common
    /// `config`, `hooks/`, or the refs of the user's own branches.
    pub fn git_writable(&self) -> Vec<PathBuf> {
        let common = &self.common_dir;
        vec![
            common.join("objects"),
            common.join("refs/heads/bridle"),
            common.join("logs/refs/heads/bridle"),
            self.admin_dir.clone(),
        ]
    }
}

/// A worktree put away.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Archived {
    /// The ref that holds its three states.
    pub reference: String,
    /// Its branch.
    pub branch: String,
    /// The branch's commit when it was archived.
    pub head: String,
}

/// The ref an archive of `id` is kept under.
pub fn archive_ref(id: &str) -> String {
    format!("refs/bridle/archive/{id}")
}

/// Makes a worktree of the main checkout `origin` at `path` (which must not exist), on the new
/// branch `bridle/<name>` cut from `base` (a commit-ish; the checkout's HEAD when `None`), and
/// copies in the gitignored files `.worktreeinclude` names.
pub fn create(origin: &Path, path: &Path, name: &str, base: Option<&str>) -> Result<Worktree, WorktreeError> {
    let origin = top_of(origin)?;
    check_name(name)?;
    if path.symlink_metadata().is_ok() {
        return Err(WorktreeError::Exists(path.to_path_buf()));
    }
    // `git worktree add` makes the folders on the way.
    let git = Git::new(&origin);
    let base =
        git.line(["rev-parse", "--verify", "--end-of-options", &format!("{}^{{commit}}", base.unwrap_or("HEAD"))])?;
    let branch = format!("bridle/{name}");
    add(&git, path, &["-b", &branch], &base)?;
    let (common_dir, admin_dir) = git_folders(path)?;
    let included = copy_included(&origin, path)?;
    Ok(Worktree { path: path.to_path_buf(), origin, branch, base, included, common_dir, admin_dir })
}

/// The common and admin git folders of the worktree Bridle just made at `path`, read while
/// nothing else has written there; the folder for its branch's ref log made, so a commit in the
/// sandbox can log to it.
fn git_folders(path: &Path) -> Result<(PathBuf, PathBuf), WorktreeError> {
    let git = Git::new(path);
    let common = PathBuf::from(git.line(["rev-parse", "--path-format=absolute", "--git-common-dir"])?);
    let admin = PathBuf::from(git.line(["rev-parse", "--path-format=absolute", "--git-dir"])?);
    // Through the one door, beneath the common folder; one already there is left as it is.
    let fs = crate::fs::WorkspaceFs::open(&common).map_err(|e| io_error(&common, e))?;
    for folder in ["refs/heads/bridle", "logs/refs/heads/bridle"] {
        let rel = Path::new(folder);
        if fs.entry(rel).map_err(|e| io_error(&common.join(rel), e))?.is_none() {
            fs.place_folder(rel, 0o755).map_err(|e| io_error(&common.join(rel), e))?;
        }
    }
    Ok((common, admin))
}

/// Saves the worktree `w` under [`archive_ref`]`(id)` (staged, unstaged, untracked and the
/// `.worktreeinclude` files, as three commits on its HEAD), then removes its folder. The branch
/// stays.
pub fn archive(w: &Worktree, id: &str) -> Result<Archived, WorktreeError> {
    let path = w.path.as_path();
    let git = Git::in_worktree(w);
    let head = git.line(["rev-parse", "--verify", "HEAD^{commit}"])?;
    let branch = git.line(["symbolic-ref", "--short", "HEAD"])?;
    // The scratch index lives in the worktree's own admin folder, which the removal below takes.
    let scratch =
        PathBuf::from(git.line(["rev-parse", "--path-format=absolute", "--git-path", "bridle-archive-index"])?);
    let result = (|| -> Result<String, WorktreeError> {
        // Staged: the index as it is.
        let index_tree = git.line(["write-tree"])?;
        let staged = commit(&git, &index_tree, &head, &format!("bridle archive {id}: staged"))?;
        // Unstaged: the tracked files as they are on disk, in an index of Bridle's own.
        let scratch_git = Git::in_worktree(w).with_index(&scratch);
        scratch_git.run(["read-tree", &index_tree])?;
        scratch_git.run(["add", "--update", "--", ":/"])?;
        let unstaged =
            commit(&git, &scratch_git.line(["write-tree"])?, &staged, &format!("bridle archive {id}: unstaged"))?;
        // Untracked: what is not ignored, and the ignored files `.worktreeinclude` names.
        let mut untracked = paths(&git.run(["ls-files", "-z", "--others", "--exclude-standard"])?);
        untracked.extend(included(path, path)?);
        let mut list = Vec::new();
        for p in &untracked {
            use std::os::unix::ffi::OsStrExt;
            list.extend_from_slice(p.as_os_str().as_bytes());
            list.push(0);
        }
        if !list.is_empty() {
            scratch_git.run_input(["add", "--force", "--pathspec-from-file=-", "--pathspec-file-nul", "--"], &list)?;
        }
        Ok(commit(&git, &scratch_git.line(["write-tree"])?, &unstaged, &format!("bridle archive {id}: untracked"))?)
    })();
    let all = result?;
    let reference = archive_ref(id);
    git.run(["update-ref", "-m", "bridle archive", &reference, &all])?;
    // Removed from the main checkout, which names the worktree by the folder Bridle recorded.
    let main = Git::new(&w.origin);
    let _ = main.run([std::ffi::OsStr::new("worktree"), "unlock".as_ref(), path.as_os_str()]);
    main.run([std::ffi::OsStr::new("worktree"), "remove".as_ref(), "--force".as_ref(), path.as_os_str()])?;
    Ok(Archived { reference, branch, head })
}

/// Archives the worktree `w` whose folder is gone (removed by hand): nothing of its files is
/// left to save, so its archive is its branch as committed (three commits with the branch's
/// tree), and git forgets the folder. [`restore`] then checks the branch out again.
pub fn archive_gone(w: &Worktree, id: &str) -> Result<Archived, WorktreeError> {
    if w.path.symlink_metadata().is_ok() {
        return Err(WorktreeError::Exists(w.path.clone()));
    }
    let main = Git::new(&w.origin);
    let head = main.line(["rev-parse", "--verify", &format!("refs/heads/{}^{{commit}}", w.branch)])?;
    let tree = main.line(["rev-parse", "--verify", &format!("{head}^{{tree}}")])?;
    let mut top = head.clone();
    for state in ["staged", "unstaged", "untracked"] {
        top = commit(&main, &tree, &top, &format!("bridle archive {id}: {state} (the folder was gone)"))?;
    }
    let reference = archive_ref(id);
    main.run(["update-ref", "-m", "bridle archive", &reference, &top])?;
    // Its admin folder alone goes (`git worktree prune` would take the user's stale ones too),
    // through the one door, beneath the common folder's `worktrees/`.
    let admins = w.common_dir.join("worktrees");
    if let (Some(name), true) = (w.admin_dir.file_name(), w.admin_dir.parent() == Some(admins.as_path())) {
        let fs = crate::fs::WorkspaceFs::open(&admins).map_err(|e| io_error(&admins, e))?;
        fs.remove_any(Path::new(name)).map_err(|e| io_error(&w.admin_dir, e))?;
    }
    Ok(Archived { reference, branch: w.branch.clone(), head })
}

/// Brings back the worktree `w` archived as `archived`, at its folder: its branch checked out
/// there, then the untracked, unstaged and staged states as they were. The archive's ref is
/// dropped once everything is back. Returns the worktree with its git folders as git made them
/// this time.
pub fn restore(w: &Worktree, archived: &Archived) -> Result<Worktree, WorktreeError> {
    let origin = top_of(&w.origin)?;
    let path = w.path.as_path();
    if path.symlink_metadata().is_ok() {
        return Err(WorktreeError::Exists(path.to_path_buf()));
    }
    let git = Git::new(&origin);
    let all = git.line(["rev-parse", "--verify", &format!("{}^{{commit}}", archived.reference)])?;
    let now = git.line(["rev-parse", "--verify", &format!("refs/heads/{}^{{commit}}", archived.branch)])?;
    if now != archived.head {
        return Err(WorktreeError::BranchMoved {
            branch: archived.branch.clone(),
            archived: archived.head.clone(),
            now,
        });
    }
    let staged = git.line(["rev-parse", "--verify", &format!("{all}~2")])?;
    add(&git, path, &[], &archived.branch)?;
    let (common_dir, admin_dir) = git_folders(path)?;
    let restored = Worktree { common_dir, admin_dir, ..w.clone() };
    let here = Git::in_worktree(&restored);
    // The files as they were on disk (a two-tree switch from the clean checkout: what the
    // archive lacks is removed), then the index as it was.
    here.run(["read-tree", "-m", "-u", &archived.head, &all])?;
    here.run(["read-tree", &staged])?;
    here.run(["update-index", "-q", "--refresh"]).ok();
    git.run(["update-ref", "-d", &archived.reference])?;
    Ok(restored)
}

/// `git worktree add` of `what` (a commit or a branch) at `path`, locked as a Bridle session's;
/// `options` go before the path.
fn add(git: &Git, path: &Path, options: &[&str], what: &str) -> Result<(), GitError> {
    let mut args: Vec<&std::ffi::OsStr> = ["worktree", "add", "--lock", "--reason", "a Bridle session"]
        .iter()
        .chain(options)
        .map(std::ffi::OsStr::new)
        .collect();
    args.extend([path.as_os_str(), std::ffi::OsStr::new(what)]);
    git.run(args).map(|_| ())
}

/// Bytes read of `.git/HEAD` or of a worktree's `.git` file: each is one short line.
const GIT_PROBE_LIMIT: u64 = 4096;

/// The branch the checkout at `workspace` is on (`detached at <short hash>` when on none), from
/// `.git/HEAD` (a worktree's `.git` file followed); `None` when it is no checkout. No git runs:
/// both files are read through `fs/` (beneath the folder, a worktree's git folder by its name,
/// no final link followed), regular files only, never waiting and never past
/// [`GIT_PROBE_LIMIT`], so a `.git` FIFO or a `HEAD` linked to a device is "no repository".
pub fn head(workspace: &Path) -> Option<String> {
    let fs = crate::fs::WorkspaceFs::open(workspace).ok()?;
    let head = match fs.entry(Path::new(".git")).ok()?? {
        crate::fs::Entry::Folder { .. } => fs.read_at_most(Path::new(".git/HEAD"), GIT_PROBE_LIMIT).ok()??,
        crate::fs::Entry::File { .. } => {
            let text = fs.read_at_most(Path::new(".git"), GIT_PROBE_LIMIT).ok()??;
            let text = String::from_utf8_lossy(&text);
            let dir = text.trim().strip_prefix("gitdir:")?;
            crate::fs::read_named(&workspace.join(dir.trim()).join("HEAD"), GIT_PROBE_LIMIT).ok()?
        }
        _ => return None,
    };
    let head = String::from_utf8_lossy(&head);
    let head = head.trim();
    Some(match head.strip_prefix("ref: refs/heads/") {
        Some(branch) => branch.to_string(),
        // By characters: the file is anyone's text, and a cut inside a character would panic.
        None => format!("detached at {}", head.chars().take(12).collect::<String>()),
    })
}

/// The canonical top folder of the checkout at `dir`, or why it is not one.
fn top_of(dir: &Path) -> Result<PathBuf, WorktreeError> {
    let canonical = dir.canonicalize().map_err(|error| WorktreeError::Io { path: dir.to_path_buf(), error })?;
    let top = Git::new(&canonical)
        .line(["rev-parse", "--show-toplevel"])
        .map_err(|_| WorktreeError::NotACheckout(canonical.clone()))?;
    if Path::new(&top) != canonical {
        return Err(WorktreeError::NotACheckout(canonical));
    }
    Ok(canonical)
}

fn check_name(name: &str) -> Result<(), WorktreeError> {
    let fine = !name.is_empty()
        && name.len() <= 100
        && !name.starts_with(['.', '-'])
        && !name.ends_with(".lock")
        && !name.contains("..")
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if fine {
        Ok(())
    } else {
        Err(WorktreeError::BadName(name.to_string()))
    }
}

fn commit(git: &Git, tree: &str, parent: &str, message: &str) -> Result<String, GitError> {
    git.line(["commit-tree", tree, "-p", parent, "-m", message])
}

/// The most bytes of one included file copied: a larger one is left out.
const INCLUDE_LIMIT: u64 = 64 * 1024 * 1024;

fn io_error(path: &Path, e: impl std::fmt::Display) -> WorktreeError {
    WorktreeError::Io { path: path.to_path_buf(), error: std::io::Error::other(e.to_string()) }
}

/// The untracked, gitignored files of the checkout at `checkout` that the `.worktreeinclude` at
/// the top of `rules_from` names (gitignore patterns), relative to `checkout`: the untracked
/// files the patterns name, then of those the ones git ignores (asked of the few named, not by a
/// second walk of the whole checkout).
fn included(checkout: &Path, rules_from: &Path) -> Result<Vec<PathBuf>, WorktreeError> {
    let rules = rules_from.join(".worktreeinclude");
    if !rules.symlink_metadata().is_ok_and(|m| m.is_file()) {
        return Ok(Vec::new());
    }
    let git = Git::new(checkout);
    let named = git.run([
        std::ffi::OsStr::new("ls-files"),
        "-z".as_ref(),
        "--others".as_ref(),
        "--ignored".as_ref(),
        "--exclude-from".as_ref(),
        rules.as_os_str(),
    ])?;
    if named.is_empty() {
        return Ok(Vec::new());
    }
    // `check-ignore` answers 1 when it names none.
    match git.run_input(["check-ignore", "-z", "--stdin"], &named) {
        Ok(ignored) => Ok(paths(&ignored)),
        Err(e) if e.said.ends_with("exit status: 1") => Ok(Vec::new()),
        Err(e) => Err(e.into()),
    }
}

/// Copies the included files of `origin` into the worktree at `path` through the one door
/// ([`crate::fs`]: regular files only, no link followed on the way, at most [`INCLUDE_LIMIT`]
/// bytes each), with their permissions; what is listed is what was copied.
fn copy_included(origin: &Path, path: &Path) -> Result<Vec<PathBuf>, WorktreeError> {
    let from = crate::fs::WorkspaceFs::open(origin).map_err(|e| io_error(origin, e))?;
    let to = crate::fs::WorkspaceFs::open(path).map_err(|e| io_error(path, e))?;
    let mut copied = Vec::new();
    for rel in included(origin, origin)? {
        let Ok(Some(bytes)) = from.read_at_most(&rel, INCLUDE_LIMIT) else { continue };
        let mode = from.mode(&rel).ok().flatten().map(|m| m & 0o777);
        to.write_atomic_with_mode(&rel, &bytes, mode).map_err(|e| io_error(&path.join(&rel), e))?;
        copied.push(rel);
    }
    Ok(copied)
}
