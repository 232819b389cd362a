//! The one way Bridle runs `git` itself, on a repository the agent may have written into.
//!
//! Rules: no hook runs (`core.hooksPath` is `/dev/null`), no fsmonitor command, no pager, no
//! prompt, no terminal, no network transport; commits Bridle makes carry Bridle's own identity,
//! not whatever the repository's config says; a failure is an error naming the command and what
//! git said, never a silent partial result.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// A failed git command: what ran and what git said.
#[derive(Debug, thiserror::Error)]
#[error("`git {command}` failed: {said}")]
pub struct GitError {
    /// The arguments, as text.
    pub command: String,
    /// Git's own words (stderr, or how it could not start).
    pub said: String,
}

/// `git` in `dir`, hardened.
pub(super) struct Git {
    dir: PathBuf,
    index: Option<PathBuf>,
    /// A worktree's admin and common git folders, named rather than found: its `.git` file and
    /// its admin folder's `commondir` are the agent's to write, so git is not let read them.
    folders: Option<(PathBuf, PathBuf)>,
}

impl Git {
    pub(super) fn new(dir: &Path) -> Git {
        Git { dir: dir.to_path_buf(), index: None, folders: None }
    }

    /// Git in the worktree `w`, its git folders the ones recorded when Bridle made it.
    pub(super) fn in_worktree(w: &super::Worktree) -> Git {
        Git { dir: w.path.clone(), index: None, folders: Some((w.admin_dir.clone(), w.common_dir.clone())) }
    }

    /// The same, with `index` as the index file (for trees Bridle builds without touching the
    /// user's index).
    pub(super) fn with_index(self, index: &Path) -> Git {
        Git { index: Some(index.to_path_buf()), ..self }
    }

    fn command<I, S>(&self, args: I) -> (Command, String)
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let args: Vec<_> = args.into_iter().map(|a| a.as_ref().to_os_string()).collect();
        let shown = args.iter().map(|a| a.to_string_lossy()).collect::<Vec<_>>().join(" ");
        let mut command = Command::new("git");
        command
            .current_dir(&self.dir)
            .args([
                "-c",
                "core.hooksPath=/dev/null",
                "-c",
                "core.fsmonitor=false",
                "-c",
                "core.pager=cat",
                "-c",
                "protocol.allow=never",
                "-c",
                "user.name=Bridle",
                "-c",
                "user.email=bridle@localhost",
                "-c",
                "commit.gpgSign=false",
            ])
            .args(&args)
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_OPTIONAL_LOCKS", "0")
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .env_remove("GIT_INDEX_FILE")
            .env_remove("GIT_OBJECT_DIRECTORY")
            .env_remove("GIT_COMMON_DIR")
            .env_remove("GIT_ALTERNATE_OBJECT_DIRECTORIES")
            .env("GIT_AUTHOR_NAME", "Bridle")
            .env("GIT_AUTHOR_EMAIL", "bridle@localhost")
            .env("GIT_COMMITTER_NAME", "Bridle")
            .env("GIT_COMMITTER_EMAIL", "bridle@localhost")
            .stdin(Stdio::null());
        if let Some(index) = &self.index {
            command.env("GIT_INDEX_FILE", index);
        }
        if let Some((admin, common)) = &self.folders {
            command.env("GIT_DIR", admin).env("GIT_COMMON_DIR", common).env("GIT_WORK_TREE", &self.dir);
        }
        (command, shown)
    }

    /// Runs `args`; its stdout, or the error.
    pub(super) fn run<I, S>(&self, args: I) -> Result<Vec<u8>, GitError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let (mut command, shown) = self.command(args);
        let output = command.output().map_err(|e| GitError { command: shown.clone(), said: e.to_string() })?;
        ok(output, shown)
    }

    /// Runs `args` with `input` on its stdin; its stdout, or the error.
    pub(super) fn run_input<I, S>(&self, args: I, input: &[u8]) -> Result<Vec<u8>, GitError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        use std::io::Write;
        let (mut command, shown) = self.command(args);
        let failed = |e: std::io::Error| GitError { command: shown.clone(), said: e.to_string() };
        let mut child =
            command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().map_err(failed)?;
        if let Some(mut stdin) = child.stdin.take() {
            stdin.write_all(input).map_err(failed)?;
        }
        let output = child.wait_with_output().map_err(failed)?;
        ok(output, shown)
    }

    /// Runs `args`; its stdout as one trimmed line of text.
    pub(super) fn line<I, S>(&self, args: I) -> Result<String, GitError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        Ok(String::from_utf8_lossy(&self.run(args)?).trim().to_string())
    }
}

fn ok(output: Output, shown: String) -> Result<Vec<u8>, GitError> {
    if output.status.success() {
        return Ok(output.stdout);
    }
    let said = String::from_utf8_lossy(&output.stderr).trim().to_string();
    Err(GitError { command: shown, said: if said.is_empty() { format!("exit {}", output.status) } else { said } })
}

/// The NUL-separated paths git printed (`-z`).
pub(super) fn paths(out: &[u8]) -> Vec<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    out.split(|b| *b == 0).filter(|p| !p.is_empty()).map(|p| PathBuf::from(OsStr::from_bytes(p))).collect()
}
