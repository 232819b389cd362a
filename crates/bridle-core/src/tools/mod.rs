//! The tool registry and the built-in tools, one per file.
//!
//! A tool's arguments are a struct deriving `JsonSchema`: its doc comment is the description the
//! model reads and its fields are the schema, so the two cannot drift. The registry repairs and
//! validates arguments before any tool runs; a tool only ever sees arguments that match its
//! schema. Errors a tool returns are for the model to act on, never a crash of the harness.

mod append_file;
mod apply_patch;
mod bash;
mod edit_file;
pub(crate) mod files;
mod get_current_time;
mod get_token_usage;
mod glob_search;
mod grep_search;
mod list_files;
pub mod output;
mod read_file;
mod registry;
mod repair;
mod schema;
pub mod search;
mod search_tool;
pub mod text_edit;
mod update_plan;
mod write_file;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use bridle_protocol::{TokenUsage, ToolDefinition};
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::changes::{ChangePlan, FileChange, SessionFiles};
use crate::clock::Clock;
use crate::sandbox::Access;
use crate::workspace::Workspace;

pub use append_file::AppendFile;
pub use apply_patch::ApplyPatch;
pub use bash::{kill_group, Bash};
pub use edit_file::EditFile;
pub use get_current_time::GetCurrentTime;
pub use get_token_usage::GetTokenUsage;
pub use glob_search::GlobSearch;
pub use grep_search::GrepSearch;
pub use list_files::ListFiles;
pub use read_file::ReadFile;
pub use registry::{CallError, PreparedCall, RegistryError, ToolRegistry};
pub use repair::{canonical_json, repair_arguments, RepairError, Repaired};
pub use update_plan::UpdatePlan;
pub use write_file::WriteFile;

/// What a tool may do, which decides its guard column and how it is scheduled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolKind {
    /// Reads only; runs in parallel freely.
    Read,
    /// Changes files; serialised per path.
    Write,
    /// Runs commands; runs alone, since it can touch anything.
    Exec,
    /// Provided by an MCP server; not trusted to be read-only.
    Mcp,
}

/// Token figures a session exposes to its tools (for `get_token_usage`).
#[derive(Debug, Clone, Default)]
pub struct UsageSnapshot {
    /// The session's totals.
    pub total: TokenUsage,
    /// Tokens the last request put in the context window.
    pub context_used: u64,
    /// The model's context window, when known.
    pub context_window: Option<u64>,
}

/// Shared, updatable usage figures of one session.
pub type UsageMeter = Arc<Mutex<UsageSnapshot>>;

/// Everything a tool may reach; passed in, never global.
#[derive(Clone)]
pub struct ToolContext {
    /// The session making the call.
    pub session_id: String,
    /// Bridle's id for the call.
    pub call_id: String,
    /// The workspace: sandbox, confined file I/O, path locks.
    pub workspace: Arc<Workspace>,
    /// Bridle's data directory.
    pub data_dir: PathBuf,
    /// The clock.
    pub clock: Arc<dyn Clock>,
    /// The session's token usage.
    pub usage: UsageMeter,
    /// Cancelled when the turn is interrupted.
    pub cancel: CancellationToken,
    /// The session's default tool timeout (a tool such as `bash` may be given another).
    pub tool_timeout: Duration,
    /// The turn making the call (empty outside a session).
    pub turn_id: String,
    /// What the session knows of its files (read stamps, checkpoints); `None` outside a
    /// session (`bridle tool`), where nothing is checkpointed.
    pub files: Option<Arc<SessionFiles>>,
}

impl ToolContext {
    /// A context for `call_id` of `session_id` in `workspace`, not yet cancelled, with no usage.
    pub fn new(
        session_id: impl Into<String>,
        call_id: impl Into<String>,
        workspace: Arc<Workspace>,
        data_dir: PathBuf,
        clock: Arc<dyn Clock>,
        tool_timeout: Duration,
    ) -> Self {
        Self {
            session_id: session_id.into(),
            call_id: call_id.into(),
            workspace,
            data_dir,
            clock,
            usage: UsageMeter::default(),
            cancel: CancellationToken::new(),
            tool_timeout,
            turn_id: String::new(),
            files: None,
        }
    }
}

