//! Command-line arguments; global options are accepted before or after the subcommand.

use std::path::PathBuf;

use bridle_core::config::ProviderKind;
use bridle_protocol::Mode;
use clap::{Args, Parser, Subcommand, ValueEnum};

/// Exit code: an error (also: a call executed with `isError`).
pub const EXIT_ERROR: u8 = 1;
/// Exit code: usage error.
pub const EXIT_USAGE: u8 = 2;
/// Exit code: needs approval, not run.
pub const EXIT_ASK: u8 = 3;
/// Exit code: denied.
pub const EXIT_DENY: u8 = 4;
/// Exit code: interrupted.
pub const EXIT_INTERRUPTED: u8 = 130;

#[derive(Parser, Debug)]
#[command(name = "bridle", version, about = "A desktop agent harness, headless.")]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Args, Debug, Clone)]
pub struct Global {
    /// The workspace folder the agent works in.
    #[arg(long, global = true, env = "BRIDLE_WORKSPACE", value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Where Bridle keeps its database and outputs.
    #[arg(long, global = true, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// The config file (default: <data-dir>/config.toml).
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run one agent turn headless.
    Run(RunArgs),
    /// Run one tool call through the whole pipeline and print the result as JSON.
    Tool(ToolArgs),
    /// Print the guard's decision for a tool call; nothing runs.
    Guard(GuardArgs),
    /// List, show or delete stored sessions.
    Sessions(SessionsArgs),
}

/// What to do when a call needs approval.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnAsk {
    /// Ask on the terminal.
    Prompt,
    /// Approve once.
    Approve,
    /// Deny.
    Deny,
    /// Leave the request pending and exit 3.
    Defer,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// The message (read from stdin when absent and stdin is not a terminal).
    pub prompt: Option<String>,
    /// Wire format of the provider.
    #[arg(long, value_parser = parse_provider)]
    pub provider: Option<ProviderKind>,
    /// Provider base URL (OpenAI-compatible URLs include /v1; Anthropic's do not).
    #[arg(long)]
    pub base_url: Option<String>,
    /// Model name.
    #[arg(long)]
    pub model: Option<String>,
    /// Approval mode.
    #[arg(long, value_parser = parse_mode)]
    pub mode: Option<Mode>,
    /// Model requests per turn.
    #[arg(long)]
    pub max_steps: Option<u32>,
    /// What to do when a call needs approval (default: prompt on a terminal, deny otherwise).
    #[arg(long, value_enum)]
    pub on_ask: Option<OnAsk>,
    /// Continue this session.
    #[arg(long)]
    pub session: Option<String>,
    /// Print every event as one JSON line.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct ToolArgs {
    /// The tool's name.
    pub name: String,
    /// Arguments as JSON text (`-` reads them from stdin, for large payloads).
    #[arg(long, default_value = "{}")]
    pub args: String,
    /// Approval mode.
    #[arg(long, value_parser = parse_mode)]
    pub mode: Option<Mode>,
    /// Answer an `ask` with approve-once (never overrides a deny).
    #[arg(long, conflicts_with = "deny")]
    pub approve: bool,
    /// Answer with deny.
    #[arg(long)]
    pub deny: bool,
}

#[derive(Args, Debug)]
pub struct GuardArgs {
    /// The tool's name.
    pub name: String,
    /// Arguments as JSON text.
    #[arg(long, default_value = "{}")]
    pub args: String,
    /// Approval mode.
    #[arg(long, value_parser = parse_mode)]
    pub mode: Option<Mode>,
}

#[derive(Args, Debug)]
pub struct SessionsArgs {
    #[command(subcommand)]
    pub action: SessionsAction,
}

#[derive(Subcommand, Debug)]
pub enum SessionsAction {
    /// List sessions, most recent first.
    List {
        /// One JSON object per line.
        #[arg(long)]
        json: bool,
    },
    /// Print a session's history, one JSON item per line.
    Show {
        /// Session id.
        id: String,
    },
    /// Delete a session and its history.
    Delete {
        /// Session id.
        id: String,
    },
}

fn parse_mode(s: &str) -> Result<Mode, String> {
    s.parse()
}

fn parse_provider(s: &str) -> Result<ProviderKind, String> {
    s.parse()
}
