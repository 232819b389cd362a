//! The models a configured server offers (`bridle models`, Settings).
//!
//! Rule: the list is the server's own (`GET /v1/models` for the OpenAI and Anthropic kinds,
//! `GET /api/tags` for Ollama); a window is given where the list says it (vLLM's
//! `max_model_len`) or the model is a known hosted one, else it is unknown.

use reqwest::header::{HeaderMap, HeaderValue, AUTHORIZATION};
use serde_json::Value;

use super::{http, window, ProviderError};
use crate::config::{ProviderConfig, ProviderKind};

pub use bridle_protocol::ModelInfo;

/// The models of the server `config` points at.
pub async fn list(config: &ProviderConfig, api_key: Option<String>) -> Result<Vec<ModelInfo>, ProviderError> {
    let client = http::client()?;
    let base = config.base_url.trim_end_matches('/');
    let mut headers = HeaderMap::new();
    let url = match config.kind {
        ProviderKind::Openai => {
            if let Some(key) = &api_key {
                headers.insert(AUTHORIZATION, http::key_header(&format!("Bearer {key}"))?);
            }
            format!("{base}/models")
        }
        ProviderKind::Anthropic => {
            headers.insert("anthropic-version", HeaderValue::from_static(super::anthropic::API_VERSION));
            if let Some(key) = &api_key {
                headers.insert("x-api-key", http::key_header(key)?);
            }
            format!("{base}/v1/models")
        }
        ProviderKind::Ollama => format!("{base}/api/tags"),
    };
    let response = tokio::time::timeout(std::time::Duration::from_secs(10), client.get(&url).headers(headers).send())
        .await
        .map_err(|_| ProviderError::Connect(format!("{url} did not answer within 10 s")))?
        .map_err(|e| ProviderError::Connect(http::describe(&e)))?;
    let status = response.status();
    let text = response.text().await.map_err(|e| ProviderError::Connect(http::describe(&e)))?;
    if !status.is_success() {
        return Err(ProviderError::Rejected { status: status.as_u16(), message: text.chars().take(300).collect() });
    }
    let body: Value = serde_json::from_str(&text).map_err(|_| {
        ProviderError::Protocol(format!(
            "{url} did not answer with JSON: {}",
            text.chars().take(120).collect::<String>()
        ))
    })?;
    let entries =
        body.get("data").or_else(|| body.get("models")).and_then(Value::as_array).cloned().unwrap_or_default();
    let mut models: Vec<ModelInfo> = entries
        .iter()
        .filter_map(|m| {
            let id = m.get("id").or_else(|| m.get("name")).or_else(|| m.get("model")).and_then(Value::as_str)?;
            let served = m.get("max_model_len").and_then(Value::as_u64);
            Some(ModelInfo { id: id.to_string(), context_window: served.or_else(|| window::known(id)) })
        })
        .collect();
    models.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(models)
}

/// The models of a listing, with their ids: OpenAI's and Anthropic's `data`, Ollama's `models`.
fn entries(body: &Value) -> Vec<(String, &Value)> {
    let list = body.get("data").or_else(|| body.get("models")).and_then(Value::as_array);
    list.into_iter()
        .flatten()
        .filter_map(|m| {
            let id = m.get("id").or_else(|| m.get("name")).or_else(|| m.get("model")).and_then(Value::as_str)?;
            Some((id.to_string(), m))
        })
        .collect()
}

/// A refusal that names a model gets the ids the server has (asked within 2 s), so the user
/// sees what to put in `[provider] model`.
pub(crate) async fn name_the_models(error: ProviderError, client: &reqwest::Client, url: &str) -> ProviderError {
    let ProviderError::Rejected { status, message } = error else { return error };
    if !message.to_lowercase().contains("model") {
        return ProviderError::Rejected { status, message };
    }
    let ask = async {
        let body: Value = client.get(url).send().await.ok()?.json().await.ok()?;
        let ids: Vec<String> = entries(&body).into_iter().map(|(id, _)| id).collect();
        (!ids.is_empty()).then_some(ids)
    };
    let message = match tokio::time::timeout(window::ASK_LIMIT, ask).await.ok().flatten() {
        Some(ids) => format!("{message} (the server has: {})", ids.join(", ")),
        None => message,
    };
    ProviderError::Rejected { status, message }
}
