//! The workspace a session works in: its path sandbox, its confined file I/O, its path locks and
//! the OS sandbox its shell commands run in, opened once and shared by every tool call.

use std::io;
use std::path::{Path, PathBuf};

use crate::fs::WorkspaceFs;
use crate::locks::PathLocks;
use crate::sandbox::PathSandbox;
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
