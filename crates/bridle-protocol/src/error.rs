//! Errors the user must see (as opposed to errors the model can fix, which are tool results):
//! [`ErrorInfo`], and [`ErrorCode`], the closed list of what can have gone wrong.
//!
//! Rule: every code a producer (the engine, a provider, the desktop shell's host, the window
//! itself) may report is a variant here, written on the wire in snake_case; a new failure gets a
//! new variant, never a string made up where it happens, and the window switches on them
//! exhaustively.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// A failure reported to the user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ErrorInfo {
    /// Stable machine-readable code, e.g. `provider_rate_limited`.
    pub code: ErrorCode,
    /// What went wrong, in words a user can act on.
    pub message: String,
    /// Whether trying the same thing again later may succeed.
    pub retryable: bool,
}

/// Declares [`ErrorCode`] with each variant's wire text written once, for serde, ts-rs and
/// [`ErrorCode::as_str`] alike.
macro_rules! error_codes {
    ($( $(#[doc = $doc:literal])+ $variant:ident = $text:literal, )*) => {
        /// Stable machine-readable code of an [`ErrorInfo`]: what went wrong, for programs and
        /// for the window to decide on (the message says it in words).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
        pub enum ErrorCode {
            $( $(#[doc = $doc])+ #[serde(rename = $text)] $variant, )*
        }

        impl ErrorCode {
            /// Every code, in declaration order.
            pub const ALL: &'static [ErrorCode] = &[$( ErrorCode::$variant ),*];

            /// The code as it is written on the wire and in the audit log, e.g. `store_write_failed`.
            pub fn as_str(self) -> &'static str {
                match self {
                    $( ErrorCode::$variant => $text, )*
                }
            }
        }
    };
}

error_codes! {
    // The engine, while it runs a session.
    /// A conversation item, plan or approval could not be written to the store.
    StoreWriteFailed = "store_write_failed",
    /// The turn failed inside Bridle (a bug or a broken invariant), not at the provider.
    TurnFailed = "turn_failed",
    /// An answer to an approval request was refused (unknown, settled, or for another call);
    /// the request stays pending.
    ApprovalRefused = "approval_refused",
    /// An undo was asked while a turn runs.
    UndoBusy = "undo_busy",
    /// A compaction was asked while a turn runs.
    CompactBusy = "compact_busy",
    /// The session's mode could not be changed.
    ModeChangeFailed = "mode_change_failed",
    /// A skill the user ran (`/name`) could not be loaded (not trusted, changed, malformed).
    SkillNotLoaded = "skill_not_loaded",
    /// A rule could not be written to the config file.
    ConfigWriteFailed = "config_write_failed",
    /// The config file could not be read again.
    ConfigReadFailed = "config_read_failed",
    /// An undo could not restore the files.
    UndoFailed = "undo_failed",
    /// A row could not be appended to the audit log.
    AuditWriteFailed = "audit_write_failed",
    /// The conversation could not be compacted.
    CompactFailed = "compact_failed",
    // The model provider, after retries.
    /// The provider rate-limited every attempt (HTTP 429).
    ProviderRateLimited = "provider_rate_limited",
    /// The provider failed on its side (HTTP 5xx) on every attempt.
    ProviderUnavailable = "provider_unavailable",
    /// The provider refused the request (HTTP 4xx: a bad key, an unknown model).
    ProviderRejected = "provider_rejected",
    /// The provider could not be reached.
    ProviderUnreachable = "provider_unreachable",
    /// The provider's stream was cut off on every attempt.
    ProviderStreamDropped = "provider_stream_dropped",
    /// The provider sent an answer Bridle cannot read.
    ProviderProtocol = "provider_protocol",
    /// The provider reported an error inside its stream.
    ProviderStreamError = "provider_stream_error",
    /// The provider could not be set up (its configuration or key).
    ProviderSetup = "provider_setup",
    // The desktop shell's session host, answering a command.
    /// The engine did not start at launch.
    NotStarted = "not_started",
    /// No session is open.
    NoSession = "no_session",
    /// The open session's engine has stopped.
    EngineClosed = "engine_closed",
    /// The store could not be read.
    StoreReadFailed = "store_read_failed",
    /// No stored session has that id.
    NoSuchSession = "no_such_session",
    /// The session's workspace folder is gone or unreadable.
    WorkspaceMissing = "workspace_missing",
    /// The session could not be opened (another process has it, its engine did not start).
    SessionOpenFailed = "session_open_failed",
    /// The session could not be deleted.
    SessionDeleteFailed = "session_delete_failed",
    /// A session's worktree could not be made, archived, restored, applied or merged.
    WorktreeFailed = "worktree_failed",
    /// The settings could not be read.
    SettingsReadFailed = "settings_read_failed",
    /// The settings could not be saved.
    SettingsSaveFailed = "settings_save_failed",
    /// The settings were refused as invalid; nothing was saved.
    SettingsInvalid = "settings_invalid",
    /// The OS keychain refused or did not answer.
    KeychainFailed = "keychain_failed",
    /// The settings were saved but the session could not be reopened under them.
    SettingsReloadFailed = "settings_reload_failed",
    /// The provider's server could not be asked for its models.
    ConnectionFailed = "connection_failed",
    /// No MCP server of the session has that name.
    McpUnknownServer = "mcp_unknown_server",
    /// The open session has no background process of that id.
    NoSuchProcess = "no_such_process",
    /// A command's argument has a value it does not accept.
    InvalidArgument = "invalid_argument",
    /// The audit log could not be read.
    AuditReadFailed = "audit_read_failed",
    /// The audit log could not be exported.
    AuditExportFailed = "audit_export_failed",
    /// A turn's hunks could not be listed or decided (the store, the files, an unknown id).
    ReviewFailed = "review_failed",
    /// A reject or unreject touched lines changed since the turn; nothing was changed.
    ReviewConflict = "review_conflict",
    // The window itself, when a command could not reach the engine.
    /// The window could not listen to the engine's events.
    EngineUnreachable = "engine_unreachable",
    /// The window could not load the open session's snapshot.
    SessionSnapshotFailed = "session_snapshot_failed",
    /// The window could not load the requests waiting for an answer.
    PendingApprovalsFailed = "pending_approvals_failed",
    /// The window could not send an op to the engine.
    SubmitFailed = "submit_failed",
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Lets a code be compared with its wire text (`info.code == "approval_refused"`).
impl PartialEq<&str> for ErrorCode {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<str> for ErrorCode {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn each_code_is_written_as_its_text_and_read_back() {
        for code in ErrorCode::ALL {
            let json = serde_json::to_value(code).unwrap();
            assert_eq!(json, serde_json::Value::String(code.as_str().to_string()));
            assert_eq!(serde_json::from_value::<ErrorCode>(json).unwrap(), *code);
            assert!(code.as_str().chars().all(|c| c.is_ascii_lowercase() || c == '_'), "{code}");
        }
    }

    #[test]
    fn an_error_info_keeps_its_wire_shape() {
        let info = ErrorInfo { code: ErrorCode::StoreWriteFailed, message: "disk full".into(), retryable: true };
        let json = serde_json::to_string(&info).unwrap();
        assert_eq!(json, r#"{"code":"store_write_failed","message":"disk full","retryable":true}"#);
    }
}
