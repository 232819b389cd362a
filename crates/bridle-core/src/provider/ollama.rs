//! Ollama's native chat API (`POST /api/chat`, newline-delimited JSON), spoken because its
//! OpenAI-compatible endpoint ignores `num_ctx` and silently cuts the front of a long prompt.
//!
//! Rule: every request carries `options.num_ctx` — the config's `context_window`, else the
//! model's own (`/api/show`) capped at 32,768, since a larger KV cache can exhaust the user's
//! memory — so the server holds what Bridle sends.

use async_trait::async_trait;
use bridle_protocol::{HistoryItem, TokenUsage};
use reqwest::header::HeaderMap;
use serde_json::{json, Value};
use tokio::sync::OnceCell;

use super::sse::{self, Ending, Lines, SseEvent, WireDecoder};
use super::{http, window, ModelEvent, ModelProvider, ModelRequest, ModelStream, ProviderError};

/// The most context Bridle asks Ollama for when the user did not say.
pub const DEFAULT_NUM_CTX_CAP: u64 = 32_768;

/// An Ollama server; `base_url` is its root (`http://127.0.0.1:11434`).
pub struct OllamaProvider {
    client: reqwest::Client,
    base_url: String,
    model: String,
    /// The user's `context_window`, if set.
    configured: Option<u64>,
    /// What is sent as `num_ctx` (decided at the first request).
    num_ctx: OnceCell<u64>,
}

impl OllamaProvider {
    /// A provider for `model` at `base_url`, asking for `configured` tokens of context.
    pub fn new(client: reqwest::Client, base_url: &str, model: &str, configured: Option<u64>) -> Self {
        Self {
            client,
            base_url: base_url.trim_end_matches('/').to_string(),
            model: model.to_string(),
            configured,
            num_ctx: OnceCell::new(),
        }
    }

    async fn num_ctx(&self) -> u64 {
        *self
            .num_ctx
            .get_or_init(|| async {
                match self.configured {
                    Some(n) => n,
                    None => window::ollama(&self.client, &self.base_url, &self.model)
                        .await
                        .map_or(DEFAULT_NUM_CTX_CAP, |n| n.min(DEFAULT_NUM_CTX_CAP)),
                }
            })
            .await
    }

    /// The request body for `request` with `num_ctx` (public for payload tests).
    pub fn body(&self, request: &ModelRequest, num_ctx: u64) -> Value {
        let mut messages = vec![json!({"role": "system", "content": request.system})];
        // Ollama names tools, not calls: a result says which tool it answers.
        let mut names = std::collections::HashMap::new();
        for item in &request.history {
            messages.push(match item {
                HistoryItem::User { text } => json!({"role": "user", "content": text}),
                HistoryItem::Assistant { text, tool_calls, .. } => {
                    let mut msg = json!({"role": "assistant", "content": text});
                    if !tool_calls.is_empty() {
                        msg["tool_calls"] = tool_calls
                            .iter()
                            .map(|c| {
                                names.insert(c.id.clone(), c.name.clone());
                                let arguments: Value = serde_json::from_str(&c.arguments).unwrap_or_else(|_| json!({}));
                                json!({"function": {"name": c.name, "arguments": arguments}})
                            })
                            .collect();
                    }
                    msg
                }
                HistoryItem::ToolResult { result } => json!({
                    "role": "tool",
                    "content": result.output,
                    "tool_name": names.get(&result.tool_call_id).cloned().unwrap_or_default(),
                }),
            });
        }
        let mut body = json!({
            "model": self.model,
            "stream": true,
            "messages": messages,
            "options": {"num_ctx": num_ctx},
        });
        if !request.tools.is_empty() {
            body["tools"] = request
                .tools
                .iter()
                .map(|t| json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.input_schema}}))
                .collect();
        }
        body
    }
}

#[async_trait]
impl ModelProvider for OllamaProvider {
    fn with_model(&self, model: &str) -> Option<std::sync::Arc<dyn ModelProvider>> {
        Some(std::sync::Arc::new(OllamaProvider::new(self.client.clone(), &self.base_url, model, self.configured)))
    }

