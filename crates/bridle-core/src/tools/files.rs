//! What the file tools share: resolving the model's path through the sandbox, turning I/O
//! failures into messages the model can act on, and rendering the diff of a change.

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::fs::FsError;
use crate::sandbox::{Access, Place, Resolved};

use super::{ToolContext, ToolError, ToolOutput};

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

/// Changes one file under its write lock: `change` receives the current text (`None` when the
/// file does not exist) and returns the new text; nothing is written when it fails or changes
/// nothing. The result carries the diff, and `data.changes` lists `{path, diff}` for events.
pub(crate) async fn change_file(
    ctx: &ToolContext,
    path: &str,
    change: impl FnOnce(Option<&str>) -> Result<String, ToolError>,
) -> Result<ToolOutput, ToolError> {
    let resolved = resolve(ctx, path, Access::Write)?;
    let rel = workspace_path(&resolved)?;
    let shown = shown(&rel);
    let _lock = ctx.workspace.locks.write(&resolved.absolute).await;
    let old = match ctx.workspace.fs.read_if_exists(&rel).map_err(fs_error)? {
        Some(bytes) => Some(text_for_edit(bytes, &shown)?),
        None => None,
    };
    let new = change(old.as_deref())?;
    if old.as_deref() == Some(new.as_str()) {
        return Ok(ToolOutput {
            output: format!("{shown} already has this content; nothing was written."),
            data: Some(json!({"path": shown, "changed": false, "changes": []})),
            diff: None,
        });
    }
    let diff = unified_diff(&rel, old.as_deref(), Some(&new));
    if ctx.dry_run {
        return Ok(ToolOutput {
            output: format!("Would change {shown}."),
            data: Some(json!({"path": shown, "changed": true, "changes": [{"path": shown, "diff": diff}]})),
            diff: Some(diff),
        });
    }
    let written = ctx.workspace.fs.write_atomic(&rel, new.as_bytes()).map_err(fs_error)?;
    let (added, removed) = diff_stat(&diff);
    let verb = if written.created { "Created" } else { "Updated" };
    Ok(ToolOutput {
        output: format!("{verb} {shown} (+{added} -{removed} lines, {} bytes).", written.bytes),
        data: Some(json!({
            "path": shown,
            "changed": true,
            "created": written.created,
            "bytes": written.bytes,
            "changes": [{"path": shown, "diff": diff}],
        })),
        diff: Some(diff),
    })
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
