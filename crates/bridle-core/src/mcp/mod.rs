//! The user's MCP servers (DESIGN §9) through the official Rust SDK, `rmcp`: configured servers
//! only (`[mcp.servers.NAME]`: a stdio `command`, or a streamable-HTTP `url`), started together
//! with a start-up timeout each, their tools offered as `mcp__<server>__<tool>`.
//!
//! Rules: a server that fails to start, or never answers `initialize`, is reported with its
//! error and its stderr tail and holds up nobody; its tools are simply not there. A server that
//! dies later makes its tools' calls fail with a clear error; the rest go on. Tool names are
//! prefixed, so no server can shadow a built-in. What a server returns is marked as untrusted
//! content. Stdio servers run in their own process group with the scrubbed environment (plus the
//! `env` the config gives them) and the whole group is killed when the hub goes.

mod names;
mod tool;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::service::RunningService;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use serde::{Deserialize, Serialize};
use tokio::io::AsyncBufReadExt;

use crate::tools::kill_group;

pub use names::tool_name;
pub use tool::McpTool;

/// Default seconds a server has to answer `initialize`.
pub const DEFAULT_STARTUP_SECS: u64 = 10;
/// Bytes of a server's stderr kept for its error report.
const STDERR_TAIL: usize = 2048;

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
    DEFAULT_STARTUP_SECS
}

/// `[mcp]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct McpConfig {
    /// The servers by name.
    pub servers: BTreeMap<String, McpServerConfig>,
}

/// A server's state, as `bridle mcp list` prints it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerReport {
    /// Its name in the config.
    pub name: String,
    /// `ready`, `failed` or `disabled`.
    pub status: &'static str,
    /// Why it failed, with its stderr tail.
    pub error: Option<String>,
    /// Its tools as the model sees them (`mcp__<server>__<tool>`).
    pub tools: Vec<String>,
}

type Client = RunningService<RoleClient, ()>;

/// A started (or failed) server.
struct Server {
    name: String,
    status: &'static str,
    error: Option<String>,
    client: Option<Arc<Client>>,
    tools: Vec<Arc<McpTool>>,
    /// A stdio server's process group, killed with the hub.
    group: Option<u32>,
}

/// Every configured server of a session.
#[derive(Default)]
pub struct McpHub {
    servers: Vec<Server>,
}

impl McpHub {
    /// Starts every enabled server in parallel, each within its start-up timeout; stdio ones in
    /// `cwd` with `env` (scrubbed here) plus their own `env`.
    pub async fn start(config: &McpConfig, cwd: &Path, env: impl Iterator<Item = (OsString, OsString)>) -> McpHub {
        let env = crate::tools::scrubbed_environment(env);
        let starts = config.servers.iter().map(|(name, server)| start(name, server, cwd, &env));
        McpHub { servers: futures::future::join_all(starts).await }
    }

    /// Every configured server with its state and tools.
    pub fn reports(&self) -> Vec<ServerReport> {
        self.servers
            .iter()
            .map(|s| ServerReport {
                name: s.name.clone(),
                status: s.status,
                error: s.error.clone(),
                tools: s.tools.iter().map(|t| t.name().to_string()).collect(),
            })
            .collect()
    }

    /// The tools of the servers that started, for the registry.
    pub fn tools(&self) -> Vec<Arc<McpTool>> {
        self.servers.iter().flat_map(|s| s.tools.iter().cloned()).collect()
    }

    /// The built-in tools and these servers' tools. A tool the registry refuses (a schema it
    /// cannot compile, a name taken twice) is left out and logged; the rest are offered.
    pub fn registry(&self) -> Result<crate::tools::ToolRegistry, crate::tools::RegistryError> {
        let mut registry = crate::tools::builtin_registry()?;
        for tool in self.tools() {
            let name = tool.name().to_string();
            if let Err(e) = registry.register(tool) {
                tracing::warn!("MCP tool `{name}` is not offered: {e}");
            }
        }
        Ok(registry)
    }

    /// Closes every server: stdio ones' whole process groups go, and this returns once their
    /// leaders are gone (at most a second), so no server outlives the front end.
    pub async fn shutdown(mut self) {
        let leaders = self.stop_all();
        let deadline = std::time::Instant::now() + Duration::from_secs(1);
        while leaders.iter().any(|pid| alive(*pid)) && std::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

impl McpHub {
    /// Cancels every client and kills every stdio server's group; returns the groups' leaders.
    fn stop_all(&mut self) -> Vec<u32> {
        let mut leaders = Vec::new();
        for server in &mut self.servers {
            if let Some(client) = server.client.take() {
                client.cancellation_token().cancel();
            }
            leaders.extend(server.group);
            kill_group(server.group.take());
        }
        leaders
    }
}

impl Drop for McpHub {
    fn drop(&mut self) {
        self.stop_all();
    }
}

/// Whether `pid` still runs (a zombie waiting to be reaped does not).
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat.rsplit(") ").next().is_some_and(|rest| rest.starts_with('Z')),
        Err(_) => false,
    }
}

