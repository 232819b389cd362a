//! The user's configuration (`config.toml`): provider, mode, rules, limits, the shell sandbox,
//! hooks and MCP servers.
//!
//! Parsing is strict about unknown keys so a typo never silently changes behaviour; API keys
//! are never read from here (they come from the keychain or the environment).
//!
//! It is plain data at the bottom of the layers: it names no other module of the crate, so what
//! needs more than parsing to be found wrong (a rule's pattern, a hook's matcher, a server that
//! will not start) is checked by the module that uses it, and the Settings view's saving lives
//! above, in `settings`.

mod agents;
pub mod edit;
mod explain;
mod front_matter;
mod hooks;
pub mod managed;
mod mcp;
mod network;
pub mod paths;
mod pricing;
mod runs_code;
mod telemetry;

use std::path::Path;
use std::time::Duration;

use bridle_protocol::Mode;
pub use bridle_protocol::NetworkMode;
use serde::{Deserialize, Serialize};

pub use agents::{AgentsConfig, Isolation, Role};
pub use edit::RuleList;
pub use explain::{explain, Explained};
pub use front_matter::split_front_matter;
pub use hooks::{HookConfig, HooksConfig, DEFAULT_HOOK_TIMEOUT_SECS};
pub use managed::{Managed, ManagedPolicy, MANAGED_FILE};
pub use mcp::{McpConfig, McpServerConfig, DEFAULT_MCP_STARTUP_SECS};
pub use network::NetworkConfig;
pub use pricing::{ModelPriceConfig, PricingConfig};
pub use runs_code::{is_exec_config, EXEC_CONFIG_FILES};
pub use telemetry::{TelemetryConfig, TelemetryProtocol};

/// Which wire format a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    /// OpenAI-compatible Chat Completions (OpenAI, Ollama, llama.cpp, vLLM, LM Studio).
    Openai,
    /// Anthropic Messages.
    Anthropic,
    /// Ollama's native chat API (base URL: the server's root).
    Ollama,
}

impl ProviderKind {
    /// The environment variable holding this provider's API key.
    pub fn api_key_variable(self) -> &'static str {
        match self {
            ProviderKind::Openai => "OPENAI_API_KEY",
            ProviderKind::Anthropic => "ANTHROPIC_API_KEY",
            // A local server: no key (the variable is never set for it).
            ProviderKind::Ollama => "OLLAMA_API_KEY",
        }
    }

    /// The server a kind talks to when no base URL is given.
    pub fn default_base_url(self) -> &'static str {
        match self {
            ProviderKind::Openai => "https://api.openai.com/v1",
            ProviderKind::Anthropic => "https://api.anthropic.com",
            ProviderKind::Ollama => "http://127.0.0.1:11434",
        }
    }

    /// `openai`, `anthropic` or `ollama`, as the config spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::Openai => "openai",
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::Ollama => "ollama",
        }
    }
}

impl std::str::FromStr for ProviderKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "openai" => Ok(Self::Openai),
            "anthropic" => Ok(Self::Anthropic),
            "ollama" => Ok(Self::Ollama),
            other => Err(format!("unknown provider `{other}` (expected openai, anthropic or ollama)")),
        }
    }
}

/// The model provider to talk to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderConfig {
    /// Wire format.
    pub kind: ProviderKind,
    /// Base URL; OpenAI-compatible URLs include `/v1`, Anthropic's do not.
    pub base_url: String,
    /// Model name.
    pub model: String,
    /// The model's context window in tokens, when known.
    #[serde(default)]
    pub context_window: Option<u64>,
    /// Completion token cap per request (Anthropic requires one).
    #[serde(default = "default_max_output_tokens")]
    pub max_output_tokens: u32,
}

/// The provider's `max_output_tokens` when the config gives none.
pub fn default_max_output_tokens() -> u32 {
    8192
}

/// Bounds on what one turn may do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    /// Model requests per turn.
    pub max_steps: u32,
    /// Tool calls of one answer running at once.
    pub max_concurrent_tools: usize,
    /// Seconds a tool call may run, counted after approval.
    pub tool_timeout_secs: u64,
    /// Provider retries before giving up.
    pub max_retries: u32,
    /// Seconds an approval request waits before it expires as denied.
    pub approval_timeout_secs: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_steps: 50,
            max_concurrent_tools: 8,
            tool_timeout_secs: 60,
            max_retries: 4,
            approval_timeout_secs: 600,
        }
    }
}

impl Limits {
    /// The per-call tool timeout.
    pub fn tool_timeout(&self) -> Duration {
        Duration::from_secs(self.tool_timeout_secs)
    }

    /// How long an approval request waits.
    pub fn approval_timeout(&self) -> Duration {
        Duration::from_secs(self.approval_timeout_secs)
    }
}

