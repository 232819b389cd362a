//! When and how long to wait before trying a failed model request again.

use std::time::Duration;

use rand::Rng;

use super::ProviderError;

/// Backoff for retryable provider errors; a `retry-after` from the provider wins.
#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    /// Retries after the first attempt.
    pub max_retries: u32,
    /// First backoff delay.
    pub base_delay: Duration,
    /// Longest backoff delay.
    pub max_delay: Duration,
    /// Longest `retry-after` honoured; a provider asking for more is waited on this long.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: 4,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(30),
            max_retry_after: Duration::from_secs(120),
        }
    }
}

impl RetryPolicy {
    /// The delay before retry number `retry` (0-based), or `None` when giving up.
    pub fn delay(&self, error: &ProviderError, retry: u32) -> Option<Duration> {
        if !error.is_retryable() || retry >= self.max_retries {
            return None;
        }
        if let Some(after) = error.retry_after() {
            return Some(after.min(self.max_retry_after));
        }
        let exp = self.base_delay.saturating_mul(2u32.saturating_pow(retry.min(16)));
        let capped = exp.min(self.max_delay);
        // ±20 % jitter so clients that failed together do not retry together.
        let jitter = rand::rng().random_range(0.8..=1.2);
        Some(capped.mul_f64(jitter))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn retry_after_wins_and_is_capped() {
        let policy = RetryPolicy::default();
        let e = ProviderError::RateLimited { retry_after: Some(Duration::from_secs(3)), message: String::new() };
        assert_eq!(policy.delay(&e, 0), Some(Duration::from_secs(3)));
        let e = ProviderError::RateLimited { retry_after: Some(Duration::from_secs(9999)), message: String::new() };
        assert_eq!(policy.delay(&e, 0), Some(Duration::from_secs(120)));
    }

    #[test]
    fn backoff_grows_and_stops() {
        let policy = RetryPolicy::default();
        let e = ProviderError::Connect("refused".into());
        let first = policy.delay(&e, 0).unwrap();
        let third = policy.delay(&e, 2).unwrap();
        assert!(first <= Duration::from_millis(600) && third >= Duration::from_millis(1600));
        assert_eq!(policy.delay(&e, 4), None);
        assert_eq!(policy.delay(&ProviderError::Rejected { status: 401, message: String::new() }, 0), None);
    }
}
