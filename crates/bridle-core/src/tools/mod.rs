//! The tool registry and the built-in tools, one per file.
//!
//! A tool implements one typed trait, [`Tool`]: its arguments are a struct deriving `JsonSchema`
//! (its doc comment is the description the model reads and its fields are the schema, so the two
//! cannot drift), and it says what it may do, what it touches, what an approval of it covers
//! and what else its success does, and how a client shows one of its calls (its kind, a title, the
//! paths it touches). What a call did beyond its text is typed ([`bridle_protocol::ToolDetails`]).
//! The registry repairs and validates arguments, then parses them once into a [`Bound`] call —
//! the one erased form every caller works with; a tool only ever sees arguments that match its
//! schema. Errors a tool returns are for the model to act on, never a crash of the harness.

mod agents;
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
mod process_list;
mod process_output;
mod process_stop;
mod read_file;
mod registry;
mod repair;
mod schema;
pub mod search;
mod search_tool;
mod skill;
pub mod text_edit;
mod update_plan;
mod write_file;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use bridle_protocol::{ClientKind, TokenUsage, ToolDefinition, ToolDetails};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::changes::{ChangePlan, FileChange, SessionFiles};
use crate::clock::Clock;
use crate::sandbox::Access;
use crate::workspace::Workspace;

pub use agents::{Agents, CloseAgent, SendAgent, SpawnAgent, WaitAgent, AGENT_TOOLS, WAIT_MAX_SECS};
pub use append_file::AppendFile;
pub use apply_patch::ApplyPatch;
pub use bash::Bash;
pub use edit_file::EditFile;
pub use get_current_time::GetCurrentTime;
pub use get_token_usage::GetTokenUsage;
pub use glob_search::GlobSearch;
pub use grep_search::GrepSearch;
pub use list_files::ListFiles;
pub use process_list::ProcessList;
pub use process_output::ProcessOutput;
pub use process_stop::ProcessStop;
pub use read_file::ReadFile;
pub use registry::{CallDescription, CallError, PreparedCall, RegistryError, ToolRegistry};
pub use repair::{canonical_json, repair_arguments, RepairError, Repaired};
pub use skill::LoadSkill;
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

/// What a call in a session reaches of it.
#[derive(Clone)]
pub struct InSession {
    /// The turn making the call.
    pub turn_id: String,
    /// What the session knows of its files: read stamps, checkpoints.
    pub files: Arc<SessionFiles>,
    /// The session's background processes, and the loopback its commands share.
    pub processes: Arc<crate::processes::SessionProcesses>,
    /// The session's skills (`skill` loads from them).
    pub skills: Arc<crate::skills::SessionSkills>,
    /// The session's children (`spawn_agent` and its kin); `None` where none may start.
    pub agents: Option<Arc<dyn Agents>>,
}

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
    /// The session's proxy and where it asks and records, when commands may reach hosts
    /// (`[sandbox.network]` not off); `None`: no network.
    pub network: Option<crate::network::CallNetwork>,
    /// What the call reaches of its session; `None` outside one (`bridle tool`), where nothing
    /// is checkpointed and nothing may run on after its call.
    pub session: Option<InSession>,
    /// The call's writes: stopped at its timeout or an interrupt, waited for before it returns.
    pub writes: Arc<crate::changes::CallWrites>,
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
            network: None,
            session: None,
            writes: Arc::default(),
        }
    }

    /// The turn making the call (empty outside a session).
    pub fn turn_id(&self) -> &str {
        self.session.as_ref().map_or("", |s| s.turn_id.as_str())
    }

    /// What the session knows of its files, in a session.
    pub fn files(&self) -> Option<&Arc<SessionFiles>> {
        self.session.as_ref().map(|s| &s.files)
    }

    /// The session's background processes, in a session.
    pub fn processes(&self) -> Option<&Arc<crate::processes::SessionProcesses>> {
        self.session.as_ref().map(|s| &s.processes)
    }
}

