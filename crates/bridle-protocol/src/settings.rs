//! What the Settings view reads and writes: the config's user-facing part, the key's status
//! (never the key itself), the models a server offers, and what a rule means.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::Mode;

/// The model server, as the Settings form edits it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ProviderSettings {
    /// `openai`, `anthropic` or `ollama`.
    pub kind: String,
    /// The server's base URL (OpenAI-compatible URLs include `/v1`).
    pub base_url: String,
    /// The model id.
    pub model: String,
    /// The model's context window in tokens, when the user sets one.
    #[ts(type = "number | null")]
    pub context_window: Option<u64>,
}

/// `[rules]`: one pattern per entry.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RuleSettings {
    /// Allowed without asking.
    pub allow: Vec<String>,
    /// Always asked.
    pub ask: Vec<String>,
    /// Always refused.
    pub deny: Vec<String>,
}

/// `[limits]` the Settings view edits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct LimitSettings {
    /// Model requests per turn.
    pub max_steps: u32,
    /// Seconds a tool call may run.
    #[ts(type = "number")]
    pub tool_timeout_secs: u64,
    /// Seconds an approval request waits.
    #[ts(type = "number")]
    pub approval_timeout_secs: u64,
    /// Provider retries before giving up.
    pub max_retries: u32,
}

/// A provider kind the form offers, with what it defaults to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ProviderKindInfo {
    /// `openai`, `anthropic` or `ollama`.
    pub kind: String,
    /// The server it talks to when no base URL is given.
    pub default_base_url: String,
    /// The environment variable a key may come from instead of the keychain.
    pub key_variable: String,
}

/// Everything the Settings view shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Settings {
    /// The config file these settings are saved to.
    pub config_file: String,
    /// The workspace folder of this window.
    pub workspace: String,
    /// Whether a provider is configured (false: first run).
    pub configured: bool,
    /// The provider (defaults for a first run).
    pub provider: ProviderSettings,
    /// Where this provider's key is: `keychain`, `environment`, or null for none.
    pub key_source: Option<String>,
    /// Approval mode.
    pub mode: Mode,
    /// The user's rules.
    pub rules: RuleSettings,
    /// Whether sandboxed commands may use the network.
    pub sandbox_network: bool,
    /// Turn limits.
    pub limits: LimitSettings,
    /// The provider kinds to choose from.
    pub kinds: Vec<ProviderKindInfo>,
    /// The configured MCP servers (`[mcp.servers.NAME]`), as the config has them.
    pub mcp_servers: Vec<McpServerSettings>,
}

/// One configured MCP server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct McpServerSettings {
    /// Its name: its tools are `mcp__<name>__<tool>`.
    pub name: String,
    /// The command line (stdio) or the URL (streamable HTTP).
    pub target: String,
    /// Whether it starts with the session.
    pub enabled: bool,
}

/// What the Settings view saves. The key, when given, goes to the OS keychain only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SettingsUpdate {
    /// The provider.
    pub provider: ProviderSettings,
    /// A new API key; null or empty keeps the stored one.
    pub api_key: Option<String>,
    /// Approval mode.
    pub mode: Mode,
    /// The user's rules.
    pub rules: RuleSettings,
    /// Whether sandboxed commands may use the network.
    pub sandbox_network: bool,
    /// Turn limits.
    pub limits: LimitSettings,
}

/// One model a server offers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ModelInfo {
    /// The id to put in `[provider] model`.
    pub id: String,
    /// Its context window, when known.
    #[ts(type = "number | null")]
    pub context_window: Option<u64>,
}

/// What one rule of the editor means, or why it is not valid.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RuleMeaning {
    /// The pattern as written.
    pub pattern: String,
    /// What it matches, in words; null when invalid.
    pub meaning: Option<String>,
    /// Why it is invalid; null when valid.
    pub error: Option<String>,
}
