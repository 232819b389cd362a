//! How many tokens a request will take, before it is sent.
//!
//! Rule: the provider's own count wins when it gives one; between counts, the request's size in
//! characters is divided by this session's own characters-per-token, learnt from the earlier
//! requests the provider counted (four until it has said anything, and kept within sane bounds
//! so one odd count cannot make the guess absurd).

use crate::provider::ModelRequest;

/// Characters per token before the provider has counted anything.
const DEFAULT_CHARS_PER_TOKEN: f64 = 4.0;
/// The learnt ratio stays within these bounds.
const MIN_CHARS_PER_TOKEN: f64 = 1.5;
const MAX_CHARS_PER_TOKEN: f64 = 8.0;

/// One session's token estimator.
#[derive(Debug, Clone)]
pub struct Estimator {
    chars_per_token: f64,
    /// Counts seen (for the running average).
    samples: u32,
}

impl Default for Estimator {
    fn default() -> Self {
        Self { chars_per_token: DEFAULT_CHARS_PER_TOKEN, samples: 0 }
    }
}

/// The characters a request sends: system prompt, history and tool definitions as JSON.
pub fn request_chars(request: &ModelRequest) -> usize {
    let history: usize = request.history.iter().map(|i| serde_json::to_string(i).map_or(0, |s| s.len())).sum();
    let tools = serde_json::to_string(&request.tools).map_or(0, |s| s.len());
    request.system.len() + history + tools
}

impl Estimator {
    /// The estimated input tokens of `request`.
    pub fn tokens(&self, request: &ModelRequest) -> u64 {
        self.tokens_of_chars(request_chars(request))
    }

    /// The estimated tokens of `chars` characters.
    pub fn tokens_of_chars(&self, chars: usize) -> u64 {
        (chars as f64 / self.chars_per_token).ceil() as u64
    }

    /// Characters that fit in `tokens`.
    pub fn chars_of_tokens(&self, tokens: u64) -> usize {
        (tokens as f64 * self.chars_per_token) as usize
    }

    /// The provider counted `input_tokens` for `request`: learn from it (a zero count is a
    /// provider that does not count, and teaches nothing).
    pub fn observe(&mut self, request: &ModelRequest, input_tokens: u64) {
        if input_tokens == 0 {
            return;
        }
        let ratio =
            (request_chars(request) as f64 / input_tokens as f64).clamp(MIN_CHARS_PER_TOKEN, MAX_CHARS_PER_TOKEN);
        self.samples = self.samples.saturating_add(1);
        // A running average that favours recent requests once a few are in.
        let weight = 1.0 / f64::from(self.samples.min(8));
        self.chars_per_token += (ratio - self.chars_per_token) * weight;
    }

    /// The current characters per token.
    pub fn chars_per_token(&self) -> f64 {
        self.chars_per_token
    }
}

/// A real tokenizer (OpenAI's o200k), loaded once; `None` if it cannot be built.
static BPE: std::sync::LazyLock<Option<tiktoken_rs::CoreBPE>> =
    std::sync::LazyLock::new(|| tiktoken_rs::o200k_base().inspect_err(|e| tracing::warn!("no tokenizer: {e}")).ok());

/// The tokens of what a request puts before the model — instructions, every message's text and
/// the tools' schemas — counted with a real tokenizer (characters over four without one). A
/// server's own count should be near it; far below means the server cut the prompt.
pub fn count_tokens(request: &ModelRequest) -> u64 {
    let mut text = request.system.clone();
    for item in &request.history {
        match item {
            bridle_protocol::HistoryItem::User { text: t } => text.push_str(t),
            bridle_protocol::HistoryItem::Assistant { text: t, tool_calls, .. } => {
                text.push_str(t);
                for call in tool_calls {
                    text.push_str(&call.name);
                    text.push_str(&call.arguments);
                }
            }
            bridle_protocol::HistoryItem::ToolResult { result } => text.push_str(&result.output),
        }
        text.push('\n');
    }
    text.push_str(&serde_json::to_string(&request.tools).unwrap_or_default());
    count_text_tokens(&text)
}

/// The tokens of `text` with the same tokenizer (characters over four without one).
pub fn count_text_tokens(text: &str) -> u64 {
    match BPE.as_ref() {
        Some(bpe) => bpe.encode_ordinary(text).len() as u64,
        None => (text.len() / 4) as u64,
    }
}
