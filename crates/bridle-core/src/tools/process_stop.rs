//! `process_stop`: ends a background process and everything it started.

use std::time::Duration;

use async_trait::async_trait;
use bridle_protocol::{ClientKind, ToolDetails};
use serde::Deserialize;

use super::{quoted, Tool, ToolContext, ToolError, ToolKind, ToolOutput};
use crate::processes;

/// Stops a background process and its children (SIGTERM, then SIGKILL after 2 s).
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProcessStopArgs {
    /// Its id (`p1`).
    pub process_id: String,
}

/// The `process_stop` tool.
pub struct ProcessStop;

#[async_trait]
impl Tool for ProcessStop {
    type Args = ProcessStopArgs;
    const NAME: &'static str = "process_stop";
    /// Stopping follows the bash column of the mode table.
    const KIND: ToolKind = ToolKind::Exec;
    const CLIENT_KIND: ClientKind = ClientKind::Execute;

    fn title(args: &Self::Args) -> String {
        format!("Stop {}", quoted(&args.process_id))
    }

    fn timeout(_args: &Self::Args, default: Duration) -> Duration {
        default.max(Duration::from_secs(15))
    }

    async fn run(&self, args: &Self::Args, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let table = super::process_output::table(ctx)?;
        let process = table.stop(args.process_id.trim()).await.map_err(|e| ToolError::new(e.to_string()))?;
        let read = table.output(&process.id, Duration::ZERO).await.map_err(ToolError::new)?;
        let mut output = format!(
            "{} `{}`: {}",
            process.id,
            process.command,
            processes::state_words(&read.process, ctx.clock.now_ms())
        );
        if !read.text.is_empty() {
            output.push_str(&format!(
                "\noutput since the last read:\n{}",
                super::process_output::bounded(ctx, &read.text)?
            ));
        }
        if !read.process.changed.is_empty() {
            output.push_str(&format!(
                "\n[files it changed (not kept in checkpoints, so undo cannot restore them): {}]",
                read.process.changed.join(", ")
            ));
        }
        Ok(ToolOutput {
            output,
            details: Some(ToolDetails::Process {
                process_id: process.id.clone(),
                state: read.process.state,
                exit_code: read.process.exit_code,
                dropped: read.dropped,
                changed: read.process.changed.clone(),
            }),
            ..ToolOutput::default()
        })
    }
}
