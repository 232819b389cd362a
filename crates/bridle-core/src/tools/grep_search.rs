//! `grep_search`: a regex over the workspace's files with ripgrep's own crates, bounded.

use async_trait::async_trait;
use bridle_protocol::{ClientKind, ToolDetails};
use serde::Deserialize;

use super::search::{grep_search, GrepOptions};
use super::search_tool::{run_search, search_root};
use super::{quoted, Tool, ToolContext, ToolError, ToolKind, ToolOutput};
use crate::sandbox::Access;

/// Most matches a call may ask for.
const MAX_RESULTS_CAP: usize = 1000;

/// Searches file contents for a regular expression (Rust regex syntax, like ripgrep) and returns
/// `path:line:text` for each matching line, in path order. Files ignored by .gitignore, binary
/// files and files over 10 MB are skipped. Narrow with `path` (a folder or a file) and `glob`
/// (e.g. `*.rs`, or `!tests/**` to exclude).
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GrepSearchArgs {
    /// The regular expression.
    pub pattern: String,
    /// A folder or file to search, relative to the workspace root (default: the root).
    #[serde(default)]
    pub path: Option<String>,
    /// Only files matching this glob (a leading `!` excludes).
    #[serde(default)]
    pub glob: Option<String>,
    /// Ignore case.
    #[serde(default)]
    pub case_insensitive: Option<bool>,
    /// Matching lines returned at most (default 100, at most 1000).
    #[serde(default)]
    pub max_results: Option<u32>,
}

/// The `grep_search` tool.
pub struct GrepSearch;

#[async_trait]
impl Tool for GrepSearch {
    type Args = GrepSearchArgs;
    const NAME: &'static str = "grep_search";
    const KIND: ToolKind = ToolKind::Read;
    const CLIENT_KIND: ClientKind = ClientKind::Search;

    fn title(args: &Self::Args) -> String {
        match &args.path {
            Some(path) => format!("Search for `{}` in {}", quoted(&args.pattern), quoted(path)),
            None => format!("Search for `{}`", quoted(&args.pattern)),
        }
    }

    fn paths(args: &Self::Args) -> Vec<(String, Access)> {
        vec![(args.path.clone().unwrap_or_else(|| ".".into()), Access::Read)]
    }

    async fn run(&self, args: &Self::Args, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let at = search_root(ctx, args.path.as_deref())?;
        let mut opts = GrepOptions::new(args.pattern.clone());
        opts.glob = args.glob.clone();
        opts.case_insensitive = args.case_insensitive.unwrap_or(false);
        opts.max_results = args.max_results.map(|n| n as usize).unwrap_or(opts.max_results).clamp(1, MAX_RESULTS_CAP);
        let search = move || {
            let hits = grep_search(at.tree(), &at.base, &opts)?;
            // The matching lines of a `.env`-style file give the audit its secret values (DESIGN §7).
            for file in hits.files.iter().filter(|f| crate::redact::is_env_file(&f.path)) {
                let lines: Vec<&str> = file.lines.iter().map(|l| l.text.as_str()).collect();
                crate::redact::learn_file(&file.path, &lines.join("\n"));
            }
            Ok(hits)
        };
        run_search(ctx, search, ToolDetails::Grep).await
    }
}
