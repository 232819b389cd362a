//! `write_file`: create or replace a file, atomically, returning the diff.

use async_trait::async_trait;
use bridle_protocol::ClientKind;
use serde::Deserialize;

use super::files::plan_file;
use super::{quoted, Tool, ToolContext, ToolError, ToolKind};
use crate::changes::ChangePlan;
use crate::sandbox::Access;

/// Creates a file, or replaces its whole content, in the workspace. Parent folders are created.
/// The write is atomic and keeps the file's permissions. Prefer edit_file to change part of a
/// file.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteFileArgs {
    /// The file, relative to the workspace root.
    pub path: String,
    /// The complete new content.
    pub content: String,
}

/// The `write_file` tool.
pub struct WriteFile;

#[async_trait]
impl Tool for WriteFile {
    type Args = WriteFileArgs;
    const NAME: &'static str = "write_file";
    const KIND: ToolKind = ToolKind::Write;
    const CLIENT_KIND: ClientKind = ClientKind::Edit;

    fn title(args: &Self::Args) -> String {
        format!("Write {}", quoted(&args.path))
    }

    fn paths(args: &Self::Args) -> Vec<(String, Access)> {
        vec![(args.path.clone(), Access::Write)]
    }

    async fn plan(&self, args: &Self::Args, ctx: &ToolContext) -> Result<ChangePlan, ToolError> {
        plan_file(ctx, &args.path, |_| Ok(args.content.clone())).await
    }
}
