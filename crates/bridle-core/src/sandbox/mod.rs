//! The path sandbox: which paths the file tools may touch, decided on the resolved path.
//!
//! Rules kept here, whatever the mode: a path is judged after `~` expansion, lexical `..`
//! handling and symlink resolution (a new file through its nearest existing ancestor); it must be
//! the workspace root or lie beneath `root + separator`; sensitive paths (credentials, Bridle's
//! own data) are refused even inside the workspace; `.git/` internals are read-only; the one
//! exception to the boundary is reading the session's own tool-output folder. Every write Bridle
//! makes for the user (a tool's commit, an undo) is judged again when it is made, on the path as
//! it resolves then ([`PathSandbox::judge_write`]): a path with a symlink on its way is refused by
//! name, since it would land elsewhere than the path named (a folder swapped for a link to
//! `.git/`). This check is the first line; the second is that every open happens beneath a
//! handle on the root, and no write follows a symlinked folder
//! ([`WorkspaceFs`](crate::fs::WorkspaceFs)), so a symlink swapped in after the check still
//! cannot lead outside or into `.git/`.

mod resolve;
mod sensitive;

use std::path::{Path, PathBuf};

use bridle_protocol::Severity;

pub use resolve::lexical_normalise;
pub(crate) use sensitive::SECRET_NAMES;

/// What a tool wants to do with a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Read a file or list a directory.
    Read,
    /// Create, change or delete.
    Write,
}

/// Where a resolved path lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// Inside the workspace; the path relative to the root (empty for the root itself).
    Workspace(PathBuf),
    /// Inside this session's tool-output folder (read-only); the path relative to that folder.
    ToolOutput(PathBuf),
}

/// Where a path leads, as [`PathSandbox::classify`] sees it: for judging paths written inside
/// shell commands, which the sandbox does not confine but the guard must weigh.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathClass {
    /// Inside the workspace; the path relative to the root (empty for the root itself).
    Inside(PathBuf),
    /// Outside the workspace; the absolute path with symlinks resolved.
    Outside(PathBuf),
    /// A protected path; what it protects.
    Sensitive(String),
}

/// A path the sandbox accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// The absolute path with symlinks resolved.
    pub absolute: PathBuf,
    /// Where it is.
    pub place: Place,
}

impl Resolved {
    /// The workspace-relative POSIX path (or the absolute path for tool outputs), for messages.
    pub fn display(&self) -> String {
        match &self.place {
            Place::Workspace(rel) if rel.as_os_str().is_empty() => ".".into(),
            Place::Workspace(rel) => rel.to_string_lossy().into_owned(),
            Place::ToolOutput(_) => self.absolute.to_string_lossy().into_owned(),
        }
    }
}

/// Why a path was refused; the message is written for the model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SandboxError {
    /// An empty path.
    #[error("the path is empty")]
    Empty,
    /// A NUL byte in the path.
    #[error("the path contains a NUL byte")]
    NulByte,
    /// The resolved path is outside the workspace.
    #[error("`{given}` resolves to {resolved}, which is outside the workspace {root}; file tools only work inside the workspace")]
    Outside {
        /// The path as given.
        given: String,
        /// Where it led.
        resolved: String,
        /// The workspace root.
        root: String,
    },
    /// A protected path.
    #[error("`{given}` is a protected path ({why}); Bridle never reads or writes it")]
    Sensitive {
        /// The path as given.
        given: String,
        /// What it protects.
        why: String,
    },
    /// A write inside `.git/`.
    #[error("`{given}` is inside .git/, whose internals are read-only to file tools; use git commands instead")]
    GitInternals {
        /// The path as given.
        given: String,
    },
    /// A write whose path has a symlink on its way (a folder swapped for a link since the change
    /// was made): it would land elsewhere than the path named.
    #[error("`{given}` now leads to `{leads_to}` through a symlink; Bridle writes only to the path it names, never through a symlinked folder")]
    ThroughSymlink {
        /// The path as given.
        given: String,
        /// Where it leads now (workspace-relative, or absolute when outside).
        leads_to: String,
    },
    /// A write into the tool-output folder.
    #[error("`{given}` is a saved tool output, which is read-only")]
    ToolOutputReadOnly {
        /// The path as given.
        given: String,
    },
    /// The file system refused to resolve the path.
    #[error("cannot resolve `{given}`: {message}")]
    Unresolvable {
        /// The path as given.
        given: String,
        /// The OS error.
        message: String,
    },
}

impl SandboxError {
    /// The rule id and severity of the finding this refusal becomes.
    pub fn rule(&self) -> (&'static str, Severity) {
        match self {
            SandboxError::Sensitive { .. } => ("sensitive-path", Severity::Critical),
            SandboxError::Outside { .. } => ("outside-workspace", Severity::High),
            SandboxError::GitInternals { .. } => ("git-internals", Severity::High),
            SandboxError::ThroughSymlink { .. } => ("symlinked-path", Severity::High),
            SandboxError::ToolOutputReadOnly { .. } => ("tool-output-read-only", Severity::High),
            SandboxError::Empty | SandboxError::NulByte | SandboxError::Unresolvable { .. } => {
                ("invalid-path", Severity::High)
            }
        }
    }
}

