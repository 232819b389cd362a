//! What a session is set up from: its config ([`EngineConfig`], read from the user's config by
//! [`EngineConfig::from_config`]) and what it needs from outside ([`EngineDeps`]).
//!
//! Rule: one constructor builds each thing every front end needs — the permit, the shell
//! sandbox, the calls — so `bridle run`, `bridle tool`, ACP and the window judge a call the same
//! way under the same config.

use std::path::PathBuf;
use std::sync::Arc;

use bridle_protocol::Mode;

use crate::audit::AuditSink;
use crate::brief::DEFAULT_SYSTEM_PROMPT;
use crate::calls::{Calls, Permit};
use crate::clock::Clock;
use crate::config::{Config, Limits, Rules, SandboxConfig};
use crate::guard::{validate_builtin_rules, Guard, Policy, RuleError};
use crate::provider::{ModelProvider, RetryPolicy};
use crate::shell_sandbox::{HostEnvironment, ShellSandbox};
use crate::store::Store;
use crate::tools::ToolRegistry;
use crate::workspace::Workspace;

use super::EngineError;

/// How a session behaves.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// The workspace root.
    pub workspace: PathBuf,
    /// Bridle's data directory (tool outputs, blobs).
    pub data_dir: PathBuf,
    /// Approval mode.
    pub mode: Mode,
    /// Turn limits.
    pub limits: Limits,
    /// Provider retry policy.
    pub retry: RetryPolicy,
    /// Bridle's own instructions: the first part of the brief assembled at spawn
    /// ([`crate::brief`]), before the environment and the project's instructions.
    pub system_prompt: String,
    /// The model's context window, when known.
    pub context_window: Option<u64>,
    /// The user's home folder, for `~` in paths (passed in: the core reads no environment).
    pub home: Option<PathBuf>,
    /// Paths the user protects beyond the built-in list.
    pub extra_sensitive: Vec<PathBuf>,
    /// Leave approval requests pending for another process and suspend the turn, instead of
    /// waiting (`bridle run --on-ask defer`).
    pub defer_approvals: bool,
    /// The config file "approve always" writes its rule to.
    pub config_file: Option<PathBuf>,
    /// The user's allow, ask and deny rules.
    pub rules: Rules,
    /// Tools denied in every mode.
    pub disabled_tools: Vec<String>,
    /// The OS sandbox for `bash`.
    pub sandbox: SandboxConfig,
    /// When a long conversation is compacted.
    pub compaction: crate::config::CompactionConfig,
    /// The user's hooks around every call.
    pub hooks: crate::config::HooksConfig,
    /// The environment Bridle was launched with, as its wiring read it (the core reads none):
    /// commands and hooks inherit its allowed part, and the sandbox masks the desktop sockets it
    /// names. Empty by default: then they inherit nothing.
    pub host_environment: HostEnvironment,
    /// The front end driving the session (`app`, `cli`, `acp`), named in its audit.
    pub front_end: &'static str,
    /// Where skills are found beyond the standard folders.
    pub skills: crate::config::SkillsConfig,
    /// The managed policy over these settings (DESIGN §17): the modes a session may switch to.
    pub managed: Option<crate::config::Managed>,
    /// The git worktree the session works in, when Bridle made one for it (set from the store's
    /// record when the session starts, never from the worktree's own files).
    pub worktree: Option<crate::worktrees::Worktree>,
    /// How many children the session may start, how deep, and their roles (DESIGN §16.1).
    pub agents: crate::config::AgentsConfig,
    /// Its parent, when the session is a child another session started.
    pub agent: Option<super::agents::AgentOrigin>,
}