    async fn stream(&self, request: &ModelRequest) -> Result<ModelStream, ProviderError> {
        let body = self.body(request, self.num_ctx().await);
        let url = format!("{}/api/chat", self.base_url);
        let response = match http::post_json(&self.client, &url, HeaderMap::new(), &body).await {
            Ok(response) => response,
            Err(e) => {
                let tags = format!("{}/api/tags", self.base_url);
                return Err(super::models::name_the_models(e, &self.client, &tags).await);
            }
        };
        Ok(sse::decode_framed(Box::pin(response.bytes_stream()), Lines::default(), ChatLines::default()))
    }

    fn model(&self) -> &str {
        &self.model
    }

    async fn context_window(&self) -> Option<u64> {
        Some(self.num_ctx().await)
    }
}

/// Decodes `/api/chat` lines: text deltas, tool calls (whole, in one line), then a `done` line
/// with the counts.
#[derive(Default)]
struct ChatLines {
    calls: Vec<ModelEvent>,
    ending: Ending,
}

impl WireDecoder for ChatLines {
    const AWAITED: &'static str = "the answer was complete";

    fn on_event(&mut self, event: SseEvent, out: &mut Vec<ModelEvent>) -> Result<(), ProviderError> {
        let line = sse::json("line", &event.data)?;
        if let Some(error) = line.get("error").and_then(Value::as_str) {
            return Err(ProviderError::Stream(error.to_string()));
        }
        if let Some(text) = line.pointer("/message/content").and_then(Value::as_str).filter(|t| !t.is_empty()) {
            out.push(ModelEvent::TextDelta(text.to_string()));
        }
        if let Some(calls) = line.pointer("/message/tool_calls").and_then(Value::as_array) {
            for call in calls {
                let name = call.pointer("/function/name").and_then(Value::as_str).unwrap_or_default().to_string();
                let arguments = match call.pointer("/function/arguments") {
                    Some(Value::String(text)) => text.clone(),
                    Some(other) => other.to_string(),
                    None => "{}".to_string(),
                };
                let provider_id = call.get("id").and_then(Value::as_str).unwrap_or_default().to_string();
                self.calls.push(ModelEvent::ToolCall { provider_id, name, arguments });
            }
        }
        if line.get("done").and_then(Value::as_bool) == Some(true) {
            let n = |key: &str| line.get(key).and_then(Value::as_u64).unwrap_or(0);
            let usage = TokenUsage {
                input_tokens: n("prompt_eval_count"),
                cached_input_tokens: 0,
                output_tokens: n("eval_count"),
            };
            self.ending.complete(Some(usage), std::mem::take(&mut self.calls), out);
        }
        Ok(())
    }

    fn ending(&self) -> &Ending {
        &self.ending
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn feed(d: &mut ChatLines, line: &str) -> Vec<ModelEvent> {
        let mut out = Vec::new();
        d.on_event(SseEvent { event: None, data: line.into() }, &mut out).unwrap();
        out
    }

    #[test]
    fn text_tool_calls_and_counts_are_read() {
        let mut d = ChatLines::default();
        assert_eq!(
            feed(&mut d, r#"{"message":{"role":"assistant","content":"Hi"},"done":false}"#),
            [ModelEvent::TextDelta("Hi".into())]
        );
        let call = r#"{"message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"read_file","arguments":{"path":"a"}}}]},"done":false}"#;
        assert!(feed(&mut d, call).is_empty(), "calls come out with the end");
        let end = feed(&mut d, r#"{"done":true,"done_reason":"stop","prompt_eval_count":120,"eval_count":7}"#);
        assert_eq!(
            end,
            [
                ModelEvent::Usage(TokenUsage { input_tokens: 120, cached_input_tokens: 0, output_tokens: 7 }),
                ModelEvent::ToolCall {
                    provider_id: String::new(),
                    name: "read_file".into(),
                    arguments: r#"{"path":"a"}"#.into()
                },
                ModelEvent::Finished,
            ]
        );
    }

    #[test]
    fn a_cut_stream_and_an_error_line_are_errors() {
        let mut d = ChatLines::default();
        feed(&mut d, r#"{"message":{"content":"Hel"},"done":false}"#);
        assert!(matches!(d.finish(&mut Vec::new()), Err(ProviderError::StreamDropped(_))));
        let mut d = ChatLines::default();
        let mut out = Vec::new();
        let err = d.on_event(SseEvent { event: None, data: r#"{"error":"model 'x' not found"}"#.into() }, &mut out);
        assert!(matches!(err, Err(ProviderError::Stream(m)) if m.contains("not found")));
    }
}
