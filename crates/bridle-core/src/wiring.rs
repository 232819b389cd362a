//! One wiring for every front end (DESIGN §6, last paragraph): where a launch's files are, the
//! config they hold, and the engine settings, store, audit log and provider built from them.
//!
//! The rule this module keeps: `bridle run`, `tool`, `guard`, `approvals` and the app all start
//! here, and the calls of every front end are built in one place from what this produces
//! ([`EngineConfig::calls`]), so the user's mode, rules, disabled tools, sensitive paths,
//! sandbox and limits apply identically whichever front end runs the call. The process's
//! environment is read here, once ([`Wiring::from_process`]), and handed on as values: the paths
//! and API keys it names, and the variables the programs Bridle starts inherit (the engine's
//! `host_environment`, the MCP servers' environment). Nothing below this module reads it.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;

use crate::audit::{AuditError, AuditLog, AuditSink};
use crate::config::{paths, Config, ConfigError, Managed, ProviderConfig, ProviderKind};
use crate::engine::EngineConfig;
use crate::provider::{self, ModelProvider, ProviderError};
use crate::secrets::{self, KeySource};
use crate::shell_sandbox::HostEnvironment;
use crate::store::{Store, StoreError};
use crate::telemetry::Telemetry;

/// The locations a launch names (flags; `None` falls back to the environment, then defaults).
#[derive(Debug, Clone, Default)]
pub struct Flags {
    /// `--workspace`.
    pub workspace: Option<PathBuf>,
    /// `--data-dir`.
    pub data_dir: Option<PathBuf>,
    /// `--config`.
    pub config: Option<PathBuf>,
}

/// Why a front end could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum WiringError {
    /// The workspace folder is missing or unreadable.
    #[error("the workspace {path} does not exist ({source})")]
    Workspace {
        /// The folder.
        path: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// The data directory cannot be created.
    #[error("cannot create the data directory {path}: {source}")]
    DataDir {
        /// The folder.
        path: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// The config file is unreadable or invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The store cannot be opened.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The audit log cannot be opened.
    #[error(transparent)]
    Audit(#[from] AuditError),
    /// The provider cannot be built.
    #[error(transparent)]
    Provider(#[from] ProviderError),
}

/// A launch's files and config: what every front end starts from.
#[derive(Debug, Clone)]
pub struct Wiring {
    /// The workspace root (canonical).
    pub workspace: PathBuf,
    /// Bridle's data directory.
    pub data_dir: PathBuf,
    /// The config file (it may not exist yet).
    pub config_file: PathBuf,
    /// The user's home folder, for `~`.
    pub home: Option<PathBuf>,
    /// The config as loaded; a front end may override what its flags say (`--mode`).
    pub config: Config,
    api_keys: HashMap<&'static str, String>,
    /// Every variable of the launch's environment (empty when it was given as a lookup only).
    environment: HostEnvironment,
    /// The store once opened: opened (and its leftovers ended) once per launch, however many
    /// parts of a front end ask for it.
    store: OpenedStore,
    /// The export to the team's collector, started at the first audit log opened (DESIGN §17).
    telemetry: StartedTelemetry,
}

/// The launch's telemetry exporter (none when `[telemetry]` is off), shared by its clones.
#[derive(Clone, Default)]
struct StartedTelemetry(Arc<std::sync::OnceLock<Option<Telemetry>>>);

impl std::fmt::Debug for StartedTelemetry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "StartedTelemetry({:?})", self.0.get())
    }
}

/// How long the queued telemetry may take to flush at exit.
pub const TELEMETRY_FLUSH: std::time::Duration = std::time::Duration::from_secs(2);

/// The launch's store, shared by the clones of its wiring.
#[derive(Clone, Default)]
struct OpenedStore(Arc<std::sync::OnceLock<Arc<Store>>>);

impl std::fmt::Debug for OpenedStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.get().is_some() { "OpenedStore(open)" } else { "OpenedStore(not yet)" })
    }
}

/// Marks this process non-dumpable, so no process of the same user (a command under Landlock, a
/// hook, an MCP server) can read its memory or its environment, where API keys are, through
/// `/proc/PID/environ`, `/proc/PID/mem` or ptrace. Every front end calls it first.
pub fn protect_this_process() {
    if let Err(e) = rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable) {
        tracing::warn!("cannot mark this process non-dumpable: {e}");
    }
}

impl Wiring {
    /// Resolves `flags` against this process's environment, read here once, and its current
    /// folder: what every front end starts from.
    pub fn from_process(flags: Flags) -> Result<Self, WiringError> {
        let environment = HostEnvironment::new(std::env::vars_os());
        let lookup = |name: &str| environment.get(name).cloned();
        let wiring = Self::load(flags, lookup, std::env::current_dir)?;
        Ok(Self { environment, ..wiring })
    }