impl Default for EngineConfig {
    fn default() -> Self {
        Self {
            workspace: PathBuf::from("."),
            data_dir: PathBuf::from("."),
            mode: Mode::default(),
            limits: Limits::default(),
            retry: RetryPolicy::default(),
            system_prompt: DEFAULT_SYSTEM_PROMPT.to_string(),
            context_window: None,
            home: None,
            extra_sensitive: Vec::new(),
            defer_approvals: false,
            config_file: None,
            rules: Rules::default(),
            disabled_tools: Vec::new(),
            sandbox: SandboxConfig::default(),
            compaction: crate::config::CompactionConfig::default(),
            hooks: crate::config::HooksConfig::default(),
            host_environment: HostEnvironment::default(),
            front_end: "",
            skills: crate::config::SkillsConfig::default(),
            managed: None,
            worktree: None,
            agents: crate::config::AgentsConfig::default(),
            agent: None,
        }
    }
}

impl EngineConfig {
    /// The engine settings of a user config, for `workspace` and `data_dir`: every setting the
    /// config holds (front ends go through `Wiring::engine_config`, which also
    /// fills in the home folder and the config file).
    pub fn from_config(config: &Config, workspace: PathBuf, data_dir: PathBuf) -> Self {
        Self {
            workspace,
            data_dir,
            mode: config.mode,
            limits: config.limits.clone(),
            retry: RetryPolicy { max_retries: config.limits.max_retries, ..RetryPolicy::default() },
            system_prompt: config.system_prompt.clone().unwrap_or_else(|| DEFAULT_SYSTEM_PROMPT.to_string()),
            context_window: config.provider.as_ref().and_then(|p| p.context_window),
            home: None,
            extra_sensitive: config.sensitive_paths.clone(),
            defer_approvals: false,
            config_file: None,
            rules: config.rules.clone(),
            disabled_tools: config.disabled_tools.clone(),
            sandbox: config.sandbox.clone(),
            compaction: config.compaction.clone(),
            hooks: config.hooks.clone(),
            host_environment: HostEnvironment::default(),
            front_end: "",
            managed: config.managed.clone(),
            worktree: None,
            skills: config.skills.clone(),
            agents: config.agents.clone(),
            agent: None,
        }
    }

    /// Where this session's skills are looked for (DESIGN §13.1).
    pub fn skill_places(&self) -> crate::skills::Places {
        crate::skills::Places {
            workspace: self.workspace.clone(),
            home: self.home.clone(),
            paths: self.skills.paths.clone(),
        }
    }

    /// The permit these settings start a session with: the mode, the user's rules, the config
    /// file "always" writes to (a session adds its grants).
    pub fn permit(&self) -> Result<Permit, EngineError> {
        Ok(Permit::new(self.mode, self.policy()?)
            .with_config_file(self.config_file.clone())
            .with_managed(self.managed.clone())
            .with_network(self.network_proxy()?))
    }

    /// The proxy commands reach hosts through, when `[sandbox.network]` is not off; names pinned
    /// in `BRIDLE_NET_RESOLVE` (of the environment Bridle was launched with) resolve first.
    fn network_proxy(&self) -> Result<Option<Arc<crate::network::Proxy>>, EngineError> {
        if !self.sandbox.network.is_on() {
            return Ok(None);
        }
        let pinned = self.host_environment.get("BRIDLE_NET_RESOLVE").map(|v| v.to_string_lossy().into_owned());
        let resolver = crate::network::SystemResolver::with_pinned(pinned.as_deref().unwrap_or_default())
            .map_err(EngineError::Network)?;
        let proxy =
            crate::network::Proxy::new(&self.sandbox.network, Arc::new(resolver)).map_err(EngineError::Network)?;
        Ok(Some(Arc::new(proxy)))
    }

    /// The one way calls are built from settings, under `permit` (whose mode is in force): the
    /// workspace with its path sandbox and the shell sandbox of that mode, the guard, the user's
    /// hooks. The engine and `bridle tool`/`guard` all use it. Fails on a broken shipped rule
    /// file or a missing workspace.
    pub fn calls(&self, tools: Arc<ToolRegistry>, permit: Arc<Permit>) -> Result<Calls, EngineError> {
        self.calls_in(tools, permit, true)
    }

