//! `[hooks]`: the user's pre- and post-call hooks as the config writes them (the `hooks` module runs
//! them).
//!
//! Rule: plain data; a matcher is compiled, and found wrong, where the hooks are built.

use serde::{Deserialize, Serialize};

/// Default seconds a hook may run.
pub const DEFAULT_HOOK_TIMEOUT_SECS: u64 = 30;

/// One hook as the config writes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HookConfig {
    /// A regex over the tool's name (`bash|edit_file`); empty or `*` matches every tool.
    #[serde(default)]
    pub matcher: String,
    /// Run with `bash -c` in the workspace folder.
    pub command: String,
    /// Seconds before it is stopped (and the call asks).
    #[serde(default = "default_timeout")]
    pub timeout_secs: u64,
    /// Run inside the shell sandbox (the default); `false` runs it as the user, unconfined.
    #[serde(default = "default_sandbox", skip_serializing_if = "is_true")]
    pub sandbox: bool,
}

fn default_timeout() -> u64 {
    DEFAULT_HOOK_TIMEOUT_SECS
}

fn default_sandbox() -> bool {
    true
}

fn is_true(b: &bool) -> bool {
    *b
}

/// `[hooks]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HooksConfig {
    /// Before a call runs (after the guard, before any approval).
    pub pre_tool_use: Vec<HookConfig>,
    /// After a call ran.
    pub post_tool_use: Vec<HookConfig>,
}