/// Whether the canonical `folder` is (or lies in) a session's worktree in the canonical
/// `data_dir`: `<data-dir>/worktrees/<id>` (DESIGN §16), the one place of the data dir a session
/// may work in.
pub fn is_session_worktree(folder: &Path, data_dir: &Path) -> bool {
    folder.strip_prefix(data_dir.join("worktrees")).is_ok_and(|rest| rest.components().next().is_some())
}

/// The sandbox of one workspace.
#[derive(Debug, Clone)]
pub struct PathSandbox {
    root: PathBuf,
    home: Option<PathBuf>,
    tool_output_root: PathBuf,
    /// `tool_output_root` with symlinks resolved, once (for [`Self::classify`]).
    tool_output_canonical: PathBuf,
    sensitive: Vec<sensitive::Protected>,
}

impl PathSandbox {
    /// A sandbox for `workspace`. `home` expands `~`; `data_dir` is protected but for the
    /// session tool-output folders; `extra_sensitive` are the user's own protected paths.
    pub fn new(
        workspace: &Path,
        home: Option<PathBuf>,
        data_dir: &Path,
        extra_sensitive: &[PathBuf],
    ) -> std::io::Result<Self> {
        let root = workspace.canonicalize()?;
        let data_dir = resolve::canonical_or_lexical(data_dir);
        let own_worktree = is_session_worktree(&root, &data_dir).then_some(root.as_path());
        let sensitive = sensitive::protected(home.as_deref(), &data_dir, own_worktree, extra_sensitive);
        let tool_output_root = data_dir.join("tool-output");
        let tool_output_canonical = resolve::canonical_or_lexical(&tool_output_root);
        Ok(Self { root, home, tool_output_root, tool_output_canonical, sensitive })
    }

    /// The workspace root (canonical).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The home folder `~` expands to, when known.
    pub fn home(&self) -> Option<&Path> {
        self.home.as_deref()
    }

    /// Where `given` leads (`~` expanded, relative paths joined to the root, symlinks resolved
    /// through the longest existing prefix), without refusing anything: the same judgement as
    /// [`Self::resolve`] on sensitivity and the boundary, for paths inside shell commands.
    /// Every session's tool-output folder counts as not sensitive (a shell command cannot say
    /// which session it belongs to); `.git/` internals are inside.
    ///
    /// It runs on every path of every shell command, so it is cheap: beneath the root (which is
    /// canonical) it `lstat`s each component until one is missing and resolves symlinks only
    /// when it meets one.
    pub fn classify(&self, given: &str) -> PathClass {
        let expanded = resolve::expand_home(given, self.home.as_deref());
        let joined = if expanded.is_absolute() { expanded } else { self.root.join(expanded) };
        let lexical = lexical_normalise(&joined);
        let absolute = match self.without_symlinks_below_root(&lexical) {
            true => lexical.clone(),
            false => resolve::resolve_existing_prefix(&joined).unwrap_or_else(|_| lexical.clone()),
        };
        let outputs = |p: &Path| p.starts_with(&self.tool_output_root) || p.starts_with(&self.tool_output_canonical);
        let candidates: &[&PathBuf] = if absolute == lexical { &[&lexical] } else { &[&lexical, &absolute] };
        for candidate in candidates {
            if outputs(candidate) {
                continue;
            }
            // The exemption is applied just above, so the list is asked with an "own outputs"
            // folder that names nothing (a NUL byte cannot be in a path) and costs no syscall.
            if let Some(why) = sensitive::matches(&self.sensitive, candidate, Path::new("/\0")) {
                return PathClass::Sensitive(why);
            }
        }
        match absolute.strip_prefix(&self.root) {
            Ok(rel) => PathClass::Inside(rel.to_path_buf()),
            Err(_) => PathClass::Outside(absolute),
        }
    }

    /// Judges a write Bridle makes for the user to the workspace path `rel` (a tool's commit, an
    /// undo), as the path resolves now: refused when a name on its way, the last included, is a
    /// symlink ([`SandboxError::ThroughSymlink`]), and otherwise judged as a file tool's write
    /// ([`Self::resolve`] with [`Access::Write`]: outside, protected, `.git/` internals).
    pub fn judge_write(&self, rel: &Path, session_id: &str) -> Result<(), SandboxError> {
        let posix = |p: &Path| p.to_string_lossy().replace('\\', "/");
        let given = posix(rel);
        let lexical = lexical_normalise(&self.root.join(rel));
        // A path that leaves the root lexically is [`Self::resolve`]'s to refuse, as outside.
        if lexical.starts_with(&self.root) && !self.without_symlinks_below_root(&lexical) {
            let leads_to = resolve::resolve_existing_prefix(&lexical).unwrap_or_else(|_| lexical.clone());
            let leads_to = match leads_to.strip_prefix(&self.root) {
                Ok(inside) => posix(inside),
                Err(_) => leads_to.display().to_string(),
            };
            return Err(SandboxError::ThroughSymlink { given, leads_to });
        }
        self.resolve(&given, Access::Write, session_id).map(|_| ())
    }

