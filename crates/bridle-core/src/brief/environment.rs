//! Where the session works, told to the model: OS, shell, workspace, today's date, git branch
//! and changed files, and how `bash` runs.
//!
//! Rule: reading the repository never runs its code outside the sandbox. The branch comes from
//! reading `HEAD`; the changed files from `git status` run inside the session's shell sandbox,
//! because a repository's config can name programs git runs (`core.fsmonitor`, filters, hooks,
//! through a planted `commondir` too) and a list of settings to override always misses one.
//! Where commands run unsandboxed, the count is left out rather than run git there.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::shell_sandbox::{Launch, SandboxKind, ShellSandbox};

/// The git state of the workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Git {
    /// Not a git repository.
    None,
    /// On `branch` (or a detached commit), with this many changed or untracked files (`None`:
    /// git did not answer in time).
    Repo {
        /// The branch, or `detached at <short hash>`.
        branch: String,
        /// Files `git status` lists.
        changed: Option<usize>,
    },
}

/// What the environment block says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Environment {
    /// e.g. `linux (x86_64)`.
    pub os: String,
    /// The workspace root.
    pub workspace: PathBuf,
    /// Today's date, `YYYY-MM-DD` (UTC).
    pub date: String,
    /// The repository state.
    pub git: Git,
    /// How bash runs: `bwrap`, `landlock` or `none`.
    pub sandbox: String,
    /// Whether sandboxed commands have network.
    pub network: bool,
}

/// Longest `git status` may take before the count is left out.
const GIT_LIMIT: Duration = Duration::from_secs(2);

impl Environment {
    /// Reads the machine: the OS, the git state of `workspace` (its HEAD file, and `git status`
    /// in `shell`'s sandbox bounded by two seconds), today's date from `now_ms`.
    pub fn detect(workspace: &Path, now_ms: i64, shell: &ShellSandbox, network: bool) -> Environment {
        let date = chrono::DateTime::from_timestamp_millis(now_ms)
            .map(|d| d.format("%Y-%m-%d").to_string())
            .unwrap_or_else(|| "unknown".into());
        Environment {
            os: format!("{} ({})", std::env::consts::OS, std::env::consts::ARCH),
            workspace: workspace.to_path_buf(),
            date,
            git: git_state(workspace, shell),
            sandbox: shell.kind().as_str().to_string(),
            network,
        }
    }

    /// The block's lines.
    pub fn describe(&self) -> String {
        let git = match &self.git {
            Git::None => "not a git repository".to_string(),
            Git::Repo { branch, changed: Some(0) } => format!("branch {branch}, no uncommitted changes"),
            Git::Repo { branch, changed: Some(n) } => {
                format!("branch {branch}, {n} changed or untracked file{}", if *n == 1 { "" } else { "s" })
            }
            Git::Repo { branch, changed: None } => format!("branch {branch}"),
        };
        let bash = match (self.sandbox.as_str(), self.network) {
            ("none", _) => "unsandboxed: commands run as the user, with the user's access to the machine and the network"
                .to_string(),
            (kind, network) => format!(
                "sandboxed ({kind}): the workspace and /tmp are writable, the rest is read-only, credentials are hidden, {}",
                if network {
                    "and the network goes through Bridle's proxy (HTTP_PROXY is set): the hosts the user allows are reached, others are refused"
                } else {
                    "there is no network"
                }
            ),
        };
        format!(
            "- Operating system: {}\n- Shell: bash (`bash -c` in the workspace folder)\n- Workspace: {}\n\
             - Today's date: {} (UTC)\n- Git: {git}\n- Commands: {bash}\n",
            self.os,
            self.workspace.display(),
            self.date,
        )
    }
}

/// The branch ([`crate::worktrees::head`]) and the changed files.
fn git_state(workspace: &Path, shell: &ShellSandbox) -> Git {
    match crate::worktrees::head(workspace) {
        Some(branch) => Git::Repo { branch, changed: changed_files(workspace, shell) },
        None => Git::None,
    }
}

/// `git status --porcelain` line count, or `None` when git is missing, slow, or could only run
/// unsandboxed.
fn changed_files(workspace: &Path, shell: &ShellSandbox) -> Option<usize> {
    if shell.kind() == SandboxKind::None {
        return None;
    }
    let mut env = shell.inherited_environment();
    env.push(("GIT_OPTIONAL_LOCKS".into(), "0".into()));
    let launch = Launch {
        // No monitor, no submodule: a repository planted below the workspace (a gitlink with
        // its own `core.fsmonitor`) is never entered, even inside the sandbox.
        script: "exec git -c core.fsmonitor=false -c core.untrackedCache=false status --porcelain=v1 \
                 --untracked-files=normal --ignore-submodules=all",
        cwd: workspace,
        env,
        stdin: Stdio::null(),
        stdout: Stdio::piped(),
        stderr: Stdio::null(),
        network: false,
        loopback: None,
        layer: None,
    };
    let mut child = shell.spawn_blocking(launch).ok()?;
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => break,
            Ok(Some(_)) | Err(_) => return None,
            Ok(None) if started.elapsed() > GIT_LIMIT => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
        }
    }
    let mut out = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take()?, &mut out).ok()?;
    Some(out.lines().filter(|l| !l.is_empty()).count())
}
