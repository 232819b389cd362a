//! The workspace a session works in: its sandbox, its confined file I/O and its path locks,
//! opened once and shared by every tool call.

use std::io;
use std::path::{Path, PathBuf};

use crate::fs::WorkspaceFs;
use crate::locks::PathLocks;
use crate::sandbox::PathSandbox;

/// Sandbox, file handle and locks of one workspace root.
#[derive(Debug)]
pub struct Workspace {
    /// Decides which paths file tools may touch.
    pub sandbox: PathSandbox,
    /// Does their I/O beneath the root.
    pub fs: WorkspaceFs,
    /// Serialises writes per path.
    pub locks: PathLocks,
}

impl Workspace {
    /// Opens `root` (which must exist). `home` expands `~`; `data_dir` is Bridle's own (protected
    /// but for tool outputs); `extra_sensitive` are the user's protected paths.
    pub fn open(root: &Path, home: Option<PathBuf>, data_dir: &Path, extra_sensitive: &[PathBuf]) -> io::Result<Self> {
        let sandbox = PathSandbox::new(root, home, data_dir, extra_sensitive)?;
        let fs = WorkspaceFs::open(sandbox.root())?;
        Ok(Self { sandbox, fs, locks: PathLocks::new() })
    }

    /// The canonical root.
    pub fn root(&self) -> &Path {
        self.sandbox.root()
    }
}
