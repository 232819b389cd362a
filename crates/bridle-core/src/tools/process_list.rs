//! `process_list`: the session's background processes.

use async_trait::async_trait;
use bridle_protocol::{ClientKind, ToolDetails};
use serde::Deserialize;

use super::{Tool, ToolContext, ToolError, ToolKind, ToolOutput};
use crate::processes;

/// Lists this session's background processes and their state.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProcessListArgs {}

/// The `process_list` tool.
pub struct ProcessList;

#[async_trait]
impl Tool for ProcessList {
    type Args = ProcessListArgs;
    const NAME: &'static str = "process_list";
    const KIND: ToolKind = ToolKind::Read;
    const CLIENT_KIND: ClientKind = ClientKind::Read;

    fn title(_args: &Self::Args) -> String {
        "List the background processes".to_string()
    }

    async fn run(&self, _args: &Self::Args, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let list = super::process_output::table(ctx)?.list();
        let now = ctx.clock.now_ms();
        let output = match list.is_empty() {
            true => "this session has started no background process".to_string(),
            false => list
                .iter()
                .map(|p| format!("{}  {}  `{}`", p.id, processes::state_words(p, now), p.command))
                .collect::<Vec<_>>()
                .join("\n"),
        };
        Ok(ToolOutput { output, details: Some(ToolDetails::Processes { processes: list }), ..ToolOutput::default() })
    }
}
