//! `append_file`: add to the end of a file (created if missing), atomically like a write.

use async_trait::async_trait;
use bridle_protocol::ClientKind;
use serde::Deserialize;

use super::files::plan_file;
use super::{quoted, Tool, ToolContext, ToolError, ToolKind};
use crate::changes::ChangePlan;
use crate::sandbox::Access;

/// Appends text to the end of a file in the workspace, creating it (and its folders) if it does
/// not exist. Nothing is added between the old content and the new: include a leading newline if
/// one is needed.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AppendFileArgs {
    /// The file, relative to the workspace root.
    pub path: String,
    /// The text to append.
    pub content: String,
}

/// The `append_file` tool.
pub struct AppendFile;

#[async_trait]
impl Tool for AppendFile {
    type Args = AppendFileArgs;
    const NAME: &'static str = "append_file";
    const KIND: ToolKind = ToolKind::Write;
    const CLIENT_KIND: ClientKind = ClientKind::Edit;

    fn title(args: &Self::Args) -> String {
        format!("Append to {}", quoted(&args.path))
    }

    fn paths(args: &Self::Args) -> Vec<(String, Access)> {
        vec![(args.path.clone(), Access::Write)]
    }

    async fn plan(&self, args: &Self::Args, ctx: &ToolContext) -> Result<ChangePlan, ToolError> {
        if args.content.is_empty() {
            return Err(ToolError::new("content is empty; there is nothing to append"));
        }
        plan_file(ctx, &args.path, |old| Ok(format!("{}{}", old.unwrap_or(""), args.content))).await
    }
}
