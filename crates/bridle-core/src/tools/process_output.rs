//! `process_output`: what a background process wrote since the last read, and how it stands.

use std::time::Duration;

use async_trait::async_trait;
use bridle_protocol::{ClientKind, ToolDetails};
use serde::Deserialize;

use super::{quoted, Tool, ToolContext, ToolError, ToolKind, ToolOutput};
use crate::processes::{self, SessionProcesses};

/// A background process's output since the last read (the last 1 MiB is kept) and its state;
/// waits up to `wait_secs` for new output.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProcessOutputArgs {
    /// Its id (`p1`).
    pub process_id: String,
    /// Seconds to wait for new output (at most 30).
    #[serde(default)]
    pub wait_secs: Option<u64>,
}

/// The `process_output` tool.
pub struct ProcessOutput;

/// The session's processes, or why a call outside a session has none.
pub(super) fn table(ctx: &ToolContext) -> Result<&SessionProcesses, ToolError> {
    ctx.processes().map(|p| &**p).ok_or_else(|| {
        ToolError::new("background processes live in a session (the app or `bridle run`); this call has none")
    })
}

/// A process's output as the model gets it: head and tail when long, the whole of it saved in the
/// session's tool-output folder (the one rule for large outputs).
pub(super) fn bounded(ctx: &ToolContext, text: &str) -> Result<String, ToolError> {
    let dir = ctx.workspace.sandbox.tool_output_dir(&ctx.session_id);
    super::output::bound(text, &dir, &ctx.call_id, super::output::DEFAULT_MAX_CHARS)
        .map(|(shown, _)| shown)
        .map_err(|e| ToolError::new(format!("cannot save the process's output: {e}")))
}

#[async_trait]
impl Tool for ProcessOutput {
    type Args = ProcessOutputArgs;
    const NAME: &'static str = "process_output";
    const KIND: ToolKind = ToolKind::Read;
    const CLIENT_KIND: ClientKind = ClientKind::Read;

    fn title(args: &Self::Args) -> String {
        format!("Read the output of {}", quoted(&args.process_id))
    }

    fn timeout(args: &Self::Args, default: Duration) -> Duration {
        default.max(Duration::from_secs(args.wait_secs.unwrap_or(0)) + Duration::from_secs(5))
    }

    async fn run(&self, args: &Self::Args, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let wait = Duration::from_secs(args.wait_secs.unwrap_or(0)).min(processes::MAX_WAIT);
        let read = table(ctx)?.output(args.process_id.trim(), wait).await.map_err(ToolError::new)?;
        let process = &read.process;
        let mut text =
            format!("{} `{}`: {}\n", process.id, process.command, processes::state_words(process, ctx.clock.now_ms()));
        if read.dropped > 0 {
            text.push_str(&format!(
                "[{} bytes of output were lost before this read: only the last {} KiB are kept]\n",
                read.dropped,
                processes::RING_BYTES / 1024
            ));
        }
        text.push_str(&if read.text.is_empty() { "(no new output)".into() } else { bounded(ctx, &read.text)? });
        if process.state != bridle_protocol::ProcessState::Running && !process.changed.is_empty() {
            text.push_str(&format!(
                "\n[files it changed (not kept in checkpoints, so undo cannot restore them): {}]",
                process.changed.join(", ")
            ));
        }
        Ok(ToolOutput {
            output: text,
            details: Some(ToolDetails::Process {
                process_id: process.id.clone(),
                state: process.state,
                exit_code: process.exit_code,
                dropped: read.dropped,
                changed: process.changed.clone(),
            }),
            ..ToolOutput::default()
        })
    }
}
