//! Token accounting as reported by providers (or estimated where they report nothing).

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Tokens spent by one model request, or summed over a turn or a session.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct TokenUsage {
    /// Prompt tokens, including cached ones.
    #[ts(type = "number")]
    pub input_tokens: u64,
    /// Of the prompt tokens, those served from the provider's cache.
    #[ts(type = "number")]
    pub cached_input_tokens: u64,
    /// Completion tokens.
    #[ts(type = "number")]
    pub output_tokens: u64,
}

impl TokenUsage {
    /// Input plus output tokens.
    pub fn total(&self) -> u64 {
        self.input_tokens + self.output_tokens
    }

    /// Adds another request's usage to this one.
    pub fn add(&mut self, other: &TokenUsage) {
        self.input_tokens += other.input_tokens;
        self.cached_input_tokens += other.cached_input_tokens;
        self.output_tokens += other.output_tokens;
    }
}
