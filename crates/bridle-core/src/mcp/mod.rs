//! The user's MCP servers (DESIGN §9) through the official Rust SDK, `rmcp`: configured servers
//! only (`[mcp.servers.NAME]`: a stdio `command`, or a streamable-HTTP `url`), started together
//! with a start-up timeout each, their tools offered as `mcp__<server>__<tool>`.
//!
//! Rules: a server that fails to start, or never answers `initialize`, is reported with its
//! error and its stderr tail and holds up nobody; its tools are simply not there. A server that
//! dies later is reported the same way the moment its connection ends: its calls already made
//! fail with a clear error, and its tools are no longer offered from the next turn on; the rest
//! go on. A server can be restarted, and the config's servers changed, while a session runs (the
//! hub's generation counts every change; sessions pick the new tools up between turns). Tool
//! names are prefixed, so no server can shadow a built-in. What a server returns is marked as
//! untrusted content. Stdio servers run in their own process group with the scrubbed environment
//! (plus the `env` the config gives them) and the whole group is killed when the server stops or
//! the hub goes.

mod names;
mod server;
mod tool;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use bridle_protocol::{McpServerList, McpServerStatus, McpStatus};

use server::{Client, Server};

// The servers' config is plain data in `config`; it is named here too, beside what runs it.
use crate::config::{McpConfig, McpServerConfig};
pub use names::tool_name;
pub use tool::McpTool;

/// A server the hub was asked about that the config does not name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no MCP server is named `{0}`")]
pub struct UnknownServer(pub String);

/// A configured server and where it stands.
struct Slot {
    config: McpServerConfig,
    server: Server,
    /// Counts this slot's starts: a watch reports only on the start it watches.
    start: u64,
}

struct HubState {
    slots: BTreeMap<String, Slot>,
    starts: u64,
}

/// The starts [`McpHub::mark_starting`] numbered, and the process groups it stopped.
#[derive(Default)]
struct Starts {
    numbers: Vec<(String, u64)>,
    leaders: Vec<u32>,
}

/// Every configured server of a session, shared by the front end and the engine.
pub struct McpHub {
    cwd: PathBuf,
    env: Vec<(OsString, OsString)>,
    state: Mutex<HubState>,
    /// Counts changes of the servers' states and tools.
    generation: tokio::sync::watch::Sender<u64>,
}

impl McpHub {
    /// Starts every enabled server in parallel, each within its start-up timeout; stdio ones in
    /// `cwd` with exactly `env` plus their own `env` (the caller builds both: the wiring
    /// starts them in a folder of the data dir with the allow-listed environment). Returns at
    /// once, every enabled server `starting`: nothing waits for a slow server but what needs its
    /// tools ([`McpHub::settled`]).
    pub fn launch(config: &McpConfig, cwd: &Path, env: impl Iterator<Item = (OsString, OsString)>) -> Arc<McpHub> {
        let hub = Arc::new(McpHub {
            cwd: cwd.to_path_buf(),
            env: env.collect(),
            state: Mutex::new(HubState { slots: BTreeMap::new(), starts: 0 }),
            generation: tokio::sync::watch::channel(0).0,
        });
        let starts = hub.mark_starting(&config.servers);
        let (runner, configs) = (hub.clone(), config.servers.clone());
        tokio::spawn(async move { runner.run_starts(configs, starts).await });
        hub
    }

    /// [`McpHub::launch`], then waits until every server is ready or has failed.
    pub async fn start(config: &McpConfig, cwd: &Path, env: impl Iterator<Item = (OsString, OsString)>) -> Arc<McpHub> {
        let hub = McpHub::launch(config, cwd, env);
        hub.settled().await;
        hub
    }