/// What a successful tool call returns.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolOutput {
    /// Text for the model.
    pub output: String,
    /// What the call did, typed, for programs and the UI.
    pub details: Option<ToolDetails>,
    /// An MCP server's own structured output; no built-in tool sets it.
    pub data: Option<Value>,
    /// The files the call changed (write tools, through [`crate::changes::commit`]).
    pub changes: Vec<FileChange>,
    /// A captured command's changes, for the call's owner to land or discard.
    pub held: HeldSlot,
}

/// A captured command's changes on their way from the tool to the call's owner
/// ([`crate::changes::Held`]); taken once.
#[derive(Clone, Default)]
pub struct HeldSlot(Option<Arc<Mutex<Option<crate::changes::Held>>>>);

impl HeldSlot {
    /// A slot holding `held`.
    pub fn new(held: crate::changes::Held) -> Self {
        Self(Some(Arc::new(Mutex::new(Some(held)))))
    }

    /// What it holds, once.
    pub fn take(&self) -> Option<crate::changes::Held> {
        self.0.as_ref().and_then(|m| m.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take())
    }
}

impl PartialEq for HeldSlot {
    fn eq(&self, other: &Self) -> bool {
        match (&self.0, &other.0) {
            (None, None) => true,
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

impl std::fmt::Debug for HeldSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() { "HeldSlot(..)" } else { "HeldSlot(empty)" })
    }
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

/// What else a tool's success does, beyond its result and its file changes; the engine acts on
/// it (no caller asks for a tool by name).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Effect {
    /// Nothing else.
    #[default]
    None,
    /// Sets the session's plan (the [`ToolDetails::Plan`] of its result).
    SetsPlan,
}

/// A shell command a call would run, as the guard reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShellLine<'a> {
    /// The command line.
    pub command: &'a str,
    /// Whether it asks to run outside the OS sandbox, and why.
    pub escalate: Option<&'a str>,
    /// Whether it runs in the background, past its call (DESIGN §4.4): what it writes is not
    /// captured on an overlay.
    pub background: bool,
}

/// What an "approve for this session" of a call covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Covers {
    /// Nothing: every such call is approved once (an escalation out of the sandbox).
    Nothing,
    /// This exact command line.
    Command(String),
    /// The tool on each path the call touches.
    Paths,
    /// The tool, whatever its arguments.
    Tool,
    /// A host a command reaches (`host:port`): not a tool's, but a question a call asks.
    Host(String),
}

/// A tool: typed arguments, what it may do, and how it runs. Implement this and the registry
/// derives the rest ([`DynTool`]). A tool that changes files (`KIND` is [`ToolKind::Write`])
/// only plans: the call's owner commits the plan through [`crate::changes::commit`], so no
/// write tool can write any other way.
#[async_trait]
pub trait Tool: Send + Sync + 'static {
    /// The arguments; the doc comment is the tool's description.
    type Args: DeserializeOwned + schemars::JsonSchema + Send + Sync + 'static;
    /// The tool's name.
    const NAME: &'static str;
    /// What it may do.
    const KIND: ToolKind;
    /// What kind of action a client shows it as.
    const CLIENT_KIND: ClientKind;
    /// What else its success does.
    const EFFECT: Effect = Effect::None;
    /// What a person reads for a call: `Run `cargo test``, `Read src/a.rs`.
    fn title(args: &Self::Args) -> String;
    /// The paths a call would touch, judged by the sandbox before it runs.
    fn paths(_args: &Self::Args) -> Vec<(String, Access)> {
        Vec::new()
    }
    /// How long a call may run; most tools take the session's default.
    fn timeout(_args: &Self::Args, default: Duration) -> Duration {
        default
    }
    /// The shell command a call runs (shell tools).
    fn shell(_args: &Self::Args) -> Option<ShellLine<'_>> {
        None
    }
    /// What an approval for the session covers: the tool on its paths, or the tool.
    fn covers(args: &Self::Args) -> Covers {
        if Self::paths(args).is_empty() {
            Covers::Tool
        } else {
            Covers::Paths
        }
    }
    /// The change a call would make, computed without touching the disk (write tools).
    async fn plan(&self, _args: &Self::Args, _ctx: &ToolContext) -> Result<ChangePlan, ToolError> {
        Err(ToolError::new(format!("`{}` changes no files", Self::NAME)))
    }
    /// Runs the tool (every kind but [`ToolKind::Write`]).
    async fn run(&self, _args: &Self::Args, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        Err(ToolError::new(format!("`{}` changes files only through its plan", Self::NAME)))
    }
}

