//! What context window a model server really serves.
//!
//! Rule: asked once, with a 2 s limit, and a server that does not answer (or answers something
//! else) is not an error — the answer is then only what is known: llama.cpp `GET /props`
//! (`default_generation_settings.n_ctx`), Ollama `POST /api/show` (`*.context_length` of the
//! model), LM Studio `GET /api/v0/models/{id}` (`loaded_context_length`), vLLM `GET /v1/models`
//! (`max_model_len`), then a small table of hosted models, then nothing.

use std::time::Duration;

use serde_json::Value;

/// How long a server has to say what it serves.
pub const ASK_LIMIT: Duration = Duration::from_secs(2);

/// Hosted models' windows, by name prefix (longest match wins).
const KNOWN: &[(&str, u64)] = &[
    ("claude-", 200_000),
    ("gpt-4.1", 1_047_576),
    ("gpt-4o", 128_000),
    ("gpt-4-turbo", 128_000),
    ("gpt-5", 400_000),
    ("o1", 200_000),
    ("o3", 200_000),
    ("o4-mini", 200_000),
    ("gpt-3.5-turbo", 16_385),
];

/// A hosted model's window from the table.
pub fn known(model: &str) -> Option<u64> {
    KNOWN.iter().filter(|(prefix, _)| model.starts_with(prefix)).max_by_key(|(p, _)| p.len()).map(|(_, w)| *w)
}

async fn get_json(client: &reqwest::Client, url: &str) -> Option<Value> {
    let response = tokio::time::timeout(ASK_LIMIT, client.get(url).send()).await.ok()?.ok()?;
    if !response.status().is_success() {
        return None;
    }
    tokio::time::timeout(ASK_LIMIT, response.json::<Value>()).await.ok()?.ok()
}

/// The server root of an OpenAI-compatible base URL (`http://h:8080/v1` → `http://h:8080`).
fn root(base_url: &str) -> &str {
    let trimmed = base_url.trim_end_matches('/');
    trimmed.strip_suffix("/v1").unwrap_or(trimmed)
}

/// What llama.cpp's `GET /props` says its server serves (`default_generation_settings.n_ctx`),
/// for the server at `base_url` (its root, or its `/v1`). Not bounded as a whole: callers are.
pub async fn llama_cpp(client: &reqwest::Client, base_url: &str) -> Option<u64> {
    let props = get_json(client, &format!("{}/props", root(base_url))).await?;
    let n = props.pointer("/default_generation_settings/n_ctx").or_else(|| props.get("n_ctx"));
    n.and_then(Value::as_u64).filter(|n| *n > 0)
}

/// What an OpenAI-compatible server serves for `model` (llama.cpp, LM Studio, vLLM), else the
/// table; all within [`ASK_LIMIT`].
pub async fn openai_compatible(client: &reqwest::Client, base_url: &str, model: &str) -> Option<u64> {
    let ask = async {
        let root = root(base_url);
        if let Some(n) = llama_cpp(client, base_url).await {
            return Some(n);
        }
        if let Some(info) = get_json(client, &format!("{root}/api/v0/models/{model}")).await {
            if let Some(n) =
                info.get("loaded_context_length").or_else(|| info.get("max_context_length")).and_then(Value::as_u64)
            {
                return Some(n);
            }
        }
        let models = get_json(client, &format!("{}/models", base_url.trim_end_matches('/'))).await?;
        models
            .get("data")?
            .as_array()?
            .iter()
            .find(|m| m.get("id").and_then(Value::as_str) == Some(model))?
            .get("max_model_len")
            .and_then(Value::as_u64)
    };
    match tokio::time::timeout(ASK_LIMIT, ask).await {
        Ok(Some(n)) => Some(n),
        _ => known(model),
    }
}

/// The model's own window from Ollama's `/api/show`.
pub async fn ollama(client: &reqwest::Client, base_url: &str, model: &str) -> Option<u64> {
    let url = format!("{}/api/show", base_url.trim_end_matches('/'));
    let ask = async {
        let response = client.post(&url).json(&serde_json::json!({"model": model})).send().await.ok()?;
        if !response.status().is_success() {
            return None;
        }
        let info: Value = response.json().await.ok()?;
        info.get("model_info")?
            .as_object()?
            .iter()
            .find(|(key, _)| key.ends_with(".context_length"))
            .and_then(|(_, v)| v.as_u64())
    };
    tokio::time::timeout(ASK_LIMIT, ask).await.ok().flatten()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};

    #[test]
    fn the_table_matches_the_longest_prefix() {
        assert_eq!(known("gpt-4o-mini"), Some(128_000));
        assert_eq!(known("gpt-4.1-mini"), Some(1_047_576));
        assert_eq!(known("claude-sonnet-4"), Some(200_000));
        assert_eq!(known("qwen2.5-coder"), None);
        assert_eq!(root("http://h:8080/v1/"), "http://h:8080");
    }

    #[tokio::test]
    async fn llama_cpp_props_vllm_models_and_ollama_show_are_read() {
        let server = MockServer::start().await;
        Mock::given(method("GET"))
            .and(path("/props"))
            .respond_with(
                ResponseTemplate::new(200)
                    .set_body_json(serde_json::json!({"default_generation_settings": {"n_ctx": 8192}})),
            )
            .mount(&server)
            .await;
        let client = reqwest::Client::new();
        assert_eq!(openai_compatible(&client, &format!("{}/v1", server.uri()), "m").await, Some(8192));

        let vllm = MockServer::start().await;
        Mock::given(method("GET"))
            .and(path("/v1/models"))
            .respond_with(
                ResponseTemplate::new(200)
                    .set_body_json(serde_json::json!({"data": [{"id": "m", "max_model_len": 4096}]})),
            )
            .mount(&vllm)
            .await;
        assert_eq!(openai_compatible(&client, &format!("{}/v1", vllm.uri()), "m").await, Some(4096));
        assert_eq!(openai_compatible(&client, &format!("{}/v1", vllm.uri()), "gpt-4o").await, Some(128_000));

        let ollama_server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/api/show"))
            .respond_with(
                ResponseTemplate::new(200)
                    .set_body_json(serde_json::json!({"model_info": {"qwen2.context_length": 32768}})),
            )
            .mount(&ollama_server)
            .await;
        assert_eq!(ollama(&client, &ollama_server.uri(), "qwen").await, Some(32768));
    }

    #[tokio::test]
    async fn a_server_that_hangs_is_given_two_seconds_and_is_no_error() {
        let server = MockServer::start().await;
        Mock::given(method("GET"))
            .respond_with(ResponseTemplate::new(200).set_delay(Duration::from_secs(30)))
            .mount(&server)
            .await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(200).set_delay(Duration::from_secs(30)))
            .mount(&server)
            .await;
        let client = reqwest::Client::new();
        let started = std::time::Instant::now();
        assert_eq!(openai_compatible(&client, &format!("{}/v1", server.uri()), "local").await, None);
        assert_eq!(ollama(&client, &server.uri(), "local").await, None);
        assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
        // An HTML page where JSON was expected is no answer either.
        let html = MockServer::start().await;
        Mock::given(method("GET"))
            .respond_with(ResponseTemplate::new(200).set_body_string("<html>hi</html>"))
            .mount(&html)
            .await;
        assert_eq!(openai_compatible(&client, &format!("{}/v1", html.uri()), "local").await, None);
    }
}
