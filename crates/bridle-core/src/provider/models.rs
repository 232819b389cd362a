//! The models a configured server offers (`bridle models`, Settings).
//!
//! Rule: the list is the server's own (`GET /v1/models` for the OpenAI and Anthropic kinds,
//! `GET /api/tags` for Ollama); a window is given where the list says it (vLLM's
//! `max_model_len`), where llama.cpp's `/props` says it for the one model the server lists (asked
//! as a session asks, [`window::llama_cpp`], within its 2 s), or the model is a known hosted one;
//! else it is unknown.

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
    let mut listed: Vec<(String, Option<u64>)> =
        entries(&body).into_iter().map(|(id, m)| (id, m.get("max_model_len").and_then(Value::as_u64))).collect();
    // llama.cpp lists the one model it serves, without its window: `/props` has it, and is
    // asked before the table, as the session asks. Once, and only when the listing has no window.
    if let [(_, served @ None)] = listed.as_mut_slice() {
        if config.kind != ProviderKind::Ollama {
            *served = tokio::time::timeout(window::ASK_LIMIT, window::llama_cpp(&client, base)).await.ok().flatten();
        }
    }
    let mut models: Vec<ModelInfo> = listed
        .into_iter()
        .map(|(id, served)| {
            let context_window = served.or_else(|| window::known(&id));
            ModelInfo { id, context_window }
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use pretty_assertions::assert_eq;
    use serde_json::json;
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};

    use super::*;

    fn config(kind: ProviderKind, base_url: String) -> ProviderConfig {
        ProviderConfig { kind, base_url, model: "m".into(), context_window: None, max_output_tokens: 1024 }
    }

    async fn server(models: Value, props: Option<Value>) -> MockServer {
        let server = MockServer::start().await;
        Mock::given(method("GET"))
            .and(path("/v1/models"))
            .respond_with(ResponseTemplate::new(200).set_body_json(models))
            .mount(&server)
            .await;
        if let Some(props) = props {
            Mock::given(method("GET"))
                .and(path("/props"))
                .respond_with(ResponseTemplate::new(200).set_body_json(props))
                .mount(&server)
                .await;
        }
        server
    }

    fn model(id: &str, context_window: Option<u64>) -> ModelInfo {
        ModelInfo { id: id.into(), context_window }
    }

    /// Issue 27: the one model a llama.cpp server lists gets the window `/props` says, for the
    /// OpenAI kind (base `/v1`) and the Anthropic kind (base the root) alike.
    #[tokio::test]
    async fn the_one_model_of_a_llama_cpp_server_gets_the_window_props_says() {
        let props = json!({"default_generation_settings": {"n_ctx": 4096}});
        // A local alias named like a hosted model: what the server serves wins over the table.
        for id in ["smollm2", "gpt-4o-local"] {
            let s =
                server(json!({"object": "list", "data": [{"id": id, "object": "model"}]}), Some(props.clone())).await;
            for config in
                [config(ProviderKind::Openai, format!("{}/v1", s.uri())), config(ProviderKind::Anthropic, s.uri())]
            {
                assert_eq!(list(&config, None).await.unwrap(), [model(id, Some(4096))], "{:?}", config.kind);
            }
        }
    }

    #[tokio::test]
    async fn props_is_not_asked_for_several_models_and_its_absence_leaves_the_table() {
        let props = json!({"default_generation_settings": {"n_ctx": 4096}});
        let several = server(json!({"data": [{"id": "a"}, {"id": "gpt-4o"}]}), Some(props)).await;
        let listed = list(&config(ProviderKind::Openai, format!("{}/v1", several.uri())), None).await.unwrap();
        assert_eq!(listed, [model("a", None), model("gpt-4o", Some(128_000))]);
        let asked = several.received_requests().await.unwrap();
        assert!(asked.iter().all(|r| r.url.path() != "/props"), "{asked:?}");
        // A hosted server without /props: the table, else unknown.
        let hosted = server(json!({"data": [{"id": "gpt-4.1"}]}), None).await;
        let listed = list(&config(ProviderKind::Openai, format!("{}/v1", hosted.uri())), None).await.unwrap();
        assert_eq!(listed, [model("gpt-4.1", Some(1_047_576))]);
        // vLLM's own max_model_len needs no question.
        let vllm = server(json!({"data": [{"id": "q", "max_model_len": 8192}]}), None).await;
        let listed = list(&config(ProviderKind::Openai, format!("{}/v1", vllm.uri())), None).await.unwrap();
        assert_eq!(listed, [model("q", Some(8192))]);
        assert_eq!(vllm.received_requests().await.unwrap().len(), 1);
    }
}