/// The whole configuration file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// Approval mode.
    pub mode: Mode,
    /// The model provider; absent until the user sets one.
    pub provider: Option<ProviderConfig>,
    /// Turn limits.
    pub limits: Limits,
    /// Replaces the built-in system prompt when set.
    pub system_prompt: Option<String>,
    /// Paths no file tool may touch, beyond the built-in list (credentials, Bridle's data).
    pub sensitive_paths: Vec<std::path::PathBuf>,
    /// Tools the agent may not use at all (denied in every mode).
    pub disabled_tools: Vec<String>,
    /// The user's allow, ask and deny rules.
    pub rules: Rules,
    /// The OS sandbox `bash` runs in.
    pub sandbox: SandboxConfig,
    /// When and how a long conversation is compacted.
    pub compaction: CompactionConfig,
    /// What tokens cost, for the Usage view.
    pub pricing: PricingConfig,
    /// The user's pre- and post-call hooks.
    pub hooks: HooksConfig,
    /// The user's MCP servers.
    pub mcp: McpConfig,
    /// Export to the team's OpenTelemetry collector (DESIGN §17).
    pub telemetry: TelemetryConfig,
    /// The managed policy applied above this config at load, if there is one (never written).
    #[serde(skip)]
    pub managed: Option<Managed>,
    /// Where skills are found beyond the standard folders.
    pub skills: SkillsConfig,
    /// Children a session may start, and their roles (DESIGN §16.1).
    pub agents: AgentsConfig,
}

/// `[skills]`: more folders holding skills (each a folder of `NAME/SKILL.md` folders), looked in
/// after the workspace's and the user's own; the user named them, so their skills are trusted.
///
/// ```toml
/// [skills]
/// paths = ["~/work/team-skills"]
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SkillsConfig {
    /// Folders of skills, in the order they are looked in (`~` is the user's home).
    pub paths: Vec<std::path::PathBuf>,
}

/// `[compaction]`: keeping a long session inside the model's window (DESIGN §10).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CompactionConfig {
    /// Compact when a request would fill this share of the window (0.1 to 0.95).
    pub at: f64,
    /// The most recent user messages (and everything after them) kept word for word.
    pub keep_user_messages: usize,
}

impl Default for CompactionConfig {
    fn default() -> Self {
        Self { at: 0.8, keep_user_messages: 2 }
    }
}

/// Which OS mechanism confines `bash` (`auto`: bubblewrap, else Landlock, else none).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SandboxBackend {
    /// The strongest that works here.
    #[default]
    Auto,
    /// Bubblewrap only.
    Bwrap,
    /// Landlock only.
    Landlock,
}

/// Folders of build output a captured command writes straight through (DESIGN §4.3's
/// `[sandbox] scratch` default).
pub const SCRATCH: &[&str] = &["target", "node_modules", "dist", "build", ".venv"];

/// `[sandbox]`: how shell commands are confined (DESIGN §5.1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SandboxConfig {
    /// Off, `bash` runs unsandboxed (and `auto` asks for every command).
    pub enabled: bool,
    /// Which hosts commands may reach, through Bridle's proxy (`[sandbox.network]`; the old
    /// `network = true` reads as `mode = "allow"`, `allow = ["*"]`).
    pub network: NetworkConfig,
    /// Paths outside the workspace that commands may write.
    pub writable: Vec<std::path::PathBuf>,
    /// Paths in the home folder commands may read, beyond the built-in list of what toolchains
    /// need (the rest of home is hidden from them).
    pub readable: Vec<std::path::PathBuf>,
    /// Which mechanism to use.
    pub backend: SandboxBackend,
    /// Variables passed to commands, MCP servers and hooks beyond the built-in allow-list
    /// (DESIGN §4.2), unless their value looks secret.
    pub env: Vec<String>,
    /// Most processes a command may run at once.
    pub max_processes: u64,
    /// Size of a command's private `/tmp`: bytes, or a number with `K`, `M` or `G` (`"1G"`).
    pub tmp_size: ByteSize,
    /// Whether commands may make Unix-domain sockets (off: a socket file outside the masks would
    /// be a door out; `socketpair` works either way).
    pub unix_sockets: bool,
    /// Whether a command runs on an overlay of the workspace, so what it changed is shown,
    /// approved and undoable (DESIGN §4.3); off, commands write to the workspace directly.
    pub capture: bool,
    /// Folders of build output (workspace-relative names) a captured command writes straight
    /// through, without checkpoints, besides what `.gitignore` and `.ignore` name.
    pub scratch: Vec<String>,
}

