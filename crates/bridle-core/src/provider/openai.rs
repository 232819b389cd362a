//! OpenAI-compatible Chat Completions, streamed (OpenAI, Ollama, llama.cpp, vLLM, LM Studio).

use std::collections::BTreeMap;

use async_trait::async_trait;
use bridle_protocol::{HistoryItem, TokenUsage};
use reqwest::header::{HeaderMap, AUTHORIZATION};
use serde_json::{json, Value};

use super::sse::{self, Ending, SseEvent, WireDecoder};
use super::{http, wire_ids, ModelEvent, ModelProvider, ModelRequest, ModelStream, ProviderError};

/// A Chat Completions endpoint; `base_url` includes `/v1`.
pub struct OpenAiProvider {
    client: reqwest::Client,
    base_url: String,
    url: String,
    model: String,
    api_key: Option<String>,
}

impl OpenAiProvider {
    /// A provider for `model` at `base_url`.
    pub fn new(client: reqwest::Client, base_url: &str, model: &str, api_key: Option<String>) -> Self {
        Self {
            client,
            base_url: base_url.to_string(),
            url: format!("{}/chat/completions", base_url.trim_end_matches('/')),
            model: model.to_string(),
            api_key,
        }
    }

    /// The request body for `request` (public for payload tests).
    pub fn body(&self, request: &ModelRequest) -> Value {
        let ids = wire_ids(&request.history);
        let wire = |id: &str| ids.get(id).cloned().unwrap_or_else(|| id.to_string());
        let mut messages = vec![json!({"role": "system", "content": request.system})];
        for item in &request.history {
            messages.push(match item {
                HistoryItem::User { text } => json!({"role": "user", "content": text}),
                HistoryItem::Assistant { text, tool_calls, .. } => {
                    let mut msg = json!({"role": "assistant", "content": if text.is_empty() { Value::Null } else { json!(text) }});
                    if !tool_calls.is_empty() {
                        msg["tool_calls"] = tool_calls
                            .iter()
                            .map(|c| json!({"id": wire(&c.id), "type": "function", "function": {"name": c.name, "arguments": c.arguments}}))
                            .collect();
                    }
                    msg
                }
                HistoryItem::ToolResult { result } => {
                    json!({"role": "tool", "tool_call_id": wire(&result.tool_call_id), "content": result.output})
                }
            });
        }
        let mut body = json!({
            "model": self.model,
            "stream": true,
            "stream_options": {"include_usage": true},
            "messages": messages,
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
impl ModelProvider for OpenAiProvider {
    fn with_model(&self, model: &str) -> Option<std::sync::Arc<dyn ModelProvider>> {
        Some(std::sync::Arc::new(OpenAiProvider::new(self.client.clone(), &self.base_url, model, self.api_key.clone())))
    }

    async fn stream(&self, request: &ModelRequest) -> Result<ModelStream, ProviderError> {
        let mut headers = HeaderMap::new();
        if let Some(key) = &self.api_key {
            headers.insert(AUTHORIZATION, http::key_header(&format!("Bearer {key}"))?);
        }
        let response = match http::post_json(&self.client, &self.url, headers, &self.body(request)).await {
            Ok(response) => response,
            Err(e) => {
                let models = format!("{}/models", self.base_url.trim_end_matches('/'));
                return Err(super::models::name_the_models(e, &self.client, &models).await);
            }
        };
        Ok(sse::decode(Box::pin(response.bytes_stream()), ChatDecoder::default()))
    }

    fn model(&self) -> &str {
        &self.model
    }

    async fn context_window(&self) -> Option<u64> {
        super::window::openai_compatible(&self.client, &self.base_url, &self.model).await
    }
}

#[derive(Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

#[derive(Default)]
struct ChatDecoder {
    calls: BTreeMap<u64, PartialCall>,
    finish_seen: bool,
    ending: Ending,
}

impl ChatDecoder {
    /// The answer is complete: its calls, in index order, then the end.
    fn complete(&mut self, out: &mut Vec<ModelEvent>) {
        let calls = std::mem::take(&mut self.calls).into_values().map(|call| ModelEvent::ToolCall {
            provider_id: call.id,
            name: call.name,
            arguments: call.arguments,
        });
        self.ending.complete(None, calls, out);
    }
}

impl WireDecoder for ChatDecoder {
    const AWAITED: &'static str = "the answer was complete";

    fn on_event(&mut self, event: SseEvent, out: &mut Vec<ModelEvent>) -> Result<(), ProviderError> {
        if event.data.trim() == "[DONE]" {
            self.complete(out);
            return Ok(());
        }
        let chunk = sse::json("chunk", &event.data)?;
        if let Some(err) = chunk.get("error") {
            let message = err.get("message").and_then(Value::as_str).unwrap_or("unknown error").to_string();
            return Err(ProviderError::Stream(message));
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            let n = |p: &str| usage.pointer(p).and_then(Value::as_u64).unwrap_or(0);
            out.push(ModelEvent::Usage(TokenUsage {
                input_tokens: n("/prompt_tokens"),
                cached_input_tokens: n("/prompt_tokens_details/cached_tokens"),
                output_tokens: n("/completion_tokens"),
            }));
        }
        let Some(choice) = chunk.pointer("/choices/0") else { return Ok(()) };
        if let Some(text) = choice.pointer("/delta/content").and_then(Value::as_str).filter(|t| !t.is_empty()) {
            out.push(ModelEvent::TextDelta(text.to_string()));
        }
        if let Some(deltas) = choice.pointer("/delta/tool_calls").and_then(Value::as_array) {
            for (position, delta) in deltas.iter().enumerate() {
                let index = delta.get("index").and_then(Value::as_u64).unwrap_or(position as u64);
                let call = self.calls.entry(index).or_default();
                if let Some(id) = delta.get("id").and_then(Value::as_str).filter(|s| !s.is_empty()) {
                    call.id = id.to_string();
                }
                if let Some(name) = delta.pointer("/function/name").and_then(Value::as_str) {
                    call.name.push_str(name);
                }
                if let Some(args) = delta.pointer("/function/arguments").and_then(Value::as_str) {
                    call.arguments.push_str(args);
                }
            }
        }
        if choice.get("finish_reason").is_some_and(|r| !r.is_null()) {
            self.finish_seen = true;
        }
        Ok(())
    }

    fn ending(&self) -> &Ending {
        &self.ending
    }

    // Some servers end with a finish_reason and no `[DONE]`: that answer is complete.
    fn complete_at_end(&mut self, out: &mut Vec<ModelEvent>) -> bool {
        if self.finish_seen {
            self.complete(out);
        }
        self.finish_seen
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn feed(decoder: &mut ChatDecoder, data: &str) -> Vec<ModelEvent> {
        let mut out = Vec::new();
        decoder.on_event(SseEvent { event: None, data: data.into() }, &mut out).unwrap();
        out
    }

    #[test]
    fn assembles_chunked_tool_calls_by_index() {
        let mut d = ChatDecoder::default();
        feed(
            &mut d,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":1,"id":"b","function":{"name":"two","arguments":"{\"x\""}}]}}]}"#,
        );
        feed(
            &mut d,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"one","arguments":""}}]}}]}"#,
        );
        feed(
            &mut d,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":1,"function":{"arguments":":1}"}}]},"finish_reason":"tool_calls"}]}"#,
        );
        let usage = feed(
            &mut d,
            r#"{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":3,"prompt_tokens_details":{"cached_tokens":4}}}"#,
        );
        assert_eq!(
            usage,
            vec![ModelEvent::Usage(TokenUsage { input_tokens: 10, cached_input_tokens: 4, output_tokens: 3 })]
        );
        let end = feed(&mut d, "[DONE]");
        assert_eq!(
            end,
            vec![
                ModelEvent::ToolCall { provider_id: "a".into(), name: "one".into(), arguments: String::new() },
                ModelEvent::ToolCall { provider_id: "b".into(), name: "two".into(), arguments: "{\"x\":1}".into() },
                ModelEvent::Finished,
            ]
        );
    }

    #[test]
    fn a_stream_cut_before_finish_is_an_error() {
        let mut d = ChatDecoder::default();
        feed(&mut d, r#"{"choices":[{"delta":{"content":"Hel"}}]}"#);
        assert!(matches!(d.finish(&mut Vec::new()), Err(ProviderError::StreamDropped(_))));
    }
}
