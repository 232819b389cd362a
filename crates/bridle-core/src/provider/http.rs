//! The HTTP side shared by both wire formats: sending, and mapping statuses to errors.

use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderValue, RETRY_AFTER};
use reqwest::{Client, Response, StatusCode};
use serde_json::Value;

use super::ProviderError;

/// How long an idle connection is kept for the next request. Servers commonly close theirs after
/// 5 s (uvicorn, which vLLM and LiteLLM run on; Node's `http`); a request sent on one as the
/// server closes it fails ("connection closed before message completed"), so the client lets go
/// first. A call after a longer pause (a slow tool, an approval) opens a new connection.
const IDLE_CONNECTION_KEPT: Duration = Duration::from_secs(4);

/// A client for model requests: connection timeout, but no overall timeout (answers stream
/// for as long as the model writes).
pub(crate) fn client() -> Result<Client, ProviderError> {
    Client::builder()
        .connect_timeout(Duration::from_secs(20))
        .read_timeout(Duration::from_secs(300))
        .pool_idle_timeout(IDLE_CONNECTION_KEPT)
        .build()
        .map_err(|e| ProviderError::Setup(e.to_string()))
}

/// A header value carrying an API key (a key with characters a header cannot hold is refused).
pub(crate) fn key_header(value: &str) -> Result<HeaderValue, ProviderError> {
    HeaderValue::from_str(value)
        .map_err(|_| ProviderError::Setup("the API key contains characters not allowed in a header".into()))
}

/// POSTs `body` and returns the response if its status is a success.
pub(crate) async fn post_json(
    client: &Client,
    url: &str,
    headers: HeaderMap,
    body: &Value,
) -> Result<Response, ProviderError> {
    let response =
        client.post(url).headers(headers).json(body).send().await.map_err(|e| ProviderError::Connect(describe(&e)))?;
    let status = response.status();
    if status.is_success() {
        return Ok(response);
    }
    let retry_after = retry_after(response.headers());
    let text = response.text().await.unwrap_or_default();
    let message = error_message(&text);
    Err(match status {
        StatusCode::TOO_MANY_REQUESTS => ProviderError::RateLimited { retry_after, message },
        s if s.is_server_error() || s == StatusCode::REQUEST_TIMEOUT || s == StatusCode::CONFLICT => {
            ProviderError::Server { status: s.as_u16(), retry_after, message }
        }
        s => ProviderError::Rejected { status: s.as_u16(), message },
    })
}

/// The error chain of a reqwest error in one line (reqwest's own Display omits the cause).
pub(crate) fn describe(error: &reqwest::Error) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// `retry-after-ms` (OpenAI), then `retry-after` in seconds or as an HTTP date.
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    if let Some(ms) =
        headers.get("retry-after-ms").and_then(|v| v.to_str().ok()).and_then(|v| v.trim().parse::<f64>().ok())
    {
        if ms.is_finite() && ms >= 0.0 {
            return Some(Duration::from_secs_f64(ms / 1000.0));
        }
    }
    let value = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(secs) = value.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs));
    }
    let date = chrono::DateTime::parse_from_rfc2822(value).ok()?;
    let wait = date.with_timezone(&chrono::Utc) - chrono::Utc::now();
    Some(wait.to_std().unwrap_or(Duration::ZERO))
}

/// The provider's own error message out of a JSON error body, else the body itself (cut).
fn error_message(body: &str) -> String {
    let from_json = serde_json::from_str::<Value>(body).ok().and_then(|v| {
        v.pointer("/error/message").or_else(|| v.get("message")).and_then(Value::as_str).map(str::to_owned)
    });
    let text = from_json.unwrap_or_else(|| body.trim().to_string());
    if text.is_empty() {
        return "no details".into();
    }
    text.chars().take(500).collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn reads_retry_after_in_its_three_forms() {
        let mut h = HeaderMap::new();
        h.insert(RETRY_AFTER, "2".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_secs(2)));
        h.insert("retry-after-ms", "1500".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_millis(1500)));
        let mut h = HeaderMap::new();
        let soon = (chrono::Utc::now() + chrono::Duration::seconds(30)).to_rfc2822();
        h.insert(RETRY_AFTER, soon.parse().unwrap());
        let wait = retry_after(&h).unwrap();
        assert!(wait > Duration::from_secs(25) && wait <= Duration::from_secs(30), "{wait:?}");
    }

    /// A model server (wiremock, which keeps its connections open) behind a port that counts the
    /// connections made to it.
    async fn keep_alive_server() -> (wiremock::MockServer, String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
        let server = wiremock::MockServer::start().await;
        wiremock::Mock::given(wiremock::matchers::method("POST"))
            .respond_with(wiremock::ResponseTemplate::new(200).set_body_json(serde_json::json!({})))
            .mount(&server)
            .await;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/v1/chat", listener.local_addr().unwrap());
        let accepted = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let (counted, behind) = (accepted.clone(), *server.address());
        tokio::spawn(async move {
            while let Ok((mut client, _)) = listener.accept().await {
                counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                tokio::spawn(async move {
                    let mut server = tokio::net::TcpStream::connect(behind).await.unwrap();
                    let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                });
            }
        });
        (server, url, accepted)
    }

    #[tokio::test]
    async fn an_idle_connection_is_let_go_before_servers_commonly_close_theirs() {
        let (_server, url, accepted) = keep_alive_server().await;
        let client = client().unwrap();
        let ask =
            || async { post_json(&client, &url, HeaderMap::new(), &serde_json::json!({})).await.unwrap().text().await };
        ask().await.unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;
        ask().await.unwrap();
        assert_eq!(accepted.load(std::sync::atomic::Ordering::SeqCst), 1, "a connection is reused soon after");
        // A common server closes its idle connection at 5 s: the client has let it go by then.
        tokio::time::sleep(Duration::from_millis(4_700)).await;
        ask().await.unwrap();
        assert_eq!(accepted.load(std::sync::atomic::Ordering::SeqCst), 2, "the idle connection was kept");
    }

    #[test]
    fn error_messages_come_from_the_json_body() {
        assert_eq!(error_message(r#"{"error":{"message":"slow down","type":"rate_limit_error"}}"#), "slow down");
        assert_eq!(error_message("  plain text "), "plain text");
        assert_eq!(error_message(""), "no details");
    }
}
