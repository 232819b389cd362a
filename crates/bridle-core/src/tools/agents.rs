//! `spawn_agent`, `wait_agent`, `send_agent` and `close_agent`: a session hands a task to a child
//! session and collects its answer (DESIGN §16.1).
//!
//! The tools only speak for the call; the children themselves are the engine's ([`Agents`], a
//! layer above). Rule: a child is a call of its parent, so nothing here decides what a child may
//! do — the child's own calls are judged, contained and recorded like any other, under a permit
//! never looser than its parent's.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use bridle_protocol::{AgentInfo, AgentState, ClientKind, ToolDetails};
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use super::{quoted, Tool, ToolContext, ToolError, ToolKind, ToolOutput};

/// The longest `wait_agent` may wait, and its default.
pub const WAIT_MAX_SECS: u64 = 3600;
const WAIT_DEFAULT_SECS: u64 = 300;

/// Where a session's children live: the engine's, reached by these tools through
/// [`super::InSession::agents`].
#[async_trait]
pub trait Agents: Send + Sync {
    /// Starts a child on `task` for call `call_id` of turn `turn_id`; returns at once.
    async fn spawn(
        &self,
        at: (&str, &str),
        task: &str,
        role: Option<&str>,
        model: Option<&str>,
    ) -> Result<AgentInfo, ToolError>;
    /// Waits until every child of `ids` has settled (idle, failed or closed), `timeout` passes
    /// or `cancel` fires; returns each as it stands then.
    async fn wait(
        &self,
        ids: &[String],
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> Result<Vec<AgentInfo>, ToolError>;
    /// Gives an idle child another message.
    async fn send(&self, id: &str, message: &str) -> Result<AgentInfo, ToolError>;
    /// Ends a child and what it runs.
    async fn close(&self, id: &str) -> Result<AgentInfo, ToolError>;
}

fn agents(ctx: &ToolContext) -> Result<&Arc<dyn Agents>, ToolError> {
    ctx.session
        .as_ref()
        .and_then(|s| s.agents.as_ref())
        .ok_or_else(|| ToolError::new("agents can only be started inside a session"))
}

/// What the model reads of children: one paragraph each.
fn report(agents: &[AgentInfo]) -> ToolOutput {
    let text = agents.iter().map(describe).collect::<Vec<_>>().join("\n\n");
    ToolOutput { output: text, details: Some(ToolDetails::Agents { agents: agents.to_vec() }), ..ToolOutput::default() }
}

fn describe(agent: &AgentInfo) -> String {
    let mut text =
        format!("Agent {} ({}): {}.", agent.id, agent.role.as_deref().unwrap_or("no role"), agent.state.as_str());
    match agent.state {
        AgentState::Working => text.push_str(" It is still working."),
        AgentState::NeedsYou => text.push_str(" It waits for a person to answer its question."),
        AgentState::Idle => text.push_str(" Its turn ended; send_agent gives it more to do, close_agent ends it."),
        AgentState::Failed => {
            text.push_str(&format!(" It failed: {}.", agent.error.as_deref().unwrap_or("no reason given")))
        }
        AgentState::Closed => {}
    }
    for question in &agent.expired {
        text.push_str(&format!(
            "\nIts question expired unanswered (nobody answered in time; no person denied it): {question}"
        ));
    }
    if let Some(message) = &agent.last_message {
        text.push_str(&format!("\nIts last message:\n{message}"));
    }
    text
}

/// Starts a child agent on `task` in this workspace, under this session's rules; returns its id
/// at once. It does not see this conversation: make `task` self-contained.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SpawnAgentArgs {
    /// The task.
    pub task: String,
    /// A configured role.
    #[serde(default)]
    pub role: Option<String>,
    /// Another model.
    #[serde(default)]
    pub model: Option<String>,
}

/// The `spawn_agent` tool.
pub struct SpawnAgent;

#[async_trait]
impl Tool for SpawnAgent {
    type Args = SpawnAgentArgs;
    const NAME: &'static str = "spawn_agent";
    const KIND: ToolKind = ToolKind::Read;
    const CLIENT_KIND: ClientKind = ClientKind::Think;

