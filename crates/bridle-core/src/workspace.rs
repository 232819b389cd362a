//! The workspace a session works in: its path sandbox, its confined file I/O, its path locks and
//! the OS sandbox its shell commands run in, opened once and shared by every tool call.
//!
//! Rule: a workspace is a project folder ([`refusal`]): never `/`, a system folder, the home
//! folder itself, or a folder that holds Bridle's data dir or lies inside it (but a session's
//! own worktree, `<data-dir>/worktrees/<id>`). Every front end opens its workspace here, so
//! `bridle run --workspace`, ACP's `session/new` and the app refuse the same folders for the
//! same reason.

use std::io;
use std::path::{Path, PathBuf};

use crate::fs::WorkspaceFs;
use crate::locks::PathLocks;
use crate::sandbox::{is_session_worktree, PathSandbox};
use crate::shell_sandbox::ShellSandbox;

/// Sandboxes, file handle and locks of one workspace root.
#[derive(Debug)]
pub struct Workspace {
    /// Decides which paths file tools may touch.
    pub sandbox: PathSandbox,
    /// Does their I/O beneath the root.
    pub fs: WorkspaceFs,
    /// Serialises writes per path.
    pub locks: PathLocks,
    /// Confines `bash`.
    pub shell: ShellSandbox,
}

impl Workspace {
    /// Opens `root` (which must exist). `home` expands `~`; `data_dir` is Bridle's own (protected
    /// but for tool outputs); `extra_sensitive` are the user's protected paths. Shell commands
    /// run unconfined until [`Self::with_shell`] says otherwise (the result says so).
    pub fn open(root: &Path, home: Option<PathBuf>, data_dir: &Path, extra_sensitive: &[PathBuf]) -> io::Result<Self> {
        if let Some(why) = refusal(root, home.as_deref(), data_dir) {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, why));
        }
        let sandbox = PathSandbox::new(root, home, data_dir, extra_sensitive)?;
        let fs = WorkspaceFs::open(sandbox.root())?;
        let shell = ShellSandbox::unsandboxed(sandbox.root(), "no shell sandbox was set up for this workspace");
        Ok(Self { sandbox, fs, locks: PathLocks::new(), shell })
    }

    /// The same workspace with `shell` confining its commands.
    pub fn with_shell(self, shell: ShellSandbox) -> Self {
        Self { shell, ..self }
    }

    /// The canonical root.
    pub fn root(&self) -> &Path {
        self.sandbox.root()
    }
}

/// System folders that are never a workspace, nor is anything below them.
const SYSTEM_TREES: &[&str] = &["/etc", "/proc", "/sys", "/dev", "/boot", "/run"];

/// Folders that are never a workspace themselves (a project may live below them).
const SYSTEM_FOLDERS: &[&str] = &[
    "/", "/usr", "/var", "/root", "/bin", "/sbin", "/lib", "/lib64", "/opt", "/srv", "/home", "/tmp", "/mnt", "/media",
];

/// Why `folder` cannot be a workspace, or `None` when it is a project folder (DESIGN §15): `/`,
/// a system folder, the user's `home` itself, a folder that holds `data_dir` or one inside it
/// (but a session's worktree, [`is_session_worktree`]). Judged on the canonical paths (a link
/// to `/etc` is `/etc`); a folder that does not exist is left to the caller's own error.
pub fn refusal(folder: &Path, home: Option<&Path>, data_dir: &Path) -> Option<String> {
    let canonical = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let folder = folder.canonicalize().ok()?;
    let shown = folder.display();
    if SYSTEM_FOLDERS.iter().any(|s| folder == Path::new(s)) {
        return Some(format!("`{shown}` is a system folder, not a project folder"));
    }
    if SYSTEM_TREES.iter().any(|s| folder.starts_with(s)) {
        return Some(format!("`{shown}` is a system folder, not a project folder"));
    }
    if home.map(canonical).is_some_and(|h| h == folder) {
        return Some(format!("`{shown}` is the home folder itself; open a project folder inside it"));
    }
    let data = canonical(data_dir);
    if data.starts_with(&folder) {
        return Some(format!("`{shown}` holds Bridle's data dir ({})", data.display()));
    }
    if folder.starts_with(&data) && !is_session_worktree(&folder, &data) {
        return Some(format!("`{shown}` is inside Bridle's data dir ({})", data.display()));
    }
    None
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn system_folders_home_and_the_data_dir_are_refused_and_a_project_is_not() {
        let t = tempfile::tempdir().unwrap();
        let home = t.path().join("home");
        let data = home.join(".local/share/bridle");
        let project = home.join("src/app");
        std::fs::create_dir_all(&data).unwrap();
        std::fs::create_dir_all(&project).unwrap();
        for refused in
            ["/", "/etc", "/etc/ssl", "/usr", "/proc", "/proc/self", "/sys", "/dev", "/boot", "/var", "/root"]
        {
            assert!(refusal(Path::new(refused), Some(&home), &data).is_some(), "{refused}");
        }
        assert!(refusal(&home, Some(&home), &data).unwrap().contains("home folder"));
        assert!(refusal(&home.join(".local"), Some(&home), &data).unwrap().contains("holds Bridle's data dir"));
        assert!(refusal(&data, Some(&home), &data).unwrap().contains("holds"));
        std::fs::create_dir_all(data.join("mcp")).unwrap();
        assert!(refusal(&data.join("mcp"), Some(&home), &data).unwrap().contains("inside Bridle's data dir"));
        // A session's worktree is the one place of the data dir a session works in; the folder
        // that holds them is not one.
        std::fs::create_dir_all(data.join("worktrees/s1/src")).unwrap();
        assert_eq!(refusal(&data.join("worktrees/s1"), Some(&home), &data), None);
        assert_eq!(refusal(&data.join("worktrees/s1/src"), Some(&home), &data), None);
        assert!(refusal(&data.join("worktrees"), Some(&home), &data).unwrap().contains("inside Bridle's data dir"));
        assert_eq!(refusal(&project, Some(&home), &data), None);
        // A link to a system folder is that folder.
        std::os::unix::fs::symlink("/etc", home.join("etc-link")).unwrap();
        assert!(refusal(&home.join("etc-link"), Some(&home), &data).is_some());
    }
}