/// One call of a tool, bound to its arguments, parsed once when the call was prepared: the
/// erased form every caller works with. The defaults are those of a call that touches no path,
/// runs no shell line and changes no file through a plan (an MCP server's tool).
#[async_trait]
pub trait Bound: Send + Sync {
    /// The paths it would touch.
    fn paths(&self) -> Vec<(String, Access)> {
        Vec::new()
    }
    /// How long it may run.
    fn timeout(&self, default: Duration) -> Duration {
        default
    }
    /// The shell command it runs.
    fn shell(&self) -> Option<ShellLine<'_>> {
        None
    }
    /// What a person reads for it; `None`: the tool's name says it.
    fn title(&self) -> Option<String> {
        None
    }
    /// What an approval for the session covers.
    fn covers(&self) -> Covers {
        if self.paths().is_empty() {
            Covers::Tool
        } else {
            Covers::Paths
        }
    }
    /// The change it would make (write tools), without touching the disk.
    async fn plan(&self, _ctx: &ToolContext) -> Option<Result<ChangePlan, ToolError>> {
        None
    }
    /// Runs it; a write tool plans and commits.
    async fn run(&self, ctx: &ToolContext) -> Result<ToolOutput, ToolError>;
}

/// A tool as the registry holds it.
pub trait DynTool: Send + Sync + 'static {
    /// Name, description and argument schema.
    fn definition(&self) -> ToolDefinition;
    /// What the tool may do.
    fn kind(&self) -> ToolKind;
    /// What kind of action a client shows its calls as (an MCP server's tool: other).
    fn client_kind(&self) -> ClientKind {
        ClientKind::Other
    }
    /// What else its success does.
    fn effect(&self) -> Effect;
    /// Parses `args` (already valid against the schema) into a call.
    fn bind(self: Arc<Self>, args: &Value) -> Result<Arc<dyn Bound>, ToolError>;
}

impl<T: Tool> DynTool for T {
    fn definition(&self) -> ToolDefinition {
        schema::definition_for::<T::Args>(T::NAME)
    }

    fn kind(&self) -> ToolKind {
        T::KIND
    }

    fn client_kind(&self) -> ClientKind {
        T::CLIENT_KIND
    }

    fn effect(&self) -> Effect {
        T::EFFECT
    }

    fn bind(self: Arc<Self>, args: &Value) -> Result<Arc<dyn Bound>, ToolError> {
        // The registry validated `args` against this very schema, so a failure here means the
        // schema and the struct disagree (e.g. a custom deserializer); report it, do not panic.
        let args = T::Args::deserialize(args)
            .map_err(|e| ToolError::new(format!("invalid arguments for {}: {e}", T::NAME)))?;
        Ok(Arc::new(Typed { tool: self, args }))
    }
}

/// A typed tool with its parsed arguments.
struct Typed<T: Tool> {
    tool: Arc<T>,
    args: T::Args,
}

#[async_trait]
impl<T: Tool> Bound for Typed<T> {
    fn paths(&self) -> Vec<(String, Access)> {
        T::paths(&self.args)
    }

    fn timeout(&self, default: Duration) -> Duration {
        T::timeout(&self.args, default)
    }

