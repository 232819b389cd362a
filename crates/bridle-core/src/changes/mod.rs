//! One path for every file change a tool makes: the tool plans, the plan is shown, the plan is
//! committed, and what was committed is a list of typed [`FileChange`]s.
//!
//! Rules: a write tool never touches the disk itself — it returns a [`ChangePlan`] (each file's
//! content before and after), which is the approval preview and part of the call hash;
//! [`commit`] is the only code that writes for a tool: it refuses a file changed on disk since
//! the session read it, keeps the content before as a checkpoint blob, writes atomically (all
//! files or none) and returns the `FileChange`s that events, the audit, the loop guard, the
//! Changes view and undo all read.
//!
//! It stands below the tools and names none of their types: a commit is given a [`CommitScope`]
//! and fails with a [`CommitError`]; the diffs everyone shows are rendered here ([`unified_diff`]).

mod blobs;
mod commit;
mod diff;
mod files;
mod land;
mod layer;
mod review;
mod scan;
mod stop;
mod undo;
mod watch;

use std::path::PathBuf;

use sha2::{Digest, Sha256};

pub use blobs::BlobStore;
pub use bridle_protocol::ChangeKind;
pub use commit::{commit, CommitError, CommitScope};
pub use diff::{diff_stat, shown, text_before, unified_diff};
pub use files::NotFresh;
pub use files::SessionFiles;
pub use land::{Free, Held, Landed, Landing, State, Step};
pub use layer::{read_layer, Effect, EffectKind, LayerRead, Refusal};
pub use review::{audit_payload, decide, rejection_note, turn as review_turn, Decided, ReviewError, Reviewer};
pub use scan::{Scan, ScannedChange};
pub use stop::{CallWrites, WriteTicket};
pub use undo::{delete_session, undo, undo_stored, Refused, UndoReport};
pub use watch::{watch, WorkspaceWatch};

/// One file of a plan: its workspace-relative path and its content before and after (`None`:
/// absent — created when `before` is `None`, deleted when `after` is).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedFile {
    /// Workspace-relative path.
    pub rel: PathBuf,
    /// The content when planned.
    pub before: Option<Vec<u8>>,
    /// The content to leave.
    pub after: Option<Vec<u8>>,
}

impl PlannedFile {
    /// Whether committing it changes anything.
    pub fn changes(&self) -> bool {
        self.before != self.after
    }

    /// The workspace-relative POSIX path, as shown to the model and the user.
    pub fn shown(&self) -> String {
        shown(&self.rel)
    }

    /// The unified diff of this file (binary content is named, not shown).
    pub fn diff(&self) -> String {
        fn text(b: &Option<Vec<u8>>) -> Option<Option<&str>> {
            b.as_ref().map(|b| std::str::from_utf8(b).ok())
        }
        match (text(&self.before), text(&self.after)) {
            (Some(None), _) | (_, Some(None)) => format!("Binary file {} changed\n", self.shown()),
            (before, after) => unified_diff(&self.rel, before.flatten(), after.flatten()),
        }
    }
}

/// What a write tool would do: every file it changes, in a stable order, and a note for the
/// model about how it got there (fuzzy matches and the like).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChangePlan {
    /// The files, sorted by path, each once.
    pub files: Vec<PlannedFile>,
    /// Appended to the tool's output.
    pub note: Option<String>,
}

impl ChangePlan {
    /// A plan for one file.
    pub fn one(rel: PathBuf, before: Option<Vec<u8>>, after: Option<Vec<u8>>) -> Self {
        Self { files: vec![PlannedFile { rel, before, after }], note: None }
    }

    /// The files it changes.
    pub fn changed(&self) -> impl Iterator<Item = &PlannedFile> {
        self.files.iter().filter(|f| f.changes())
    }

    /// Whether every file it changes still holds what the plan was made from (the plan would
    /// be made the same way again). A file that cannot be read is not current.
    pub fn is_current(&self, fs: &crate::fs::WorkspaceFs) -> bool {
        self.changed().all(|f| fs.read_if_exists(&f.rel).is_ok_and(|now| now == f.before))
    }

    /// The preview a human approves: the diffs of every changed file.
    pub fn diff(&self) -> String {
        self.changed().map(PlannedFile::diff).collect()
    }

    /// What identifies the plan for a call hash: each changed file's path and the hashes of
    /// its content before and after.
    pub fn fingerprint(&self) -> Vec<String> {
        self.changed()
            .map(|f| {
                format!(
                    "{}\u{0}{}\u{0}{}",
                    f.shown(),
                    content_hash(f.before.as_deref()),
                    content_hash(f.after.as_deref())
                )
            })
            .collect()
    }
}

/// One file a committed plan changed.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileChange {
    /// Workspace-relative POSIX path.
    pub path: String,
    /// How it changed.
    pub kind: ChangeKind,
    /// The unified diff.
    pub diff: String,
    /// Lines added.
    pub added: usize,
    /// Lines removed.
    pub removed: usize,
    /// Bytes it holds now (0 when deleted).
    pub bytes: usize,
}

impl FileChange {
    /// The change as a result's details list it (its diff travels in the result's `diff`).
    pub fn landed(&self) -> bridle_protocol::LandedChange {
        bridle_protocol::LandedChange {
            path: self.path.clone(),
            kind: self.kind,
            added: self.added as u64,
            removed: self.removed as u64,
            bytes: self.bytes as u64,
        }
    }
}

/// Judges a write of the entry `rel` as the sandbox judges a file tool's: a symlink there (now,
/// or to be made) is judged by its folder, since the link itself is written and never
/// followed; git's own files (which only a captured command's landing writes) by their way.
pub(crate) fn judge_entry(
    workspace: &crate::workspace::Workspace,
    rel: &std::path::Path,
    link: bool,
    session_id: &str,
) -> Result<(), String> {
    if rel.starts_with(".git") {
        return workspace.sandbox.judge_git_data(rel).map_err(|e| e.to_string());
    }
    let judged = match rel.parent() {
        Some(parent) if link && !parent.as_os_str().is_empty() => parent,
        Some(_) if link => return Ok(()),
        _ => rel,
    };
    workspace.sandbox.judge_write(judged, session_id).map_err(|e| e.to_string())
}

/// `sha256:<hex>` of some content, `absent` for none.
pub fn content_hash(bytes: Option<&[u8]>) -> String {
    match bytes {
        Some(b) => format!("sha256:{}", blob_name(b)),
        None => "absent".to_string(),
    }
}

/// The name content has as a blob (hex SHA-256): what checkpoint rows record, kept or not.
pub(crate) fn blob_name(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// The blob name of what `reader` holds, read a chunk at a time.
pub(crate) fn hash_stream(mut reader: impl std::io::Read) -> std::io::Result<String> {
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 256 * 1024];
    loop {
        match reader.read(&mut buf)? {
            0 => return Ok(hex(&hasher.finalize())),
            n => hasher.update(&buf[..n]),
        }
    }
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
