//! Anthropic Messages, streamed.

use std::collections::BTreeMap;

use async_trait::async_trait;
use bridle_protocol::{HistoryItem, TokenUsage};
use reqwest::header::{HeaderMap, HeaderValue};
use serde_json::{json, Value};

use super::sse::{self, Ending, SseEvent, WireDecoder};
use super::{http, wire_ids, ModelEvent, ModelProvider, ModelRequest, ModelStream, ProviderError};

pub(crate) const API_VERSION: &str = "2023-06-01";

/// A Messages endpoint; `base_url` does not include `/v1`.
pub struct AnthropicProvider {
    client: reqwest::Client,
    base_url: String,
    url: String,
    model: String,
    api_key: Option<String>,
    max_tokens: u32,
}

impl AnthropicProvider {
    /// A provider for `model` at `base_url`.
    pub fn new(client: reqwest::Client, base_url: &str, model: &str, api_key: Option<String>, max_tokens: u32) -> Self {
        Self {
            client,
            base_url: base_url.trim_end_matches('/').to_string(),
            url: format!("{}/v1/messages", base_url.trim_end_matches('/')),
            model: model.to_string(),
            api_key,
            max_tokens,
        }
    }

    /// The request body for `request` (public for payload tests).
    pub fn body(&self, request: &ModelRequest) -> Value {
        let ids = wire_ids(&request.history);
        let wire = |id: &str| ids.get(id).cloned().unwrap_or_else(|| id.to_string());
        // Messages must alternate roles, so consecutive blocks of one role share a message.
        let mut messages: Vec<(&str, Vec<Value>)> = Vec::new();
        let mut push = |role: &'static str, block: Value| match messages.last_mut() {
            Some((last, blocks)) if *last == role => blocks.push(block),
            _ => messages.push((role, vec![block])),
        };
        for item in &request.history {
            match item {
                HistoryItem::User { text } => {
                    let text = if text.trim().is_empty() { "(empty message)" } else { text.as_str() };
                    push("user", json!({"type": "text", "text": text}));
                }
                HistoryItem::Assistant { text, tool_calls, .. } => {
                    if !text.trim().is_empty() {
                        push("assistant", json!({"type": "text", "text": text}));
                    }
                    for call in tool_calls {
                        // The wire wants an object; raw text that is not one (the model's own slip,
                        // already answered with an error result) is sent as an empty object.
                        let input = serde_json::from_str::<Value>(&call.arguments)
                            .ok()
                            .filter(Value::is_object)
                            .unwrap_or_else(|| json!({}));
                        push(
                            "assistant",
                            json!({"type": "tool_use", "id": wire(&call.id), "name": call.name, "input": input}),
                        );
                    }
                }
                HistoryItem::ToolResult { result } => push(
                    "user",
                    json!({"type": "tool_result", "tool_use_id": wire(&result.tool_call_id), "content": result.output, "is_error": result.is_error}),
                ),
            }
        }
        let messages: Vec<Value> =
            messages.into_iter().map(|(role, content)| json!({"role": role, "content": content})).collect();
        let mut body = json!({
            "model": self.model,
            "max_tokens": self.max_tokens,
            "stream": true,
            "system": request.system,
            "messages": messages,
        });
        if !request.tools.is_empty() {
            body["tools"] = request
                .tools
                .iter()
                .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.input_schema}))
                .collect();
        }
        body
    }
}

#[async_trait]
impl ModelProvider for AnthropicProvider {
    fn with_model(&self, model: &str) -> Option<std::sync::Arc<dyn ModelProvider>> {
        Some(std::sync::Arc::new(AnthropicProvider::new(
            self.client.clone(),
            &self.base_url,
            model,
            self.api_key.clone(),
            self.max_tokens,
        )))
    }

    async fn stream(&self, request: &ModelRequest) -> Result<ModelStream, ProviderError> {
        let mut headers = HeaderMap::new();
        headers.insert("anthropic-version", HeaderValue::from_static(API_VERSION));
        if let Some(key) = &self.api_key {
            headers.insert("x-api-key", http::key_header(key)?);
        }
        let response = http::post_json(&self.client, &self.url, headers, &self.body(request)).await?;
        Ok(sse::decode(Box::pin(response.bytes_stream()), MessagesDecoder::default()))
    }

    fn model(&self) -> &str {
        &self.model
    }

    async fn context_window(&self) -> Option<u64> {
        if self.base_url.ends_with("api.anthropic.com") {
            return super::window::known(&self.model);
        }
        // A local server speaking Messages (llama.cpp does): ask it as an OpenAI-compatible one.
        super::window::openai_compatible(&self.client, &format!("{}/v1", self.base_url), &self.model).await
    }
}

struct Block {
    tool: Option<(String, String)>,
    input_json: String,
    initial_input: Value,
}

#[derive(Default)]
struct MessagesDecoder {
    blocks: BTreeMap<u64, Block>,
    usage: TokenUsage,
    ending: Ending,
}

impl WireDecoder for MessagesDecoder {
    const AWAITED: &'static str = "message_stop";

