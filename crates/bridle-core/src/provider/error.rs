//! Provider failures, typed so retry decisions never depend on message text.

use std::time::Duration;

use bridle_protocol::{ErrorCode, ErrorInfo};

/// Why a model request failed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ProviderError {
    /// HTTP 429.
    #[error("rate limited by the provider (HTTP 429): {message}")]
    RateLimited {
        /// When the provider said to come back.
        retry_after: Option<Duration>,
        /// The provider's message.
        message: String,
    },
    /// HTTP 5xx (and 408, 409: transient on every major provider).
    #[error("the provider failed (HTTP {status}): {message}")]
    Server {
        /// Status code.
        status: u16,
        /// When the provider said to come back.
        retry_after: Option<Duration>,
        /// The provider's message.
        message: String,
    },
    /// Any other HTTP error: the request itself is wrong (auth, model name, payload).
    #[error("the provider refused the request (HTTP {status}): {message}")]
    Rejected {
        /// Status code.
        status: u16,
        /// The provider's message.
        message: String,
    },
    /// The connection could not be made or broke before an answer began.
    #[error("cannot reach the provider: {0}")]
    Connect(String),
    /// The answer's stream ended or broke before it was complete.
    #[error("the provider's stream was cut off: {0}")]
    StreamDropped(String),
    /// The provider sent something that is not its wire format.
    #[error("the provider sent a malformed answer: {0}")]
    Protocol(String),
    /// The provider reported an error inside the stream.
    #[error("the provider reported an error: {0}")]
    Stream(String),
    /// Bridle could not be set up to talk to the provider.
    #[error("provider setup failed: {0}")]
    Setup(String),
}

impl ProviderError {
    /// Whether the same request may succeed later.
    pub fn is_retryable(&self) -> bool {
        matches!(self, Self::RateLimited { .. } | Self::Server { .. } | Self::Connect(_) | Self::StreamDropped(_))
    }

    /// The delay the provider asked for.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Self::RateLimited { retry_after, .. } | Self::Server { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// The stable code shown to users and scripts.
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::RateLimited { .. } => ErrorCode::ProviderRateLimited,
            Self::Server { .. } => ErrorCode::ProviderUnavailable,
            Self::Rejected { .. } => ErrorCode::ProviderRejected,
            Self::Connect(_) => ErrorCode::ProviderUnreachable,
            Self::StreamDropped(_) => ErrorCode::ProviderStreamDropped,
            Self::Protocol(_) => ErrorCode::ProviderProtocol,
            Self::Stream(_) => ErrorCode::ProviderStreamError,
            Self::Setup(_) => ErrorCode::ProviderSetup,
        }
    }

    /// The error as the user sees it, after `attempts` tries.
    pub fn to_info(&self, attempts: u32) -> ErrorInfo {
        let tries = if attempts > 1 { format!(" (gave up after {attempts} attempts)") } else { String::new() };
        ErrorInfo { code: self.code(), message: format!("{self}{tries}"), retryable: self.is_retryable() }
    }
}