    /// True when `lexical` is beneath the root and none of its existing components below the
    /// root is a symlink (so it resolves to itself).
    /// Whether a command's git data may land at `rel` (below `.git/`, which file tools may not
    /// write): inside the workspace, with no folder on its way a symlink. Only the landing of a
    /// captured command's changes asks this (DESIGN §4.3).
    pub fn judge_git_data(&self, rel: &Path) -> Result<(), SandboxError> {
        let posix = |p: &Path| p.to_string_lossy().replace('\\', "/");
        let lexical = lexical_normalise(&self.root.join(rel));
        let folder = lexical.parent().unwrap_or(&lexical);
        if !lexical.starts_with(self.root.join(".git")) || !self.without_symlinks_below_root(folder) {
            let leads_to = resolve::resolve_existing_prefix(&lexical).unwrap_or_else(|_| lexical.clone());
            return Err(SandboxError::ThroughSymlink { given: posix(rel), leads_to: leads_to.display().to_string() });
        }
        Ok(())
    }

    fn without_symlinks_below_root(&self, lexical: &Path) -> bool {
        let Ok(rel) = lexical.strip_prefix(&self.root) else { return false };
        let mut at = self.root.clone();
        for part in rel.components() {
            at.push(part);
            match std::fs::symlink_metadata(&at) {
                Ok(meta) if meta.file_type().is_symlink() => return false,
                Ok(_) => {}
                Err(_) => return true,
            }
        }
        true
    }

    /// Every protected path (credentials, Bridle's data dir, the user's own), for the shell
    /// sandbox to mask.
    pub fn protected_paths(&self) -> Vec<PathBuf> {
        self.sensitive.iter().map(|p| p.path.clone()).collect()
    }

    /// Every protected path with what it protects, for the guard to match globs against.
    pub(crate) fn protected_with_reasons(&self) -> impl Iterator<Item = (&Path, &'static str)> {
        self.sensitive.iter().map(|p| (p.path.as_path(), p.why))
    }

    /// The folder where `session_id`'s large tool outputs are saved.
    pub fn tool_output_dir(&self, session_id: &str) -> PathBuf {
        self.tool_output_root.join(session_id)
    }

    /// Judges `given` for `access` by `session_id`'s tools.
    pub fn resolve(&self, given: &str, access: Access, session_id: &str) -> Result<Resolved, SandboxError> {
        if given.is_empty() {
            return Err(SandboxError::Empty);
        }
        if given.contains('\0') {
            return Err(SandboxError::NulByte);
        }
        let expanded = resolve::expand_home(given, self.home.as_deref());
        let joined = if expanded.is_absolute() { expanded } else { self.root.join(expanded) };
        let lexical = lexical_normalise(&joined);
        let absolute = resolve::resolve_existing_prefix(&joined)
            .map_err(|e| SandboxError::Unresolvable { given: given.to_string(), message: e.to_string() })?;
        // Judge both the path as written and where it leads: `~/.ssh` is protected even when the
        // workspace is the home folder, and a link to it is protected too.
        for candidate in [&lexical, &absolute] {
            if let Some(why) = sensitive::matches(&self.sensitive, candidate, &self.tool_output_dir(session_id)) {
                return Err(SandboxError::Sensitive { given: given.to_string(), why });
            }
        }
        let own_outputs = resolve::canonical_or_lexical(&self.tool_output_dir(session_id));
        if let Ok(rel) = absolute.strip_prefix(&own_outputs) {
            if access == Access::Write {
                return Err(SandboxError::ToolOutputReadOnly { given: given.to_string() });
            }
            return Ok(Resolved { place: Place::ToolOutput(rel.to_path_buf()), absolute });
        }
        // Component-wise: `/project-evil` does not start with `/project`.
        let Ok(rel) = absolute.strip_prefix(&self.root) else {
            return Err(SandboxError::Outside {
                given: given.to_string(),
                resolved: absolute.display().to_string(),
                root: self.root.display().to_string(),
            });
        };
        if access == Access::Write && rel.components().any(|c| c.as_os_str() == ".git") {
            return Err(SandboxError::GitInternals { given: given.to_string() });
        }
        Ok(Resolved { place: Place::Workspace(rel.to_path_buf()), absolute })
    }
}

#[cfg(test)]
mod tests;