    /// [`Self::calls`], in a session or not: outside one nothing holds a command's changes for a
    /// person (no layer, no question), so the guard is told commands are not captured and
    /// `review` asks by the text.
    fn calls_in(&self, tools: Arc<ToolRegistry>, permit: Arc<Permit>, session: bool) -> Result<Calls, EngineError> {
        validate_builtin_rules()?;
        let workspace = Workspace::open(&self.workspace, self.home.clone(), &self.data_dir, &self.extra_sensitive)
            .map_err(|source| EngineError::Workspace { path: self.workspace.display().to_string(), source })?;
        let mode = permit.mode();
        // Every mode runs commands in the sandbox, `bypass` included (DESIGN §5.1): only the
        // config's `[sandbox] enabled = false` runs them unsandboxed.
        let mut masked = workspace.sandbox.protected_paths();
        masked.extend(self.config_file.clone());
        let mut shell = ShellSandbox::new(&self.sandbox, workspace.root(), &masked, mode == Mode::Plan)
            .with_host_environment(&self.host_environment)
            .with_home(self.home.as_deref())
            .with_layers(self.data_dir.join("layers"));
        if let Some(worktree) = &self.worktree {
            shell = shell.in_worktree(&worktree.common_dir, &worktree.git_writable());
        }
        if mode == Mode::Review {
            shell = shell.capturing_everything();
        }
        if !session {
            shell = shell.not_capturing(
                "outside a session (`bridle tool`, `bridle guard`) a command's changes are not captured",
            );
        }
        let workspace = workspace.with_shell(shell);
        // The guard judges under the permit's mode and rules, never its own.
        let guard = Guard::new(mode).with_sandbox(workspace.sandbox.clone()).with_shell(&workspace.shell);
        // Hooks run in the shell's sandbox with the environment `bash` gets.
        // (Home shown to them: a hook is the user's own script, kept wherever the user keeps it.)
        let hooks = crate::hooks::Hooks::new(
            &self.hooks,
            workspace.shell.clone().showing_home(),
            self.host_environment.vars(),
        )?;
        Ok(Calls::new(tools, Arc::new(guard), Arc::new(workspace), permit, self.limits.tool_timeout())
            .with_hooks(Arc::new(hooks)))
    }

    /// Calls outside a session (`bridle tool`, `bridle guard`): [`Self::calls`] under the
    /// settings' own permit, which remembers no approvals, with commands not captured (nothing
    /// would hold their changes).
    pub fn calls_outside_a_session(&self, tools: Arc<ToolRegistry>) -> Result<Calls, EngineError> {
        self.calls_in(tools, Arc::new(self.permit()?), false)
    }

    /// The user's rules and disabled tools, compiled.
    pub fn policy(&self) -> Result<Policy, RuleError> {
        Policy::from_config(&Config {
            rules: self.rules.clone(),
            disabled_tools: self.disabled_tools.clone(),
            managed: self.managed.clone(),
            ..Config::default()
        })
    }
}

/// What the engine needs from outside: passed in, never global.
#[derive(Clone)]
pub struct EngineDeps {
    /// The model.
    pub provider: Arc<dyn ModelProvider>,
    /// The tools offered (built-ins, or a test's own).
    pub tools: Arc<ToolRegistry>,
    /// The user's MCP servers: their ready tools are offered on top of `tools`, as the servers
    /// stand at each turn's start (which waits for servers still starting): one stopped,
    /// restarted or added shows from the next turn.
    pub mcp: Option<Arc<crate::mcp::McpHub>>,
    /// The conversation store.
    pub store: Arc<Store>,
    /// The clock.
    pub clock: Arc<dyn Clock>,
    /// Where every decision and action is recorded (sanitised).
    pub audit: AuditSink,
}
