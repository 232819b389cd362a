//! `list_files`: what is in a folder of the workspace, .gitignore honoured, bounded.

use async_trait::async_trait;
use bridle_protocol::{ClientKind, ToolDetails};
use serde::Deserialize;

use super::search::list_files;
use super::search_tool::{run_search, search_root};
use super::{quoted, Tool, ToolContext, ToolError, ToolKind, ToolOutput};
use crate::sandbox::Access;

/// Entries listed at most.
const LIMIT: usize = 500;

/// Lists files and folders (folders end with `/`) under a folder of the workspace, skipping what
/// .gitignore ignores and the .git folder. Shows two levels by default.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListFilesArgs {
    /// The folder, relative to the workspace root (default: the root).
    #[serde(default)]
    pub path: Option<String>,
    /// How many levels deep to list (default 2).
    #[serde(default)]
    pub depth: Option<u32>,
}

/// The `list_files` tool.
pub struct ListFiles;

#[async_trait]
impl Tool for ListFiles {
    type Args = ListFilesArgs;
    const NAME: &'static str = "list_files";
    const KIND: ToolKind = ToolKind::Read;
    const CLIENT_KIND: ClientKind = ClientKind::Read;

    fn title(args: &Self::Args) -> String {
        format!("List {}", quoted(args.path.as_deref().unwrap_or(".")))
    }

    fn paths(args: &Self::Args) -> Vec<(String, Access)> {
        vec![(args.path.clone().unwrap_or_else(|| ".".into()), Access::Read)]
    }

    async fn run(&self, args: &Self::Args, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let at = search_root(ctx, args.path.as_deref())?;
        let depth = Some(args.depth.unwrap_or(2).max(1) as usize);
        run_search(ctx, move || list_files(at.tree(), &at.base, depth, LIMIT), ToolDetails::Listing).await
    }
}
