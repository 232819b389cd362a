//! What the three search tools share: the sandboxed starting point, running the walk off the
//! async threads, the large-output rule for what they render, and what they found as the result's
//! details.

use std::path::PathBuf;

use bridle_protocol::ToolDetails;

use super::files::resolve;
use super::output;
use super::search::{Render, SearchError, Tree};
use super::{ToolContext, ToolError, ToolOutput};
use crate::sandbox::{Access, Place};

/// What a search walks: the canonical root, the protected paths it must skip (so a secret
/// inside the workspace is never listed nor searched), and the absolute folder (or file) to
/// search, inside the workspace.
pub(crate) struct SearchRoot {
    pub root: PathBuf,
    pub hidden: Vec<PathBuf>,
    pub base: PathBuf,
}

impl SearchRoot {
    pub fn tree(&self) -> Tree<'_> {
        Tree { root: &self.root, hidden: &self.hidden }
    }
}

pub(crate) fn search_root(ctx: &ToolContext, path: Option<&str>) -> Result<SearchRoot, ToolError> {
    let resolved = resolve(ctx, path.unwrap_or("."), Access::Read)?;
    match resolved.place {
        Place::Workspace(_) => Ok(SearchRoot {
            root: ctx.workspace.root().to_path_buf(),
            hidden: ctx.workspace.sandbox.protected_paths(),
            base: resolved.absolute,
        }),
        Place::ToolOutput(_) => Err(ToolError::new("saved tool outputs are read with read_file, not searched")),
    }
}

/// Runs `search` on a blocking thread, renders it, and keeps the model's share bounded.
pub(crate) async fn run_search<T: Render + Send + 'static>(
    ctx: &ToolContext,
    search: impl FnOnce() -> Result<T, SearchError> + Send + 'static,
    details: impl FnOnce(T) -> ToolDetails,
) -> Result<ToolOutput, ToolError> {
    let found = tokio::task::spawn_blocking(search)
        .await
        .map_err(|e| ToolError::new(format!("the search was interrupted: {e}")))?
        .map_err(|e| ToolError::new(e.to_string()))?;
    let text = found.render();
    let out_dir = ctx.workspace.sandbox.tool_output_dir(&ctx.session_id);
    let (shown, _) = output::bound(&text, &out_dir, &ctx.call_id, output::DEFAULT_MAX_CHARS)
        .map_err(|e| ToolError::new(format!("cannot save the full output: {e}")))?;
    Ok(ToolOutput { output: shown, details: Some(details(found)), ..ToolOutput::default() })
}