impl Default for SandboxConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            network: NetworkConfig::default(),
            writable: Vec::new(),
            readable: Vec::new(),
            backend: SandboxBackend::Auto,
            env: Vec::new(),
            max_processes: 1024,
            tmp_size: ByteSize(1 << 30),
            unix_sockets: false,
            capture: true,
            scratch: SCRATCH.iter().map(|s| s.to_string()).collect(),
        }
    }
}

/// A size in bytes, written in the config as a number of bytes or as a string with a binary
/// suffix (`"512M"`, `"1G"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ByteSize(pub u64);

impl ByteSize {
    /// The size in bytes.
    pub fn bytes(self) -> u64 {
        self.0
    }
}

impl Serialize for ByteSize {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u64(self.0)
    }
}

impl<'de> Deserialize<'de> for ByteSize {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Written {
            Bytes(u64),
            Text(String),
        }
        match Written::deserialize(deserializer)? {
            Written::Bytes(n) => Ok(ByteSize(n)),
            Written::Text(text) => parse_size(&text).map(ByteSize).ok_or_else(|| {
                serde::de::Error::custom(format!("`{text}` is not a size (bytes, or a number with K, M or G)"))
            }),
        }
    }
}

fn parse_size(text: &str) -> Option<u64> {
    let text = text.trim();
    let (number, unit) = match text.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => text.split_at(i),
        None => (text, ""),
    };
    let shift = match unit.trim().trim_end_matches(['b', 'B', 'i']).to_ascii_uppercase().as_str() {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        _ => return None,
    };
    number.parse::<u64>().ok()?.checked_mul(1 << shift)
}

/// User rules: patterns like `bash(git status*)`, `edit_file(src/**)` or a bare tool name.
/// Precedence is deny > ask > allow; an allow never overrides a high or critical finding.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Rules {
    /// Calls that run without asking (unless a guardian finds something high or critical).
    pub allow: Vec<String>,
    /// Calls that always ask.
    pub ask: Vec<String>,
    /// Calls that are always denied.
    pub deny: Vec<String>,
}

/// Why TOML text is not a Bridle config.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ParseError {
    /// Not TOML, or a key or a value the config does not know (the message names the line).
    #[error(transparent)]
    Toml(#[from] toml::de::Error),
    /// A model's price is negative or not a number.
    #[error("[pricing.models.\"{model}\"]: prices must be zero or more")]
    Price {
        /// The model whose prices are wrong.
        model: String,
    },
    /// The currency is not a three-letter code.
    #[error("[pricing] currency = \"{currency}\" is not a three-letter code like USD")]
    Currency {
        /// What the config says.
        currency: String,
    },
    /// The compaction threshold is outside its range.
    #[error("[compaction] at = {at} is out of range (0.1 to 0.95)")]
    CompactionAt {
        /// What the config says.
        at: f64,
    },
}

/// Why a configuration could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file exists but could not be read.
    #[error("cannot read config {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// A user setting would loosen the managed policy.
    #[error("{path}: {message} (refused by the managed policy {managed})")]
    Managed {
        /// The user's config file.
        path: String,
        /// The managed file.
        managed: String,
        /// Which setting and why.
        message: String,
    },
    /// The file is not valid TOML for a Bridle config.
    #[error("invalid config {path}: {message}")]
    Parse {
        /// The file.
        path: String,
        /// What is wrong, with the line.
        message: String,
    },
    /// The file could not be written.
    #[error("cannot write config {path}: {source}")]
    Write {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
}

