//! Model providers: one request in, a stream of text deltas, tool calls and usage out.
//!
//! Three wire formats — OpenAI-compatible Chat Completions and Anthropic Messages, streaming
//! over SSE, and Ollama's native chat, streaming newline-delimited JSON. A provider assembles
//! tool-call fragments itself and reports whole calls; it never retries (the engine does, see
//! [`RetryPolicy`]) and it never sees Bridle's call ids except through [`wire_ids`], which maps
//! them to unique ids on the wire. It can say what window its server serves ([`window`]).

pub(crate) mod anthropic;
mod error;
mod http;
pub mod models;
mod ollama;
mod openai;
mod retry;
mod sse;
pub mod window;
mod wire_ids;

use std::pin::Pin;

use async_trait::async_trait;
use bridle_protocol::{HistoryItem, TokenUsage, ToolDefinition};
use futures::Stream;

pub use anthropic::AnthropicProvider;
pub use error::ProviderError;
pub use ollama::OllamaProvider;
pub use openai::OpenAiProvider;
pub use retry::RetryPolicy;
pub use wire_ids::wire_ids;

/// Everything one model request needs.
#[derive(Debug, Clone)]
pub struct ModelRequest {
    /// The system prompt.
    pub system: String,
    /// The conversation so far.
    pub history: Vec<HistoryItem>,
    /// Tools offered, sorted by name.
    pub tools: Vec<ToolDefinition>,
}

/// One piece of a streamed answer.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelEvent {
    /// Text as it arrives.
    TextDelta(String),
    /// A whole tool call.
    ToolCall {
        /// The provider's id for the call (possibly empty or repeated: it is not trusted).
        provider_id: String,
        /// The tool's name.
        name: String,
        /// Raw JSON argument text.
        arguments: String,
    },
    /// Token usage of this request.
    Usage(TokenUsage),
    /// The answer is complete.
    Finished,
}

/// A streamed answer.
pub type ModelStream = Pin<Box<dyn Stream<Item = Result<ModelEvent, ProviderError>> + Send>>;

/// A model provider.
#[async_trait]
pub trait ModelProvider: Send + Sync {
    /// Sends one request and streams the answer.
    async fn stream(&self, request: &ModelRequest) -> Result<ModelStream, ProviderError>;
    /// The model's name, for display.
    fn model(&self) -> &str;
    /// The context window the server serves for this model, asked within
    /// [`window::ASK_LIMIT`]; `None` when it does not say and the model is not known.
    async fn context_window(&self) -> Option<u64> {
        None
    }
    /// The same server and key asking `model` instead (a child agent's role may name another);
    /// `None` when this provider cannot switch.
    fn with_model(&self, _model: &str) -> Option<std::sync::Arc<dyn ModelProvider>> {
        None
    }
}

/// The provider of a session with no provider configured: every request fails with a message
/// telling the user where to set one, and the conversation is kept.
pub struct Unconfigured;

#[async_trait]
impl ModelProvider for Unconfigured {
    async fn stream(&self, _request: &ModelRequest) -> Result<ModelStream, ProviderError> {
        Err(ProviderError::Setup(
            "no model provider is configured: set [provider] (kind, base_url, model) in config.toml".into(),
        ))
    }

    fn model(&self) -> &str {
        ""
    }
}

/// Builds the configured provider.
pub fn from_config(
    config: &crate::config::ProviderConfig,
    api_key: Option<String>,
) -> Result<Box<dyn ModelProvider>, ProviderError> {
    use crate::config::ProviderKind;
    let client = http::client()?;
    Ok(match config.kind {
        ProviderKind::Openai => Box::new(OpenAiProvider::new(client, &config.base_url, &config.model, api_key)),
        ProviderKind::Anthropic => {
            Box::new(AnthropicProvider::new(client, &config.base_url, &config.model, api_key, config.max_output_tokens))
        }
        ProviderKind::Ollama => {
            Box::new(OllamaProvider::new(client, &config.base_url, &config.model, config.context_window))
        }
    })
}
