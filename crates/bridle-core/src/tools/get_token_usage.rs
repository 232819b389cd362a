//! `get_token_usage`: what this session has spent and how full the context window is.

use async_trait::async_trait;
use bridle_protocol::{ClientKind, ToolDetails};
use serde::Deserialize;

use super::{Tool, ToolContext, ToolError, ToolKind, ToolOutput};

/// Returns this session's token totals and how much of the model's context window the last
/// request used.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetTokenUsageArgs {}

/// The `get_token_usage` tool.
pub struct GetTokenUsage;

#[async_trait]
impl Tool for GetTokenUsage {
    type Args = GetTokenUsageArgs;
    const NAME: &'static str = "get_token_usage";
    const KIND: ToolKind = ToolKind::Read;
    const CLIENT_KIND: ClientKind = ClientKind::Read;

    fn title(_args: &Self::Args) -> String {
        "Get the token usage".to_string()
    }

    async fn run(&self, _args: &Self::Args, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let snapshot = ctx.usage.lock().map_err(|_| ToolError::new("usage figures are unavailable"))?.clone();
        let total = snapshot.total;
        let window = match snapshot.context_window {
            Some(window) if window > 0 => format!(
                "{} of {window} tokens ({:.1}%)",
                snapshot.context_used,
                snapshot.context_used as f64 * 100.0 / window as f64
            ),
            _ => format!("{} tokens (window size unknown)", snapshot.context_used),
        };
        let output = format!(
            "Session totals: {} input ({} cached), {} output, {} in all.\nContext window used by the last request: {window}.",
            total.input_tokens,
            total.cached_input_tokens,
            total.output_tokens,
            total.total()
        );
        Ok(ToolOutput {
            output,
            details: Some(ToolDetails::Usage {
                total,
                context_used: snapshot.context_used,
                context_window: snapshot.context_window,
            }),
            ..ToolOutput::default()
        })
    }
}