    fn on_event(&mut self, event: SseEvent, out: &mut Vec<ModelEvent>) -> Result<(), ProviderError> {
        let data = sse::json("event", &event.data)?;
        let kind = data.get("type").and_then(Value::as_str).or(event.event.as_deref()).unwrap_or_default();
        let index = data.get("index").and_then(Value::as_u64).unwrap_or(0);
        match kind {
            "message_start" => {
                let n = |p: &str| data.pointer(p).and_then(Value::as_u64).unwrap_or(0);
                let cached = n("/message/usage/cache_read_input_tokens");
                self.usage.input_tokens =
                    n("/message/usage/input_tokens") + cached + n("/message/usage/cache_creation_input_tokens");
                self.usage.cached_input_tokens = cached;
                self.usage.output_tokens = n("/message/usage/output_tokens");
            }
            "content_block_start" => {
                let block = data.get("content_block").cloned().unwrap_or_default();
                let tool = (block.get("type").and_then(Value::as_str) == Some("tool_use")).then(|| {
                    let s = |k: &str| block.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
                    (s("id"), s("name"))
                });
                let initial_input = block.get("input").cloned().unwrap_or_else(|| json!({}));
                self.blocks.insert(index, Block { tool, input_json: String::new(), initial_input });
            }
            "content_block_delta" => match data.pointer("/delta/type").and_then(Value::as_str) {
                Some("text_delta") => {
                    if let Some(text) = data.pointer("/delta/text").and_then(Value::as_str).filter(|t| !t.is_empty()) {
                        out.push(ModelEvent::TextDelta(text.to_string()));
                    }
                }
                Some("input_json_delta") => {
                    let part = data.pointer("/delta/partial_json").and_then(Value::as_str).unwrap_or_default();
                    if let Some(block) = self.blocks.get_mut(&index) {
                        block.input_json.push_str(part);
                    }
                }
                _ => {}
            },
            "content_block_stop" => {
                if let Some(Block { tool: Some((id, name)), input_json, initial_input }) = self.blocks.remove(&index) {
                    let arguments = if input_json.trim().is_empty() { initial_input.to_string() } else { input_json };
                    out.push(ModelEvent::ToolCall { provider_id: id, name, arguments });
                }
            }
            "message_delta" => {
                if let Some(n) = data.pointer("/usage/output_tokens").and_then(Value::as_u64) {
                    self.usage.output_tokens = n;
                }
            }
            // Tool calls went out as their blocks stopped: nothing is held back.
            "message_stop" => self.ending.complete(Some(self.usage), [], out),
            "error" => {
                let message =
                    data.pointer("/error/message").and_then(Value::as_str).unwrap_or("unknown error").to_string();
                return Err(match data.pointer("/error/type").and_then(Value::as_str) {
                    Some("overloaded_error") => ProviderError::Server { status: 529, retry_after: None, message },
                    Some("rate_limit_error") => ProviderError::RateLimited { retry_after: None, message },
                    Some("api_error") => ProviderError::Server { status: 500, retry_after: None, message },
                    _ => ProviderError::Stream(message),
                });
            }
            _ => {}
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

    fn feed(d: &mut MessagesDecoder, data: Value) -> Vec<ModelEvent> {
        let mut out = Vec::new();
        d.on_event(SseEvent { event: None, data: data.to_string() }, &mut out).unwrap();
        out
    }

    #[test]
    fn assembles_tool_use_from_json_deltas_and_reports_usage() {
        let mut d = MessagesDecoder::default();
        feed(
            &mut d,
            json!({"type":"message_start","message":{"usage":{"input_tokens":5,"cache_read_input_tokens":7,"output_tokens":1}}}),
        );
        feed(&mut d, json!({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}));
        assert_eq!(
            feed(&mut d, json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}})),
            vec![ModelEvent::TextDelta("Hi".into())]
        );
        feed(
            &mut d,
            json!({"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"get_current_time","input":{}}}),
        );
        feed(
            &mut d,
            json!({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"timezone\":"}}),
        );
        feed(
            &mut d,
            json!({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"\"UTC\"}"}}),
        );
        assert_eq!(
            feed(&mut d, json!({"type":"content_block_stop","index":1})),
            vec![ModelEvent::ToolCall {
                provider_id: "toolu_1".into(),
                name: "get_current_time".into(),
                arguments: r#"{"timezone":"UTC"}"#.into()
            }]
        );
        feed(&mut d, json!({"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9}}));
        assert_eq!(
            feed(&mut d, json!({"type":"message_stop"})),
            vec![
                ModelEvent::Usage(TokenUsage { input_tokens: 12, cached_input_tokens: 7, output_tokens: 9 }),
                ModelEvent::Finished
            ]
        );
    }

    #[test]
    fn overload_inside_the_stream_is_retryable() {
        let mut d = MessagesDecoder::default();
        let err = d
            .on_event(
                SseEvent {
                    event: Some("error".into()),
                    data: json!({"type":"error","error":{"type":"overloaded_error","message":"busy"}}).to_string(),
                },
                &mut Vec::new(),
            )
            .unwrap_err();
        assert!(err.is_retryable());
    }
}
