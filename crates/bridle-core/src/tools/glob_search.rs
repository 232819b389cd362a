//! `glob_search`: files whose path matches a glob, .gitignore honoured, bounded.

use async_trait::async_trait;
use bridle_protocol::{ClientKind, ToolDetails};
use serde::Deserialize;

use super::search::glob_search;
use super::search_tool::{run_search, search_root};
use super::{quoted, Tool, ToolContext, ToolError, ToolKind, ToolOutput};
use crate::sandbox::Access;

/// Files listed at most.
const LIMIT: usize = 500;

/// Finds files by name pattern, e.g. `**/*.rs` or `src/**/test_*.py`. The pattern is matched
/// against paths relative to `path` (default: the workspace root); `*` stays within one folder,
/// `**` crosses folders. Files ignored by .gitignore are skipped.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GlobSearchArgs {
    /// The glob pattern.
    pub pattern: String,
    /// The folder to search in, relative to the workspace root (default: the root).
    #[serde(default)]
    pub path: Option<String>,
}

/// The `glob_search` tool.
pub struct GlobSearch;

#[async_trait]
impl Tool for GlobSearch {
    type Args = GlobSearchArgs;
    const NAME: &'static str = "glob_search";
    const KIND: ToolKind = ToolKind::Read;
    const CLIENT_KIND: ClientKind = ClientKind::Search;

    fn title(args: &Self::Args) -> String {
        match &args.path {
            Some(path) => format!("Find files matching `{}` in {}", quoted(&args.pattern), quoted(path)),
            None => format!("Find files matching `{}`", quoted(&args.pattern)),
        }
    }

    fn paths(args: &Self::Args) -> Vec<(String, Access)> {
        vec![(args.path.clone().unwrap_or_else(|| ".".into()), Access::Read)]
    }

    async fn run(&self, args: &Self::Args, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let at = search_root(ctx, args.path.as_deref())?;
        let pattern = args.pattern.clone();
        run_search(ctx, move || glob_search(at.tree(), &at.base, &pattern, LIMIT), ToolDetails::Glob).await
    }
}