    /// Resolves `flags` against `env` (`BRIDLE_WORKSPACE`, `BRIDLE_DATA_DIR`, `BRIDLE_CONFIG`,
    /// `HOME`, `XDG_DATA_HOME`; the workspace defaults to `current_dir`) and loads the config. A
    /// lookup lists no variables: the programs such a launch starts inherit none (tests).
    pub fn load(
        flags: Flags,
        env: impl Fn(&str) -> Option<OsString>,
        current_dir: impl FnOnce() -> std::io::Result<PathBuf>,
    ) -> Result<Self, WiringError> {
        let data_dir = paths::data_dir(flags.data_dir, &env);
        let config_file = paths::config_file(flags.config, &data_dir, &env);
        // The managed policy goes above the user's config here, once, for every front end.
        let config = match Managed::load(&paths::managed_file(&env))? {
            Some(managed) => managed.apply(Config::load(&config_file)?, &config_file)?,
            None => Config::load(&config_file)?,
        };
        let workspace =
            match flags.workspace.or_else(|| env("BRIDLE_WORKSPACE").filter(|v| !v.is_empty()).map(PathBuf::from)) {
                Some(dir) => dir,
                None => current_dir().map_err(|source| WiringError::Workspace { path: ".".into(), source })?,
            };
        let workspace = workspace
            .canonicalize()
            .map_err(|source| WiringError::Workspace { path: workspace.display().to_string(), source })?;
        let api_keys = [ProviderKind::Openai, ProviderKind::Anthropic]
            .into_iter()
            .filter_map(|kind| {
                let name = kind.api_key_variable();
                let key = env(name)?.into_string().ok().filter(|k| !k.is_empty())?;
                Some((name, key))
            })
            .collect();
        let home = paths::home(&env);
        Ok(Self {
            workspace,
            data_dir,
            config_file,
            home,
            config,
            api_keys,
            environment: HostEnvironment::default(),
            store: OpenedStore::default(),
            telemetry: StartedTelemetry::default(),
        })
    }

    /// What a front end must say at every start when the user turned the shell sandbox off
    /// (DESIGN §5.1): commands then run with the user's own rights, in every mode.
    pub fn unsandboxed_warning(&self) -> Option<String> {
        (!self.config.sandbox.enabled).then(|| {
            format!(
                "warning: the shell sandbox is off ([sandbox] enabled = false in {}): commands run with \
                 your own rights, outside any sandbox",
                self.config_file.display()
            )
        })
    }

    /// The engine's settings: everything the config says, for this workspace and data dir.
    pub fn engine_config(&self) -> EngineConfig {
        EngineConfig {
            home: self.home.clone(),
            config_file: Some(self.config_file.clone()),
            host_environment: self.environment.clone(),
            ..EngineConfig::from_config(&self.config, self.workspace.clone(), self.data_dir.clone())
        }
    }

    /// The conversation store, `<data-dir>/bridle.db`, opened at the first call and shared after.
    /// Opening it ends the background processes a Bridle process that died left running (DESIGN
    /// §4.4), so every front end's start does.
    pub fn store(&self) -> Result<Arc<Store>, WiringError> {
        if let Some(store) = self.store.0.get() {
            return Ok(store.clone());
        }
        self.create_data_dir()?;
        let opening = crate::clock::Phase::start("store open and migrations");
        let store = Store::open(&self.data_dir.join("bridle.db"))?;
        drop(opening);
        let _sweep = crate::clock::Phase::start("leftover-process sweep");
        let ended = crate::processes::end_leftovers(&store, crate::clock::Clock::now_ms(&crate::clock::SystemClock));
        if ended > 0 {
            tracing::info!("ended {ended} background process(es) an earlier Bridle process left running");
        }
        // And whatever their commands detached, by the cgroups they were kept in.
        let swept = crate::shell_sandbox::end_leftover_cgroups();
        if swept > 0 {
            tracing::info!("ended what {swept} command(s) of a Bridle process that is gone left running");
        }
        // Two threads opening at once both open; the first kept is the one every later call gets.
        Ok(self.store.0.get_or_init(|| Arc::new(store)).clone())
    }

    /// The audit writer on `<data-dir>/audit.db`, exporting what it commits to the team's
    /// collector when `[telemetry]` is on.
    pub fn audit(&self) -> Result<AuditSink, WiringError> {
        self.create_data_dir()?;
        let _phase = crate::clock::Phase::start("audit log open");
        Ok(AuditSink::start(AuditLog::open(&self.data_dir)?.with_telemetry(self.telemetry())))
    }

    /// The launch's exporter, started at the first call: its headers' values come from the
    /// keychain. One that cannot start is logged and left off; it never stops a session.
    pub fn telemetry(&self) -> Option<Telemetry> {
        self.telemetry
            .0
            .get_or_init(|| {
                let config = &self.config.telemetry;
                let endpoint = config.endpoint.clone().filter(|_| config.is_on())?;
                let headers = config
                    .headers
                    .iter()
                    .filter_map(|name| match secrets::header(name, &endpoint) {
                        Some(value) => Some((name.clone(), value)),
                        None => {
                            tracing::warn!("telemetry: no value for the header `{name}` in the keychain");
                            None
                        }
                    })
                    .collect();
                match Telemetry::start(config, headers) {
                    Ok(telemetry) => telemetry,
                    Err(e) => {
                        tracing::warn!("{e}; nothing is exported");
                        None
                    }
                }
            })
            .clone()
    }

