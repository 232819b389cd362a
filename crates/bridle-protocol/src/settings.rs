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
    /// Which hosts sandboxed commands may reach (`[sandbox.network]`).
    pub network: NetworkSettings,
    /// The hosts a person allowed for the running session (`host:port`), when one runs.
    pub session_hosts: Vec<String>,
    /// Turn limits.
    pub limits: LimitSettings,
    /// The provider kinds to choose from.
    pub kinds: Vec<ProviderKindInfo>,
    /// The configured MCP servers (`[mcp.servers.NAME]`), as the config has them.
    pub mcp_servers: Vec<McpServerSettings>,
    /// What the managed policy sets, shown read-only (DESIGN §17); its deny entries are not in
    /// `rules` or `network`, which are the user's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub managed: Option<Vec<ManagedSetting>>,
    /// The modes the managed policy allows; absent, every mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub allowed_modes: Option<Vec<Mode>>,
}

/// One setting the managed policy fixes: the user cannot change or loosen it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ManagedSetting {
    /// The config key, e.g. `rules.deny`.
    pub key: String,
    /// Its value, as TOML.
    pub value: String,
    /// Why it cannot be changed here (names the managed file).
    pub reason: String,
}

/// One configured MCP server, as the Settings view shows and edits it. Its `env` and `headers`
/// may hold secrets: only their names travel, and an edit keeps their values.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct McpServerSettings {
    /// Its name: its tools are `mcp__<name>__<tool>`.
    pub name: String,
    /// A stdio server's program (empty for a streamable-HTTP one).
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// A streamable-HTTP server's URL (empty for a stdio one).
    pub url: String,
    /// Whether it starts with the session.
    pub enabled: bool,
    /// Seconds it has to answer `initialize`.
    pub startup_timeout_secs: u32,
    /// The names of the variables the config adds to its environment (values not shown).
    #[serde(default)]
    pub env_names: Vec<String>,
    /// The names of the headers sent to it (values not shown).
    #[serde(default)]
    pub header_names: Vec<String>,
}

/// Where a server stands in the running session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum McpStatus {
    /// Starting (or restarting): its tools are not offered yet.
    Starting,
    /// Answered `initialize` and listed its tools: they are offered.
    Ready,
    /// Did not start, or stopped: see the error; its tools are not offered.
    Failed,
    /// Off in the config: not started.
    Disabled,
}

impl McpStatus {
    /// The name as the wire writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            McpStatus::Starting => "starting",
            McpStatus::Ready => "ready",
            McpStatus::Failed => "failed",
            McpStatus::Disabled => "disabled",
        }
    }
}

/// One server of the running session, with its state and tools (`bridle mcp list --json`, the
/// Settings view's live list, the shell's `mcp-status` event).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct McpServerStatus {
    /// Its name in the config.
    pub name: String,
    /// Where it stands.
    pub status: McpStatus,
    /// Why it failed or stopped, with the end of its stderr.
    pub error: Option<String>,
    /// Its tools as the model sees them (`mcp__<server>__<tool>`).
    pub tools: Vec<String>,
}

/// The running session's MCP servers as the window gets them, pushed on `mcp-status` or
/// answered by `mcp_status` and `mcp_restart`. `seq` grows with every change of the servers,
/// across the sessions one window opens, so the window keeps the newest list whichever way it
/// came: an answer that arrives after a newer push is older than what it holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct McpServerList {
    /// The list's number: a list with a greater one reflects later changes.
    #[ts(type = "number")]
    pub seq: u64,
    /// Every configured server, by name.
    pub servers: Vec<McpServerStatus>,
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
    /// Which hosts sandboxed commands may reach.
    pub network: NetworkSettings,
    /// Turn limits.
    pub limits: LimitSettings,
}

/// How a host no pattern names is treated (`[sandbox.network] mode`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum NetworkMode {
    /// No network at all: no proxy, nothing leaves the sandbox.
    #[default]
    Off,
    /// A host no pattern names is asked about while its connection waits.
    Ask,
    /// Only the hosts `allow` names; any other is refused.
    Allow,
}

impl NetworkMode {
    /// The name in the config, results and the window.
    pub fn as_str(self) -> &'static str {
        match self {
            NetworkMode::Off => "off",
            NetworkMode::Ask => "ask",
            NetworkMode::Allow => "allow",
        }
    }
}

/// `[sandbox.network]` as the Settings view shows and edits it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct NetworkSettings {
    /// What a host no pattern names gets.
    pub mode: NetworkMode,
    /// Host patterns reached without asking (`crates.io`, `*.npmjs.org`, `github.com:22`).
    pub allow: Vec<String>,
    /// Host patterns always refused.
    pub deny: Vec<String>,
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

/// One of the three rule lists of `[rules]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum RuleList {
    /// `allow = [...]`
    Allow,
    /// `ask = [...]`
    Ask,
    /// `deny = [...]`
    Deny,
}

impl RuleList {
    /// The key in `[rules]`.
    pub fn as_str(self) -> &'static str {
        match self {
            RuleList::Allow => "allow",
            RuleList::Ask => "ask",
            RuleList::Deny => "deny",
        }
    }
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
