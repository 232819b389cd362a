//! Tools that exist only for tests: they sleep, so order and concurrency can be observed.

use async_trait::async_trait;
use bridle_core::tools::{Tool, ToolContext, ToolError, ToolKind, ToolOutput};
use bridle_protocol::ClientKind;
use serde::Deserialize;

/// Sleeps, then says which call it was.
#[derive(Deserialize, schemars::JsonSchema)]
pub struct SleepArgs {
    /// Milliseconds to sleep.
    pub ms: u64,
    /// A label echoed back.
    #[serde(default)]
    pub label: String,
}

pub struct Sleep;

#[async_trait]
impl Tool for Sleep {
    type Args = SleepArgs;
    const NAME: &'static str = "sleep";
    const KIND: ToolKind = ToolKind::Read;
    const CLIENT_KIND: ClientKind = ClientKind::Other;
    fn title(args: &SleepArgs) -> String {
        format!("Sleep {} ms", args.ms)
    }
    async fn run(&self, args: &SleepArgs, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        tokio::time::sleep(std::time::Duration::from_millis(args.ms)).await;
        Ok(ToolOutput::text(format!("slept {}", args.label)))
    }
}

/// A tool with a bug: it panics (the engine must survive it).
#[derive(Deserialize, schemars::JsonSchema)]
pub struct PanicArgs {}

pub struct Panic;

#[async_trait]
impl Tool for Panic {
    type Args = PanicArgs;
    const NAME: &'static str = "panic";
    const KIND: ToolKind = ToolKind::Read;
    const CLIENT_KIND: ClientKind = ClientKind::Other;
    fn title(_args: &PanicArgs) -> String {
        "Panic".to_string()
    }
    async fn run(&self, _args: &PanicArgs, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        #[allow(clippy::panic)]
        {
            panic!("a bug in a tool")
        }
    }
}