/// What a successful tool call returns.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolOutput {
    /// Text for the model.
    pub output: String,
    /// Structured output for programs and the UI.
    pub data: Option<Value>,
    /// The files the call changed (write tools, through [`crate::changes::commit`]).
    pub changes: Vec<FileChange>,
}

impl ToolOutput {
    /// Text only.
    pub fn text(output: impl Into<String>) -> Self {
        Self { output: output.into(), ..Self::default() }
    }
}

/// A failure the model can act on; it becomes an error result, never a crash.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ToolError(pub String);

impl ToolError {
    /// A message for the model.
    pub fn new(message: impl Into<String>) -> Self {
        Self(message.into())
    }
}

/// A tool as the registry holds it.
#[async_trait]
pub trait Tool: Send + Sync + 'static {
    /// Name, description and argument schema.
    fn definition(&self) -> ToolDefinition;
    /// What the tool may do.
    fn kind(&self) -> ToolKind;
    /// The paths the call would touch, judged by the sandbox before it runs.
    fn paths(&self, _args: &Value) -> Vec<(String, Access)> {
        Vec::new()
    }
    /// How long the call may run; most tools take the session's default.
    fn timeout(&self, _args: &Value, default: Duration) -> Duration {
        default
    }
    /// The change a call would make, computed without touching the disk (write tools only):
    /// the approval preview, and part of the call hash.
    async fn plan(&self, _args: &Value, _ctx: &ToolContext) -> Option<Result<ChangePlan, ToolError>> {
        None
    }
    /// Runs with arguments already repaired and validated against the schema.
    async fn call(&self, args: Value, ctx: ToolContext) -> Result<ToolOutput, ToolError>;
}

/// A tool that changes files: it only plans, and [`Planned`] commits the plan — so no write
/// tool can write any other way than through [`crate::changes::commit`].
#[async_trait]
pub trait FileTool: Send + Sync + 'static {
    /// The arguments; the doc comment is the tool's description.
    type Args: DeserializeOwned + schemars::JsonSchema + Send + Sync;
    /// The tool's name.
    const NAME: &'static str;
    /// The paths a call would change.
    fn paths(args: &Self::Args) -> Vec<(String, Access)>;
    /// The change, without touching the disk.
    async fn plan(&self, args: &Self::Args, ctx: &ToolContext) -> Result<ChangePlan, ToolError>;
}

/// A [`FileTool`] as the registry holds it: `call` is plan, then commit.
pub struct Planned<T>(pub T);

impl<T: FileTool> Planned<T> {
    fn args(args: &Value) -> Result<T::Args, ToolError> {
        serde_json::from_value(args.clone())
            .map_err(|e| ToolError::new(format!("invalid arguments for {}: {e}", T::NAME)))
    }
}

#[async_trait]
impl<T: FileTool> Tool for Planned<T> {
    fn definition(&self) -> ToolDefinition {
        schema::definition_for::<T::Args>(T::NAME)
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Write
    }

    fn paths(&self, args: &Value) -> Vec<(String, Access)> {
        Self::args(args).map(|a| T::paths(&a)).unwrap_or_default()
    }

    async fn plan(&self, args: &Value, ctx: &ToolContext) -> Option<Result<ChangePlan, ToolError>> {
        Some(match Self::args(args) {
            Ok(args) => self.0.plan(&args, ctx).await,
            Err(e) => Err(e),
        })
    }

    async fn call(&self, args: Value, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let plan = self.0.plan(&Self::args(&args)?, &ctx).await?;
        let changes = crate::changes::commit(&plan, &ctx).await?;
        Ok(files::committed(&plan, changes))
    }
}