    /// Waits until no server is starting (each start is bounded by its server's timeout).
    pub async fn settled(&self) {
        let mut changes = self.subscribe();
        while self.state().slots.values().any(|slot| slot.server.status == McpStatus::Starting) {
            if changes.changed().await.is_err() {
                return;
            }
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, HubState> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn changed(&self) {
        self.generation.send_modify(|g| *g += 1);
    }

    /// Every configured server with its state and tools, by name.
    pub fn reports(&self) -> Vec<McpServerStatus> {
        self.state()
            .slots
            .iter()
            .map(|(name, slot)| McpServerStatus {
                name: name.clone(),
                status: slot.server.status,
                error: slot.server.error.clone(),
                tools: slot.server.tools.iter().map(|t| t.name().to_string()).collect(),
            })
            .collect()
    }

    /// Every configured server, numbered with the hub's generation. The number is read before
    /// the servers and every change is counted after it is made, so a list numbered `n` shows
    /// every change up to the `n`-th (a later one may show too; its own list follows).
    pub fn status(&self) -> McpServerList {
        let seq = self.generation();
        McpServerList { seq, servers: self.reports() }
    }

    /// The number of changes so far: a session whose tools were built at another number builds
    /// them again.
    pub fn generation(&self) -> u64 {
        *self.generation.borrow()
    }

    /// Wakes on every change of the servers' states and tools.
    pub fn subscribe(&self) -> tokio::sync::watch::Receiver<u64> {
        self.generation.subscribe()
    }

    /// The tools of the servers that are ready, for the registry.
    pub fn tools(&self) -> Vec<Arc<McpTool>> {
        self.state().slots.values().flat_map(|s| s.server.tools.iter().cloned()).collect()
    }

    /// The built-in tools and the ready servers' tools (`bridle tool`).
    pub fn registry(&self) -> Result<crate::tools::ToolRegistry, crate::tools::RegistryError> {
        Ok(self.extend(&crate::tools::builtin_registry()?))
    }

    /// `base` with the ready servers' tools added. A tool the registry refuses (a schema it
    /// cannot compile, a name taken twice) is left out and logged; the rest are offered.
    pub fn extend(&self, base: &crate::tools::ToolRegistry) -> crate::tools::ToolRegistry {
        let mut registry = base.clone();
        for tool in self.tools() {
            let name = tool.name().to_string();
            if let Err(e) = registry.register(tool) {
                tracing::warn!("MCP tool `{name}` is not offered: {e}");
            }
        }
        registry
    }

    /// Stops `name` and starts it again as configured; returns once it is ready or has failed.
    pub async fn restart(self: &Arc<Self>, name: &str) -> Result<(), UnknownServer> {
        let config = match self.state().slots.get(name) {
            Some(slot) => slot.config.clone(),
            None => return Err(UnknownServer(name.to_string())),
        };
        self.start_servers(BTreeMap::from([(name.to_string(), config)])).await;
        Ok(())
    }

    /// Brings the servers to `config`: a server no longer there is stopped, one that is new or
    /// whose settings changed is (re)started, the others keep running untouched.
    pub async fn reconfigure(self: &Arc<Self>, config: &McpConfig) {
        let (gone, changed) = {
            let state = self.state();
            let gone: Vec<String> = state.slots.keys().filter(|n| !config.servers.contains_key(*n)).cloned().collect();
            let changed: BTreeMap<String, McpServerConfig> = config
                .servers
                .iter()
                .filter(|(name, c)| state.slots.get(*name).is_none_or(|slot| &slot.config != *c))
                .map(|(n, c)| (n.clone(), c.clone()))
                .collect();
            (gone, changed)
        };
        let mut leaders = Vec::new();
        {
            let mut state = self.state();
            for name in gone {
                if let Some(mut slot) = state.slots.remove(&name) {
                    leaders.extend(slot.server.stop());
                }
            }
        }
        self.changed();
        wait_gone(&leaders).await;
        self.start_servers(changed).await;
    }

    /// Stops whatever runs under these names, marks them starting, then starts them together.
    async fn start_servers(self: &Arc<Self>, configs: BTreeMap<String, McpServerConfig>) {
        let starts = self.mark_starting(&configs);
        self.run_starts(configs, starts).await;
    }

    /// Marks these servers starting, or disabled (each start numbered, so a late answer of an
    /// earlier start is not taken for this one); kills what ran under their names. Answers the
    /// starts.
    fn mark_starting(&self, configs: &BTreeMap<String, McpServerConfig>) -> Starts {
        let mut starts = Starts::default();
        if configs.is_empty() {
            return starts;
        }
        {
            let mut state = self.state();
            for (name, config) in configs {
                state.starts += 1;
                let start = state.starts;
                let status = if config.enabled { McpStatus::Starting } else { McpStatus::Disabled };
                let slot = Slot { config: config.clone(), server: Server::with_status(status), start };
                if let Some(mut old) = state.slots.insert(name.clone(), slot) {
                    starts.leaders.extend(old.server.stop());
                }
                starts.numbers.push((name.clone(), start));
            }
        }
        self.changed();
        starts
    }

    /// Starts the marked servers together and puts each where it stands.
    async fn run_starts(self: &Arc<Self>, configs: BTreeMap<String, McpServerConfig>, starts: Starts) {
        if starts.numbers.is_empty() {
            return;
        }
        wait_gone(&starts.leaders).await;
        let runs = starts.numbers.into_iter().map(|(name, start)| {
            let config = configs[&name].clone();
            async move {
                let (server, client) = server::start(&name, &config, &self.cwd, &self.env).await;
                (name, start, server, client)
            }
        });
        for (name, start, server, client) in futures::future::join_all(runs).await {
            let mut state = self.state();
            match state.slots.get_mut(&name).filter(|slot| slot.start == start) {
                Some(slot) => {
                    slot.server = server;
                    if let Some(client) = client {
                        watch(Arc::downgrade(self), name, start, client, slot.server.lost.clone());
                    }
                }
                // Replaced or removed meanwhile: this start is not wanted any more.
                None => {
                    let mut server = server;
                    server.stop();
                }
            }
        }
        self.changed();
    }

    /// Closes every server: stdio ones' whole process groups go, and this returns once their
    /// leaders are gone (at most a second), so no server outlives the front end.
    pub async fn shutdown(&self) {
        let leaders = self.stop_all();
        wait_gone(&leaders).await;
    }

    /// Closes every connection and kills every stdio server's group; returns the groups' leaders.
    fn stop_all(&self) -> Vec<u32> {
        let mut state = self.state();
        let leaders = state.slots.values_mut().filter_map(|slot| slot.server.stop()).collect();
        state.slots.clear();
        leaders
    }
}

impl Drop for McpHub {
    fn drop(&mut self) {
        self.stop_all();
    }
}

/// Waits (a second at most) for these process-group leaders to be gone.
async fn wait_gone(leaders: &[u32]) {
    let deadline = std::time::Instant::now() + Duration::from_secs(1);
    while leaders.iter().any(|pid| server::alive(*pid)) && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Waits for `client`'s connection to end, or for a call to find it gone; unless the hub stopped
/// the server (a restart, a removal, the end), it is reported failed with the end of its stderr
/// and its tools go.
fn watch(hub: Weak<McpHub>, name: String, start: u64, client: Client, lost: server::Lost) {
    tokio::spawn(async move {
        let why = tokio::select! {
            reason = client.waiting() => match reason {
                Ok(rmcp::service::QuitReason::Cancelled) => "its connection was cancelled".to_string(),
                Ok(_) => "it stopped (its connection closed)".to_string(),
                Err(e) => format!("its connection failed: {e}"),
            },
            // Dropping the connection here ends it.
            why = lost.wait() => why,
        };
        // A server that died may still have its last stderr lines on the way.
        tokio::time::sleep(Duration::from_millis(100)).await;
        let Some(hub) = hub.upgrade() else { return };
        {
            let mut state = hub.state();
            let Some(slot) = state.slots.get_mut(&name).filter(|s| s.start == start) else { return };
            if slot.server.status != McpStatus::Ready {
                return;
            }
            slot.server.fail(why);
            tracing::warn!("MCP server `{name}` stopped: {}", slot.server.error.as_deref().unwrap_or_default());
        }
        hub.changed();
    });
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn server(command: &str, enabled: bool) -> McpServerConfig {
        McpServerConfig {
            command: Some(command.into()),
            args: Vec::new(),
            env: BTreeMap::new(),
            url: None,
            headers: BTreeMap::new(),
            enabled,
            startup_timeout_secs: 5,
        }
    }

    #[tokio::test]
    async fn the_list_is_numbered_past_every_change() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("no-such-server").display().to_string();
        let config = McpConfig {
            servers: BTreeMap::from([("broken".into(), server(&missing, true)), ("off".into(), server("true", false))]),
        };
        let hub = McpHub::start(&config, dir.path(), std::iter::empty()).await;
        let first = hub.status();
        let states: Vec<(String, McpStatus)> = first.servers.iter().map(|s| (s.name.clone(), s.status)).collect();
        assert_eq!(states, [("broken".into(), McpStatus::Failed), ("off".into(), McpStatus::Disabled)]);

        hub.restart("broken").await.unwrap();
        assert_eq!(hub.restart("nope").await, Err(UnknownServer("nope".into())));
        let restarted = hub.status();
        assert!(restarted.seq > first.seq, "{} after {}", restarted.seq, first.seq);

        let fewer = McpConfig { servers: BTreeMap::from([("broken".into(), server(&missing, true))]) };
        hub.reconfigure(&fewer).await;
        let reconfigured = hub.status();
        assert!(reconfigured.seq > restarted.seq, "{} after {}", reconfigured.seq, restarted.seq);
        assert_eq!(reconfigured.servers.len(), 1);
        hub.shutdown().await;
    }
}
