//! One MCP server's life: connecting (a stdio child in its own process group, or a streamable-HTTP
//! client), listing its tools within the start-up timeout, and a watch that reports the moment
//! its connection ends.
//!
//! Rule: whatever happens, a server that is not ready holds no process: a failed start kills its
//! group at once, and so does a stop.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bridle_protocol::McpStatus;
use rmcp::service::{RunningService, RunningServiceCancellationToken};
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use tokio::io::AsyncBufReadExt;

use super::McpTool;
use crate::config::McpServerConfig;
use crate::processes::kill_group;

/// Bytes of a server's stderr kept for its error report.
const STDERR_TAIL: usize = 2048;

pub(super) type Client = RunningService<RoleClient, ()>;

/// The end of a server's stderr, shared with the task that reads it.
#[derive(Clone, Default)]
pub(super) struct StderrTail(Arc<Mutex<String>>);

impl StderrTail {
    fn push(&self, line: &str) {
        let mut kept = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        kept.push_str(line);
        kept.push('\n');
        if kept.len() > STDERR_TAIL {
            let cut = kept.len() - STDERR_TAIL;
            let cut = (cut..kept.len()).find(|i| kept.is_char_boundary(*i)).unwrap_or(kept.len());
            kept.drain(..cut);
        }
    }

    /// `why`, followed by the stderr tail when there is one.
    pub(super) fn explain(&self, why: String) -> String {
        let kept = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        match kept.trim() {
            "" => why,
            stderr => format!("{why}; its stderr ends: {stderr}"),
        }
    }
}

/// A call's word that the connection is gone. A streamable-HTTP server that goes away is only
/// noticed when a request to it fails; the hub's watch hears it here and fails the server.
#[derive(Clone, Default)]
pub(super) struct Lost {
    why: Arc<Mutex<Option<String>>>,
    notify: Arc<tokio::sync::Notify>,
}

impl Lost {
    /// Says the connection is gone, and why (the first word counts).
    pub(super) fn report(&self, why: String) {
        self.why.lock().unwrap_or_else(std::sync::PoisonError::into_inner).get_or_insert(why);
        self.notify.notify_one();
    }

    /// Waits for a call to say the connection is gone; answers why.
    pub(super) async fn wait(&self) -> String {
        self.notify.notified().await;
        self.why.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone().unwrap_or_default()
    }
}

/// A server as the hub holds it: ready with its tools, or not, with why.
pub(super) struct Server {
    pub status: McpStatus,
    pub error: Option<String>,
    pub tools: Vec<Arc<McpTool>>,
    /// A stdio server's process group (its leader's pid), killed when it stops.
    pub group: Option<u32>,
    pub stderr: StderrTail,
    /// Where its tools' calls say the connection is gone.
    pub lost: Lost,
    /// Ends the connection (and so the watch) when the hub stops the server.
    cancel: Option<RunningServiceCancellationToken>,
}

impl Server {
    pub(super) fn with_status(status: McpStatus) -> Server {
        Server {
            status,
            error: None,
            tools: Vec::new(),
            group: None,
            stderr: StderrTail::default(),
            lost: Lost::default(),
            cancel: None,
        }
    }

    /// Closes the connection and kills the process group; answers the group's leader.
    pub(super) fn stop(&mut self) -> Option<u32> {
        if let Some(cancel) = self.cancel.take() {
            cancel.cancel();
        }
        self.tools.clear();
        let leader = self.group;
        kill_group(self.group.take());
        leader
    }

    /// Marks the server failed for `why` (with its stderr tail) and frees what it held.
    pub(super) fn fail(&mut self, why: String) {
        self.stop();
        self.status = McpStatus::Failed;
        self.error = Some(self.stderr.explain(why));
    }
}

/// Starts `name` as `config` says, within its start-up timeout. A ready server comes with the
/// running connection, for the hub to watch.
pub(super) async fn start(
    name: &str,
    config: &McpServerConfig,
    cwd: &Path,
    env: &[(OsString, OsString)],
) -> (Server, Option<Client>) {
    if !config.enabled {
        return (Server::with_status(McpStatus::Disabled), None);
    }
    let mut server = Server::with_status(McpStatus::Starting);
    let limit = Duration::from_secs(config.startup_timeout_secs.max(1));
    let started = tokio::time::timeout(limit, async {
        let client = connect(config, cwd, env, &server.stderr, &mut server.group).await?;
        let tools = client.list_all_tools().await.map_err(|e| format!("listing its tools failed: {e}"))?;
        Ok::<_, String>((client, tools))
    })
    .await;
    let failure = match started {
        Ok(Ok((client, tools))) => {
            let peer = client.peer();
            server.tools =
                tools.into_iter().map(|t| Arc::new(McpTool::new(name, t, peer.clone(), server.lost.clone()))).collect();
            server.cancel = Some(client.cancellation_token());
            server.status = McpStatus::Ready;
            return (server, Some(client));
        }
        Ok(Err(e)) => e,
        Err(_) => format!("it did not answer `initialize` within {} s", limit.as_secs()),
    };
    server.fail(failure);
    tracing::warn!("MCP server `{name}` failed: {}", server.error.as_deref().unwrap_or_default());
    (server, None)
}

async fn connect(
    config: &McpServerConfig,
    cwd: &Path,
    env: &[(OsString, OsString)],
    stderr_tail: &StderrTail,
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
                let tail = stderr_tail.clone();
                tokio::spawn(async move {
                    let mut lines = tokio::io::BufReader::new(stderr).lines();
                    while let Ok(Some(line)) = lines.next_line().await {
                        tail.push(&line);
                    }
                });
            }
            ().serve(transport).await.map_err(|e| format!("initialize failed: {e}"))
        }
        (None, Some(url)) => {
            let config =
                rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(url.as_str())
                    .custom_headers(headers(&config.headers)?);
            ().serve(StreamableHttpClientTransport::from_config(config))
                .await
                .map_err(|e| format!("initialize at {url} failed: {e}"))
        }
        (Some(_), Some(_)) => Err("give either `command` or `url`, not both".into()),
        (None, None) => Err("give a `command` (stdio) or a `url` (streamable HTTP)".into()),
    }
}

/// The configured headers, checked: a bad name or value is the server's error, not a panic.
fn headers(
    configured: &std::collections::BTreeMap<String, String>,
) -> Result<HashMap<reqwest::header::HeaderName, reqwest::header::HeaderValue>, String> {
    let mut headers = HashMap::new();
    for (name, value) in configured {
        // RFC 9110 token characters only (no spaces, no separators).
        let token =
            !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c));
        let parsed = reqwest::header::HeaderName::from_bytes(name.as_bytes()).ok().filter(|_| token);
        let Some(parsed) = parsed else { return Err(format!("`{name}` is not a valid header name")) };
        let value = reqwest::header::HeaderValue::from_str(value)
            .map_err(|_| format!("the value of header `{name}` is not valid in a header"))?;
        headers.insert(parsed, value);
    }
    Ok(headers)
}

/// Whether `pid` still runs (a zombie waiting to be reaped does not).
pub(super) fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat.rsplit(") ").next().is_some_and(|rest| rest.starts_with('Z')),
        Err(_) => false,
    }
}