    /// At exit: flushes what is queued for the collector for at most [`TELEMETRY_FLUSH`], and
    /// records what it never got in one `warning` row through `audit`.
    pub fn close_telemetry(&self, audit: &AuditSink) {
        let Some(Some(telemetry)) = self.telemetry.0.get() else { return };
        let now = || crate::clock::Clock::now_ms(&crate::clock::SystemClock);
        if let Some(outage) = telemetry.shutdown(TELEMETRY_FLUSH, now) {
            audit.record(crate::audit::outage_record(&outage, now()));
            if let Err(e) = audit.flush() {
                tracing::error!("audit log: {e}");
            }
        }
    }

    /// The API key for `config`'s server and where it was found: the OS keychain's entry for
    /// its kind and base URL first, else the kind's environment variable (DESIGN §8).
    pub fn api_key(&self, config: &ProviderConfig) -> Option<(String, KeySource)> {
        if let Some(key) = secrets::get(config.kind, &config.base_url) {
            return Some((key, KeySource::Keychain));
        }
        let key = self.api_keys.get(config.kind.api_key_variable())?;
        Some((key.clone(), KeySource::Environment))
    }

    /// The model provider for `config`, its key from the keychain or the environment (never
    /// from the config).
    pub fn provider(&self, config: &ProviderConfig) -> Result<Arc<dyn ModelProvider>, WiringError> {
        let key = self.api_key(config).map(|(key, _)| key);
        Ok(provider::from_config(config, key)?.into())
    }

    /// The config's MCP servers, launched (in parallel, each within its start-up timeout; this
    /// returns at once). Stdio servers start in `<data-dir>/mcp`, not in the workspace, so a
    /// module a command planted there is not what `python3 -m` or `npx` finds; they get the
    /// workspace as `BRIDLE_WORKSPACE` and the environment `bash` gets (an allow-list). What
    /// needs their tools waits for [`crate::mcp::McpHub::settled`]; a session does at its turns.
    pub fn mcp(&self) -> Arc<crate::mcp::McpHub> {
        let _phase = crate::clock::Phase::start("MCP servers launched");
        let cwd = self.data_dir.join("mcp");
        if let Err(e) = std::fs::create_dir_all(&cwd) {
            tracing::warn!("cannot create {}: {e}", cwd.display());
        }
        let mut env = crate::shell_sandbox::child_environment(self.environment.vars(), &self.config.sandbox.env);
        env.push(("BRIDLE_WORKSPACE".into(), self.workspace.clone().into_os_string()));
        crate::mcp::McpHub::launch(&self.config.mcp, &cwd, env.into_iter())
    }

    fn create_data_dir(&self) -> Result<(), WiringError> {
        std::fs::create_dir_all(&self.data_dir)
            .map_err(|source| WiringError::DataDir { path: self.data_dir.display().to_string(), source })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use bridle_protocol::Mode;

    #[test]
    fn every_setting_of_the_config_reaches_the_engine() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("config.toml");
        std::fs::write(
            &config,
            "mode = \"auto\"\ndisabled_tools = [\"bash\"]\nsensitive_paths = [\"/srv/keys\"]\n\
             [rules]\ndeny = [\"bash(echo*)\"]\nallow = [\"read_file\"]\n\
             [sandbox]\nnetwork = true\n[limits]\nmax_steps = 3\n",
        )
        .unwrap();
        let flags =
            Flags { workspace: Some(dir.path().into()), data_dir: Some(dir.path().join("d")), config: Some(config) };
        let env = |name: &str| (name == "HOME").then(|| OsString::from("/home/someone"));
        let wiring = Wiring::load(flags, env, || unreachable!()).unwrap();
        let engine = wiring.engine_config();
        assert_eq!(engine.mode, Mode::Auto);
        assert_eq!(engine.rules.deny, ["bash(echo*)"]);
        assert_eq!(engine.rules.allow, ["read_file"]);
        assert_eq!(engine.disabled_tools, ["bash"]);
        assert_eq!(engine.extra_sensitive, [PathBuf::from("/srv/keys")]);
        assert!(engine.sandbox.network.is_on());
        assert_eq!(engine.limits.max_steps, 3);
        assert_eq!(engine.home, Some(PathBuf::from("/home/someone")));
        assert_eq!(engine.config_file, Some(dir.path().join("config.toml")));
    }

    #[test]
    fn a_missing_workspace_is_a_clear_error() {
        let flags = Flags { workspace: Some("/nonexistent/bridle-ws".into()), ..Flags::default() };
        let err = Wiring::load(flags, |_| None, || unreachable!()).unwrap_err();
        assert!(err.to_string().contains("/nonexistent/bridle-ws"), "{err}");
    }
}
