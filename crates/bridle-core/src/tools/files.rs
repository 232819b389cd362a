//! What the file tools share: resolving the model's path through the sandbox, reading a file off
//! the async threads, turning I/O failures into messages the model can act on, planning a
//! one-file change, rendering the diff of a change and telling the model what a committed plan
//! did.
//!
//! Rule: a file tool's disk I/O runs on a blocking thread ([`on_blocking_thread`]), never on the
//! async threads: a read that hangs (a stuck network mount) holds that thread, not the call, so
//! the call's timeout still ends it.

use std::path::{Path, PathBuf};

use bridle_protocol::ToolDetails;

use crate::fs::FsError;
use crate::sandbox::{Access, Place, Resolved};

use super::{ToolContext, ToolError, ToolOutput};
use crate::changes::{shown, ChangeKind, ChangePlan, CommitError, CommitScope, FileChange};

/// Resolves `path` for `access`; refusals become errors for the model (the pipeline already
/// refused them before the call, so reaching this means the path changed meanwhile).
pub(crate) fn resolve(ctx: &ToolContext, path: &str, access: Access) -> Result<Resolved, ToolError> {
    ctx.workspace.sandbox.resolve(path, access, &ctx.session_id).map_err(|e| ToolError::new(e.to_string()))
}

/// A resolved path that must be inside the workspace (every write is).
pub(crate) fn workspace_path(resolved: &Resolved) -> Result<PathBuf, ToolError> {
    match &resolved.place {
        Place::Workspace(rel) => Ok(rel.clone()),
        Place::ToolOutput(_) => {
            Err(ToolError::new(format!("{} is a saved tool output, which is read-only", resolved.display())))
        }
    }
}

pub(crate) fn fs_error(error: FsError) -> ToolError {
    ToolError::new(error.to_string())
}

/// Runs `work` (disk I/O) on a blocking thread and waits for it; see the module's rule.
pub(crate) async fn on_blocking_thread<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ToolError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ToolError::new(format!("the file operation was interrupted: {e}")))?
}

/// The bytes of the workspace file `rel`, or `None` when it does not exist; read off the async
/// threads. A FIFO, a socket or a device is refused by name (see [`crate::fs`]).
pub(crate) async fn read_workspace_file(ctx: &ToolContext, rel: &Path) -> Result<Option<Vec<u8>>, ToolError> {
    let workspace = ctx.workspace.clone();
    let rel = rel.to_path_buf();
    on_blocking_thread(move || workspace.fs.read_if_exists(&rel).map_err(fs_error)).await
}

/// The text of a file that is about to be edited: UTF-8 and not binary.
pub(crate) fn text_for_edit(bytes: Vec<u8>, shown: &str) -> Result<String, ToolError> {
    if bytes.iter().take(8192).any(|b| *b == 0) {
        return Err(ToolError::new(format!("`{shown}` is a binary file; it cannot be edited as text")));
    }
    String::from_utf8(bytes).map_err(|e| {
        ToolError::new(format!(
            "`{shown}` is not valid UTF-8 (at byte {}); it cannot be edited as text",
            e.utf8_error().valid_up_to()
        ))
    })
}

/// The plan of a change to one file: `change` receives the current text (`None` when the file
/// does not exist) and returns the new text. Nothing is written here; [`crate::changes::commit`]
/// does that, after checking the file still holds what `change` saw.
pub(crate) async fn plan_file(
    ctx: &ToolContext,
    path: &str,
    change: impl FnOnce(Option<&str>) -> Result<String, ToolError>,
) -> Result<ChangePlan, ToolError> {
    let resolved = resolve(ctx, path, Access::Write)?;
    let rel = workspace_path(&resolved)?;
    let old = match read_workspace_file(ctx, &rel).await? {
        Some(bytes) => Some(text_for_edit(bytes, &shown(&rel))?),
        None => None,
    };
    let new = change(old.as_deref())?;
    Ok(ChangePlan::one(rel, old.map(String::into_bytes), Some(new.into_bytes())))
}

/// What a write tool tells the model and the UI once its plan is committed.
pub(crate) fn committed(plan: &ChangePlan, changes: Vec<FileChange>) -> ToolOutput {
    let describe = |c: &FileChange| match c.kind {
        ChangeKind::Created => format!("Created {} (+{} -{} lines, {} bytes)", c.path, c.added, c.removed, c.bytes),
        ChangeKind::Modified => format!("Updated {} (+{} -{} lines, {} bytes)", c.path, c.added, c.removed, c.bytes),
        ChangeKind::Deleted => format!("Deleted {}", c.path),
    };
    let mut output = match changes.as_slice() {
        [] => match plan.files.as_slice() {
            [only] => format!("{} already has this content; nothing was written.", only.shown()),
            _ => "The change leaves every file as it was; nothing was written.".to_string(),
        },
        [one] => format!("{}.", describe(one)),
        many => format!("Changed {} files: {}.", many.len(), many.iter().map(describe).collect::<Vec<_>>().join("; ")),
    };
    if let Some(note) = &plan.note {
        output.push_str(&format!(" {note}"));
    }
    let details =
        ToolDetails::Files { changed: !changes.is_empty(), changes: changes.iter().map(FileChange::landed).collect() };
    ToolOutput { output, details: Some(details), changes, ..ToolOutput::default() }
}

/// What a commit needs of a tool's context: its workspace and the ids its checkpoint carries.
impl From<&ToolContext> for CommitScope {
    fn from(ctx: &ToolContext) -> Self {
        CommitScope {
            workspace: ctx.workspace.clone(),
            session_id: ctx.session_id.clone(),
            turn_id: ctx.turn_id().to_string(),
            call_id: ctx.call_id.clone(),
            writes: ctx.writes.clone(),
            files: ctx.files().cloned(),
        }
    }
}

/// A commit that failed is a failure the model can act on (its message says what was left).
impl From<CommitError> for ToolError {
    fn from(error: CommitError) -> Self {
        ToolError::new(error.to_string())
    }
}