async fn start(name: &str, config: &McpServerConfig, cwd: &Path, env: &[(OsString, OsString)]) -> Server {
    let mut server = Server {
        name: name.to_string(),
        status: "disabled",
        error: None,
        client: None,
        tools: Vec::new(),
        group: None,
    };
    if !config.enabled {
        return server;
    }
    let tail = Arc::new(Mutex::new(String::new()));
    let limit = Duration::from_secs(config.startup_timeout_secs.max(1));
    let started = tokio::time::timeout(limit, connect(config, cwd, env, &tail, &mut server.group)).await;
    let failure = match started {
        Ok(Ok(client)) => {
            let client = Arc::new(client);
            match client.list_all_tools().await {
                Ok(tools) => {
                    server.tools = tools.into_iter().map(|t| Arc::new(McpTool::new(name, t, client.clone()))).collect();
                    server.client = Some(client);
                    server.status = "ready";
                    return server;
                }
                Err(e) => format!("listing its tools failed: {e}"),
            }
        }
        Ok(Err(e)) => e,
        Err(_) => format!("it did not answer `initialize` within {} s", limit.as_secs()),
    };
    kill_group(server.group.take());
    let stderr = tail.lock().unwrap_or_else(std::sync::PoisonError::into_inner).trim().to_string();
    server.status = "failed";
    server.error = Some(if stderr.is_empty() { failure } else { format!("{failure}; its stderr ends: {stderr}") });
    tracing::warn!("MCP server `{name}` failed: {}", server.error.as_deref().unwrap_or_default());
    server
}

async fn connect(
    config: &McpServerConfig,
    cwd: &Path,
    env: &[(OsString, OsString)],
    tail: &Arc<Mutex<String>>,
    group: &mut Option<u32>,
) -> Result<Client, String> {
    match (&config.command, &config.url) {
        (Some(command), None) => {
            let mut cmd = tokio::process::Command::new(command);
            cmd.args(&config.args)
                .current_dir(cwd)
                .env_clear()
                .envs(env.iter().map(|(k, v)| (k, v)))
                .envs(&config.env)
                .process_group(0)
                .kill_on_drop(true);
            let (transport, stderr) = TokioChildProcess::builder(cmd)
                .stderr(Stdio::piped())
                .spawn()
                .map_err(|e| format!("`{command}` could not start: {e}"))?;
            *group = transport.id();
            if let Some(stderr) = stderr {
                let tail = tail.clone();
                tokio::spawn(async move {
                    let mut lines = tokio::io::BufReader::new(stderr).lines();
                    while let Ok(Some(line)) = lines.next_line().await {
                        let mut kept = tail.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                        kept.push_str(&line);
                        kept.push('\n');
                        if kept.len() > STDERR_TAIL {
                            let cut = kept.len() - STDERR_TAIL;
                            let cut = (cut..kept.len()).find(|i| kept.is_char_boundary(*i)).unwrap_or(kept.len());
                            kept.drain(..cut);
                        }
                    }
                });
            }
            ().serve(transport).await.map_err(|e| format!("initialize failed: {e}"))
        }
        (None, Some(url)) => {
            let mut headers = std::collections::HashMap::new();
            for (name, value) in &config.headers {
                // RFC 9110 token characters only (no spaces, no separators).
                let token = !name.is_empty()
                    && name.chars().all(|c| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c));
                let parsed = reqwest::header::HeaderName::from_bytes(name.as_bytes()).ok().filter(|_| token);
                let Some(parsed) = parsed else { return Err(format!("`{name}` is not a valid header name")) };
                let value = reqwest::header::HeaderValue::from_str(value)
                    .map_err(|_| format!("the value of header `{name}` is not valid in a header"))?;
                headers.insert(parsed, value);
            }
            let config =
                rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(url.as_str())
                    .custom_headers(headers);
            ().serve(StreamableHttpClientTransport::from_config(config))
                .await
                .map_err(|e| format!("initialize at {url} failed: {e}"))
        }
        (Some(_), Some(_)) => Err("give either `command` or `url`, not both".into()),
        (None, None) => Err("give a `command` (stdio) or a `url` (streamable HTTP)".into()),
    }
}