impl Config {
    /// Loads `path`; a missing file is the default configuration.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Config::default()),
            Err(source) => return Err(ConfigError::Read { path: path.display().to_string(), source }),
        };
        Self::parse(&text).map_err(|e| ConfigError::Parse { path: path.display().to_string(), message: e.to_string() })
    }

    /// Refuses `mode` when a managed policy does not allow it (a front end's `--mode`, a mode
    /// picker, ACP's `session/set_mode`).
    pub fn check_mode(&self, mode: Mode) -> Result<(), String> {
        self.managed.as_ref().map_or(Ok(()), |m| m.check_mode(mode))
    }

    /// Parses TOML text.
    pub fn parse(text: &str) -> Result<Config, ParseError> {
        let config: Config = toml::from_str(text)?;
        let bad_price = config.pricing.models.iter().find(|(_, p)| {
            [p.input, p.output, p.cached_input.unwrap_or(0.0)].iter().any(|v| !v.is_finite() || *v < 0.0)
        });
        if let Some((model, _)) = bad_price {
            return Err(ParseError::Price { model: model.clone() });
        }
        if config.pricing.currency.len() != 3 || !config.pricing.currency.chars().all(|c| c.is_ascii_uppercase()) {
            return Err(ParseError::Currency { currency: config.pricing.currency });
        }
        if !(0.1..=0.95).contains(&config.compaction.at) {
            return Err(ParseError::CompactionAt { at: config.compaction.at });
        }
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn parses_a_full_config() {
        let config = Config::parse(
            r#"
            mode = "auto-edit"
            [provider]
            kind = "anthropic"
            base_url = "https://api.anthropic.com"
            model = "claude-sonnet"
            context_window = 200000
            [limits]
            max_steps = 7
            [sandbox]
            network = true
            writable = ["/var/cache/x"]
            "#,
        )
        .unwrap();
        assert_eq!(config.mode, Mode::AutoEdit);
        let provider = config.provider.unwrap();
        assert_eq!(provider.kind, ProviderKind::Anthropic);
        assert_eq!(provider.context_window, Some(200_000));
        assert_eq!(config.limits.max_steps, 7);
        assert_eq!(config.limits.max_concurrent_tools, 8);
        assert!(config.sandbox.enabled && config.sandbox.network == NetworkConfig::every_public_host());
        assert_eq!(config.sandbox.writable, [std::path::PathBuf::from("/var/cache/x")]);
        assert!(Config::default().sandbox.enabled && !Config::default().sandbox.network.is_on());
        assert_eq!(Config::default().sandbox.tmp_size.bytes(), 1 << 30);
        assert_eq!(Config::default().sandbox.max_processes, 1024);
        let sized =
            Config::parse("[sandbox]\ntmp_size = \"512M\"\nmax_processes = 64\nenv = [\"JAVA_HOME\"]\n").unwrap();
        assert_eq!(sized.sandbox.tmp_size.bytes(), 512 << 20);
        assert_eq!(sized.sandbox.env, ["JAVA_HOME"]);
        assert_eq!(Config::parse("[sandbox]\ntmp_size = 4096\n").unwrap().sandbox.tmp_size.bytes(), 4096);
        assert!(Config::parse("[sandbox]\ntmp_size = \"lots\"\n").is_err());
    }

    #[test]
    fn the_network_is_a_table_or_the_old_switch() {
        let table = Config::parse(
            "[sandbox.network]\nmode = \"ask\"\nallow = [\"crates.io\", \"github.com:22\"]\ndeny = [\"*.evil.test\"]\n",
        )
        .unwrap();
        assert_eq!(table.sandbox.network.mode, NetworkMode::Ask);
        assert_eq!(table.sandbox.network.allow, ["crates.io", "github.com:22"]);
        assert_eq!(table.sandbox.network.deny, ["*.evil.test"]);
        assert_eq!(Config::parse("[sandbox]\nnetwork = false\n").unwrap().sandbox.network, NetworkConfig::default());
        for bad in ["[sandbox.network]\nmode = \"sometimes\"\n", "[sandbox.network]\nallowed = []\n"] {
            let e = Config::parse(bad).unwrap_err().to_string();
            assert!(e.contains("`sandbox.network` is either"), "{e}");
        }
    }

    #[test]
    fn rejects_unknown_keys_and_modes() {
        assert!(Config::parse("mdoe = \"auto\"").unwrap_err().to_string().contains("mdoe"));
        assert!(Config::parse("mode = \"yolo\"").is_err());
    }

    #[test]
    fn a_missing_file_is_the_default() {
        let config = Config::load(Path::new("/nonexistent/bridle/config.toml")).unwrap();
        assert_eq!(config, Config::default());
    }

    #[test]
    fn a_price_table_gives_the_model_its_prices_and_refuses_nonsense() {
        let config = Config::parse(
            "[pricing]\ncurrency = \"EUR\"\n[pricing.models.\"gpt-4.1\"]\ninput = 1.85\noutput = 7.4\ncached_input = 0.46\n\
             [pricing.models.small]\ninput = 0.1\noutput = 0.4\n",
        )
        .unwrap();
        let price = config.pricing.price_of("gpt-4.1").unwrap();
        assert_eq!((price.currency.as_str(), price.input, price.cached_input, price.output), ("EUR", 1.85, 0.46, 7.4));
        assert_eq!(config.pricing.price_of("small").unwrap().cached_input, 0.1, "cached defaults to input");
        assert!(config.pricing.price_of("other").is_none());
        let negative = Config::parse("[pricing.models.m]\ninput = -1\noutput = 1\n").unwrap_err();
        assert!(matches!(&negative, ParseError::Price { model } if model == "m"), "{negative:?}");
        let negative = negative.to_string();
        assert!(negative.contains("zero or more"), "{negative}");
        let currency = Config::parse("[pricing]\ncurrency = \"euro\"\n").unwrap_err().to_string();
        assert!(currency.contains("three-letter"), "{currency}");
    }
}