/// A tool with typed arguments; implement this and the registry derives the rest.
#[async_trait]
pub trait TypedTool: Send + Sync + 'static {
    /// The arguments; the doc comment is the tool's description.
    type Args: DeserializeOwned + schemars::JsonSchema + Send;
    /// The tool's name.
    const NAME: &'static str;
    /// What it may do.
    const KIND: ToolKind;
    /// The paths a call would touch (file tools).
    fn paths(_args: &Self::Args) -> Vec<(String, Access)> {
        Vec::new()
    }
    /// How long a call may run.
    fn timeout(_args: &Self::Args, default: Duration) -> Duration {
        default
    }
    /// Runs the tool.
    async fn run(&self, args: Self::Args, ctx: &ToolContext) -> Result<ToolOutput, ToolError>;
}

#[async_trait]
impl<T: TypedTool> Tool for T {
    fn definition(&self) -> ToolDefinition {
        schema::definition_for::<T::Args>(T::NAME)
    }

    fn kind(&self) -> ToolKind {
        T::KIND
    }

    fn paths(&self, args: &Value) -> Vec<(String, Access)> {
        serde_json::from_value::<T::Args>(args.clone()).map(|a| T::paths(&a)).unwrap_or_default()
    }

    fn timeout(&self, args: &Value, default: Duration) -> Duration {
        serde_json::from_value::<T::Args>(args.clone()).map(|a| T::timeout(&a, default)).unwrap_or(default)
    }

    async fn call(&self, args: Value, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        // The registry validated `args` against this very schema, so a failure here means the
        // schema and the struct disagree (e.g. a custom deserializer); report it, do not panic.
        let args: T::Args = serde_json::from_value(args)
            .map_err(|e| ToolError::new(format!("invalid arguments for {}: {e}", T::NAME)))?;
        self.run(args, &ctx).await
    }
}

/// The registry with every built-in tool of this version.
pub fn builtin_registry() -> Result<ToolRegistry, RegistryError> {
    let mut registry = ToolRegistry::new();
    registry.register(Arc::new(ReadFile))?;
    registry.register(Arc::new(Planned(WriteFile)))?;
    registry.register(Arc::new(Planned(EditFile)))?;
    registry.register(Arc::new(Planned(AppendFile)))?;
    registry.register(Arc::new(Planned(ApplyPatch)))?;
    registry.register(Arc::new(ListFiles))?;
    registry.register(Arc::new(GlobSearch))?;
    registry.register(Arc::new(GrepSearch))?;
    registry.register(Arc::new(Bash))?;
    registry.register(Arc::new(GetCurrentTime))?;
    registry.register(Arc::new(GetTokenUsage))?;
    registry.register(Arc::new(UpdatePlan))?;
    Ok(registry)
}

#[cfg(test)]
pub(crate) mod testing {
    //! A tool context on a real temp workspace, for unit tests.
    use super::*;

    /// A context whose workspace is `root` and whose data dir is `root/../data`; `bash` runs in
    /// the OS sandbox, as in a session.
    pub(crate) fn context(root: &std::path::Path) -> ToolContext {
        let data_dir = root.parent().unwrap_or(root).join("data");
        #[allow(clippy::unwrap_used)]
        let workspace = Workspace::open(root, None, &data_dir, &[]).unwrap();
        let masked = workspace.sandbox.protected_paths();
        let shell = crate::shell_sandbox::ShellSandbox::new(&Default::default(), workspace.root(), &masked, false)
            .with_host_environment(&crate::shell_sandbox::HostEnvironment::new(std::env::vars_os()));
        let workspace = Arc::new(workspace.with_shell(shell));
        ToolContext::new(
            "test-session",
            uuid::Uuid::new_v4().to_string(),
            workspace,
            data_dir,
            Arc::new(crate::clock::FixedClock(1_795_262_400_000)),
            Duration::from_secs(60),
        )
    }
}