    fn shell(&self) -> Option<ShellLine<'_>> {
        T::shell(&self.args)
    }

    fn title(&self) -> Option<String> {
        Some(T::title(&self.args))
    }

    fn covers(&self) -> Covers {
        T::covers(&self.args)
    }

    async fn plan(&self, ctx: &ToolContext) -> Option<Result<ChangePlan, ToolError>> {
        if T::KIND != ToolKind::Write {
            return None;
        }
        Some(self.tool.plan(&self.args, ctx).await)
    }

    async fn run(&self, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        if T::KIND == ToolKind::Write {
            let plan = self.tool.plan(&self.args, ctx).await?;
            return commit_plan(&plan, ctx).await;
        }
        self.tool.run(&self.args, ctx).await
    }
}

/// `text` as a title quotes it: its first line, at most [`TITLE_CHARS`] characters, `…` where it
/// was cut.
pub fn quoted(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default();
    let mut shown: String = line.chars().take(TITLE_CHARS).collect();
    if shown.len() < text.trim_end().len() {
        shown.push('…');
    }
    shown
}

/// The most characters of an argument a title quotes.
pub const TITLE_CHARS: usize = 120;

/// Commits `plan` and tells the model what it did: the one way a planned change is written.
pub async fn commit_plan(plan: &ChangePlan, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
    let changes = crate::changes::commit(plan, ctx).await?;
    Ok(files::committed(plan, changes))
}

/// The registry with every built-in tool of this version.
pub fn builtin_registry() -> Result<ToolRegistry, RegistryError> {
    let mut registry = ToolRegistry::new();
    registry.register(Arc::new(ReadFile))?;
    registry.register(Arc::new(WriteFile))?;
    registry.register(Arc::new(EditFile))?;
    registry.register(Arc::new(AppendFile))?;
    registry.register(Arc::new(ApplyPatch))?;
    registry.register(Arc::new(ListFiles))?;
    registry.register(Arc::new(GlobSearch))?;
    registry.register(Arc::new(GrepSearch))?;
    registry.register(Arc::new(Bash))?;
    registry.register(Arc::new(ProcessOutput))?;
    registry.register(Arc::new(ProcessList))?;
    registry.register(Arc::new(ProcessStop))?;
    registry.register(Arc::new(GetCurrentTime))?;
    registry.register(Arc::new(GetTokenUsage))?;
    registry.register(Arc::new(UpdatePlan))?;
    registry.register(Arc::new(LoadSkill))?;
    registry.register(Arc::new(SpawnAgent))?;
    registry.register(Arc::new(WaitAgent))?;
    registry.register(Arc::new(SendAgent))?;
    registry.register(Arc::new(CloseAgent))?;
    Ok(registry)
}

/// The file tools end to end through [`crate::changes`]: plan, commit, checkpoint, undo.
#[cfg(test)]
mod changes_tests;

/// Background processes end to end through the tools: [`crate::processes`] in a session.
#[cfg(test)]
mod processes_tests;

#[cfg(test)]
pub(crate) mod testing {
    //! A tool context on a real temp workspace, for unit tests.
    use super::*;

    /// A result's details as JSON, to read by key in a test.
    pub(crate) fn details(out: &ToolOutput) -> serde_json::Value {
        #[allow(clippy::unwrap_used)]
        serde_json::to_value(&out.details).unwrap()
    }

    /// `ctx` as a call of turn `turn_id` of its session, kept in `store`: its files are
    /// checkpointed there and its processes recorded there.
    pub(crate) fn in_session(ctx: &mut ToolContext, store: Arc<crate::store::Store>, turn_id: &str) {
        let files = Arc::new(SessionFiles::new(&ctx.session_id, store.clone(), &ctx.data_dir, ctx.clock.clone()));
        let observer = Arc::new(crate::processes::Unobserved);
        let processes =
            Arc::new(crate::processes::SessionProcesses::new(&ctx.session_id, store, ctx.clock.clone(), observer));
        let skills = Arc::new(crate::skills::SessionSkills::new(
            Vec::new(),
            ctx.workspace.root(),
            &ctx.session_id,
            crate::audit::AuditSink::disabled(),
            ctx.clock.clone(),
        ));
        ctx.session = Some(InSession { turn_id: turn_id.to_string(), files, processes, skills, agents: None });
    }

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