    fn title(args: &Self::Args) -> String {
        format!("Start an agent: {}", quoted(&args.task))
    }

    async fn run(&self, args: &Self::Args, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        if args.task.trim().is_empty() {
            return Err(ToolError::new("`task` is empty: say what the agent should do"));
        }
        let agent = agents(ctx)?
            .spawn((ctx.turn_id(), &ctx.call_id), &args.task, args.role.as_deref(), args.model.as_deref())
            .await?;
        let mut out = report(std::slice::from_ref(&agent));
        out.output = format!("Started agent {}. Collect its answer with wait_agent.", agent.id);
        Ok(out)
    }
}

/// Waits for agents to end their turn; returns each one's answer, or where it stands.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitAgentArgs {
    /// Agent ids; empty: all.
    #[serde(default)]
    pub ids: Vec<String>,
    /// Seconds (default 300, at most 3600).
    #[serde(default)]
    pub timeout_secs: Option<u64>,
}

/// The `wait_agent` tool.
pub struct WaitAgent;

impl WaitAgentArgs {
    fn wait(&self) -> Duration {
        Duration::from_secs(self.timeout_secs.unwrap_or(WAIT_DEFAULT_SECS).min(WAIT_MAX_SECS))
    }
}

#[async_trait]
impl Tool for WaitAgent {
    type Args = WaitAgentArgs;
    const NAME: &'static str = "wait_agent";
    const KIND: ToolKind = ToolKind::Read;
    const CLIENT_KIND: ClientKind = ClientKind::Think;

    fn title(args: &Self::Args) -> String {
        match args.ids.len() {
            0 => "Wait for the agents".to_string(),
            1 => "Wait for an agent".to_string(),
            n => format!("Wait for {n} agents"),
        }
    }

    fn timeout(args: &Self::Args, default: Duration) -> Duration {
        default.max(args.wait() + Duration::from_secs(5))
    }

    async fn run(&self, args: &Self::Args, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let agents = agents(ctx)?.wait(&args.ids, args.wait(), &ctx.cancel).await?;
        Ok(report(&agents))
    }
}

/// Gives an agent whose turn ended another message.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SendAgentArgs {
    /// Agent id.
    pub id: String,
    /// The message.
    pub message: String,
}

/// The `send_agent` tool.
pub struct SendAgent;

#[async_trait]
impl Tool for SendAgent {
    type Args = SendAgentArgs;
    const NAME: &'static str = "send_agent";
    const KIND: ToolKind = ToolKind::Read;
    const CLIENT_KIND: ClientKind = ClientKind::Think;

    fn title(args: &Self::Args) -> String {
        format!("Tell agent {}: {}", args.id.chars().take(8).collect::<String>(), quoted(&args.message))
    }

    async fn run(&self, args: &Self::Args, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let agent = agents(ctx)?.send(&args.id, &args.message).await?;
        Ok(report(std::slice::from_ref(&agent)))
    }
}

/// Ends an agent and its processes.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CloseAgentArgs {
    /// Agent id.
    pub id: String,
}

/// The `close_agent` tool.
pub struct CloseAgent;

#[async_trait]
impl Tool for CloseAgent {
    type Args = CloseAgentArgs;
    const NAME: &'static str = "close_agent";
    const KIND: ToolKind = ToolKind::Read;
    const CLIENT_KIND: ClientKind = ClientKind::Think;

    fn title(args: &Self::Args) -> String {
        format!("Close agent {}", args.id.chars().take(8).collect::<String>())
    }

    async fn run(&self, args: &Self::Args, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let agent = agents(ctx)?.close(&args.id).await?;
        Ok(report(std::slice::from_ref(&agent)))
    }
}

/// The names of the tools that start and steer children (a child past the depth limit is
/// offered none of them).
pub const AGENT_TOOLS: [&str; 4] = [SpawnAgent::NAME, WaitAgent::NAME, SendAgent::NAME, CloseAgent::NAME];
