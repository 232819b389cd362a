//! Errors the user must see (as opposed to errors the model can fix, which are tool results).

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// A failure reported to the user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ErrorInfo {
    /// Stable machine-readable code, e.g. `provider_rate_limited`.
    pub code: String,
    /// What went wrong, in words a user can act on.
    pub message: String,
    /// Whether trying the same thing again later may succeed.
    pub retryable: bool,
}
