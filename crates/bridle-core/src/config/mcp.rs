//! `[mcp]`: the user's MCP servers as the config writes them (the `mcp` module starts
//! them).
//!
//! Rule: plain data; a server that cannot start is found out, and reported, where it starts.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Default seconds a server has to answer `initialize`.
pub const DEFAULT_MCP_STARTUP_SECS: u64 = 10;

/// One server as the config writes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpServerConfig {
    /// A stdio server's program.
    #[serde(default)]
    pub command: Option<String>,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Variables added to its (scrubbed) environment.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// A streamable-HTTP server's URL.
    #[serde(default)]
    pub url: Option<String>,
    /// Headers sent with every request to it (e.g. `Authorization`); never logged.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Off: listed as disabled, not started.
    #[serde(default = "enabled")]
    pub enabled: bool,
    /// Seconds it has to answer `initialize`.
    #[serde(default = "startup_secs")]
    pub startup_timeout_secs: u64,
}

fn enabled() -> bool {
    true
}

fn startup_secs() -> u64 {
    DEFAULT_MCP_STARTUP_SECS
}

/// `[mcp]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct McpConfig {
    /// The servers by name.
    pub servers: BTreeMap<String, McpServerConfig>,
}
