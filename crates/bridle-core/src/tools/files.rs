//! What the file tools share: resolving the model's path through the sandbox, reading a file off
//! the async threads, turning I/O failures into messages the model can act on, planning a
//! one-file change, rendering the diff of a change and telling the model what a committed plan
//! did.
//!
//! Rule: a file tool's disk I/O runs on a blocking thread ([`on_blocking_thread`]), never on the
//! async threads: a read that hangs (a stuck network mount) holds that thread, not the call, so
//! the call's timeout still ends it.

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::fs::FsError;
use crate::sandbox::{Access, Place, Resolved};

use super::{ToolContext, ToolError, ToolOutput};
use crate::changes::{ChangeKind, ChangePlan, FileChange};

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

/// The unified diff from `old` to `new` of `rel` (a `None` side is `/dev/null`).
pub(crate) fn unified_diff(rel: &Path, old: Option<&str>, new: Option<&str>) -> String {
    let name = rel.to_string_lossy().replace('\\', "/");
    let a = if old.is_some() { format!("a/{name}") } else { "/dev/null".to_string() };
    let b = if new.is_some() { format!("b/{name}") } else { "/dev/null".to_string() };
    similar::TextDiff::from_lines(old.unwrap_or(""), new.unwrap_or(""))
        .unified_diff()
        .context_radius(3)
        .header(&a, &b)
        .to_string()
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
    let listed: Vec<serde_json::Value> = changes
        .iter()
        .map(|c| json!({"path": c.path, "kind": c.kind, "added": c.added, "removed": c.removed, "bytes": c.bytes}))
        .collect();
    ToolOutput { output, data: Some(json!({"changed": !changes.is_empty(), "changes": listed})), changes }
}

/// `+added -removed` line counts of a unified diff, for the model's summary.
pub(crate) fn diff_stat(diff: &str) -> (usize, usize) {
    diff.lines().fold((0, 0), |(added, removed), line| {
        if line.starts_with("+++") || line.starts_with("---") {
            (added, removed)
        } else if line.starts_with('+') {
            (added + 1, removed)
        } else if line.starts_with('-') {
            (added, removed + 1)
        } else {
            (added, removed)
        }
    })
}

/// The workspace-relative POSIX path, for messages and events.
pub(crate) fn shown(rel: &Path) -> String {
    let text = rel.to_string_lossy().replace('\\', "/");
    if text.is_empty() {
        ".".into()
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diffs_name_both_sides_and_dev_null_for_creation() {
        let d = unified_diff(Path::new("src/a.rs"), Some("one\ntwo\n"), Some("one\nthree\n"));
        assert!(d.starts_with("--- a/src/a.rs\n+++ b/src/a.rs\n@@ -1,2 +1,2 @@\n one\n-two\n+three\n"), "{d}");
        assert_eq!(diff_stat(&d), (1, 1));
        let created = unified_diff(Path::new("new.txt"), None, Some("hi\n"));
        assert!(created.starts_with("--- /dev/null\n+++ b/new.txt\n"), "{created}");
    }
}
