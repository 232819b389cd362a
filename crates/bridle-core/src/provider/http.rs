//! The HTTP side shared by both wire formats: sending, and mapping statuses to errors.

use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderValue, RETRY_AFTER};
use reqwest::{Client, Response, StatusCode};
use serde_json::Value;

use super::ProviderError;

/// A client for model requests: connection timeout, but no overall timeout (answers stream
/// for as long as the model writes).
pub(crate) fn client() -> Result<Client, ProviderError> {
    Client::builder()
        .connect_timeout(Duration::from_secs(20))
        .read_timeout(Duration::from_secs(300))
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

    #[test]
    fn error_messages_come_from_the_json_body() {
        assert_eq!(error_message(r#"{"error":{"message":"slow down","type":"rate_limit_error"}}"#), "slow down");
        assert_eq!(error_message("  plain text "), "plain text");
        assert_eq!(error_message(""), "no details");
    }
}
