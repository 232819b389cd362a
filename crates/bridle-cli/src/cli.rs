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
    /// List the audit log, verify its hash chain, or export it as JSONL.
    Audit(crate::audit::AuditArgs),
    /// List pending approval requests, or answer one from this process.
    Approvals(ApprovalsArgs),
    /// Serve the Agent Client Protocol on stdin and stdout (for Zed, JetBrains IDEs, Neovim).
    Acp,
    /// List or stop the background processes sessions started.
    Processes(crate::processes::ProcessesArgs),
    /// List the models the configured server offers, with their context windows where known.
    Models(ModelsArgs),
    /// Store or remove a provider's API key in the OS keychain (the key is read from stdin).
    Auth(AuthArgs),
    /// The configured MCP servers: their status and tools.
    Mcp(McpArgs),
    /// The skills found for this workspace: list them, or trust the workspace's.
    Skills(crate::skills::SkillsArgs),
    /// Explain the configuration in force: each setting and where it came from.
    Config(crate::config::ConfigArgs),
}

/// The text form of `bridle sessions export`.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum ExportFormatArg {
    /// Markdown.
    Md,
    /// JSON.
    Json,
}

/// `bridle mcp`.
#[derive(Args, Debug)]
pub struct McpArgs {
    #[command(subcommand)]
    pub action: McpAction,
}

#[derive(Subcommand, Debug)]
pub enum McpAction {
    /// Start every configured server, print its status and tools, stop it.
    List {
        /// Print {"servers": [{"name","status","error","tools"}]}.
        #[arg(long)]
        json: bool,
    },
}

/// `bridle auth set|clear`.
#[derive(Args, Debug)]
pub struct AuthArgs {
    #[command(subcommand)]
    pub action: AuthAction,
}

#[derive(Subcommand, Debug)]
pub enum AuthAction {
    /// Read a key from stdin and store it for the provider (kind and base URL).
    Set(AuthTarget),
    /// Remove the provider's stored key.
    Clear(AuthTarget),
    /// Read the value of a `[telemetry] headers` entry from stdin and store it for the
    /// configured collector (the config names the header; its value lives only in the keychain).
    Header {
        /// The header's name, as `[telemetry] headers` lists it.
        name: String,
    },
}

/// Whose key: the provider's kind and base URL (defaults from the config's `[provider]`).
#[derive(Args, Debug)]
pub struct AuthTarget {
    /// Wire format of the provider.
    #[arg(long, value_parser = parse_provider)]
    pub provider: Option<ProviderKind>,
    /// The server's base URL (default: the config's, else the kind's public API).
    #[arg(long)]
    pub base_url: Option<String>,
}

/// `bridle models`.
#[derive(Args, Debug)]
pub struct ModelsArgs {
    /// The server to ask (default: the config's provider).
    #[command(flatten)]
    pub provider: ProviderArgs,
    /// Print {"models": [{"id", "contextWindow"}]}.
    #[arg(long)]
    pub json: bool,
}

/// What to do when a call needs approval.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum OnAsk {
    /// Ask on the terminal.
    #[default]
    Prompt,
    /// Approve once.
    Approve,
    /// Deny.
    Deny,
    /// Leave the request pending and exit 3.
    Defer,
}

/// Which model to talk to (defaults from the config's `[provider]`).
#[derive(Args, Debug, Clone, Default)]
pub struct ProviderArgs {
    /// Wire format of the provider.
    #[arg(long, value_parser = parse_provider)]
    pub provider: Option<ProviderKind>,
    /// Provider base URL (OpenAI-compatible URLs include /v1; Anthropic's do not).
    #[arg(long)]
    pub base_url: Option<String>,
    /// Model name.
    #[arg(long)]
    pub model: Option<String>,
}

/// How a turn is driven from the terminal.
#[derive(Args, Debug, Clone, Default)]
pub struct DriveArgs {
    /// Model requests per turn.
    #[arg(long)]
    pub max_steps: Option<u32>,
    /// What to do when a call needs approval (default: prompt on a terminal, deny otherwise).
    #[arg(long, value_enum)]
    pub on_ask: Option<OnAsk>,
    /// Print every event as one JSON line.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// The message (read from stdin when absent and stdin is not a terminal).
    pub prompt: Option<String>,
    #[command(flatten)]
    pub provider: ProviderArgs,
    /// Approval mode.
    #[arg(long, value_parser = parse_mode)]
    pub mode: Option<Mode>,
    #[command(flatten)]
    pub drive: DriveArgs,
    /// Continue this session.
    #[arg(long, conflicts_with = "worktree")]
    pub session: Option<String>,
    /// Work in a new git worktree of the workspace (a main checkout), kept in the data dir, on
    /// the new branch `bridle/NAME` (NAME: the session id's first 8 characters when not given).
    #[arg(long, value_name = "NAME", num_args = 0..=1, default_missing_value = "")]
    pub worktree: Option<String>,
    /// The commit the worktree's branch is cut from (default: the main checkout's HEAD).
    #[arg(long, value_name = "REF", requires = "worktree")]
    pub base: Option<String>,
}

#[derive(Args, Debug)]
pub struct ApprovalsArgs {
    #[command(subcommand)]
    pub action: ApprovalsAction,
}

/// An answer's scope.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// This call only.
    Once,
    /// This command, or this tool on this path, for the rest of the session.
    Session,
    /// Also write an allow rule to the config.
    Always,
}

#[derive(Subcommand, Debug)]
pub enum ApprovalsAction {
    /// Pending requests, oldest first.
    List {
        /// Only this session's.
        #[arg(long)]
        session: Option<String>,
        /// One JSON request per line.
        #[arg(long)]
        json: bool,
    },
    /// Approve a request; when no other process has its session open, the turn resumes here.
    Approve {
        /// The request's id.
        id: String,
        /// How far the approval reaches.
        #[arg(long, value_enum, default_value = "once")]
        scope: Scope,
        /// Replacement arguments (JSON), judged again before they run.
        #[arg(long = "args", value_name = "JSON")]
        edited_arguments: Option<String>,
        /// The call hash you reviewed; the answer is refused when it is not the request's.
        #[arg(long)]
        call_hash: Option<String>,
        #[command(flatten)]
        provider: ProviderArgs,
        #[command(flatten)]
        drive: DriveArgs,
    },
    /// Deny a request, with words for the model; the turn resumes as for approve.
    Deny {
        /// The request's id.
        id: String,
        /// Why, for the model.
        #[arg(long)]
        feedback: Option<String>,
        /// The call hash you reviewed.
        #[arg(long)]
        call_hash: Option<String>,
        #[command(flatten)]
        provider: ProviderArgs,
        #[command(flatten)]
        drive: DriveArgs,
    },
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
    /// Print a session's history, one JSON item per line; with --json, the whole session as
    /// one JSON document (items with their turn and compaction mark, pending approvals, token
    /// totals, file changes).
    Show {
        /// Session id.
        id: String,
        /// The whole session as one JSON document.
        #[arg(long)]
        json: bool,
    },
    /// Compact a session now: older tool outputs hidden from the model, the older conversation
    /// summarised by it; prints {"tokensBefore", "tokensAfter", "masked", "summarized"}.
    Compact {
        /// Session id.
        id: String,
        /// The model that writes the summary (default: the config's).
        #[command(flatten)]
        provider: ProviderArgs,
    },
    /// Export a session with proof: its conversation, calls, decisions and diffs (its audit rows,
    /// redacted as the log is) with their hashes and the chain head; check it later with
    /// `bridle audit verify --export FILE`.
    Export {
        /// Session id.
        id: String,
        /// `md` (a readable transcript) or `json`.
        #[arg(long, value_enum, default_value = "md")]
        format: ExportFormatArg,
        /// Write to this file (atomically) instead of stdout.
        #[arg(long)]
        out: Option<std::path::PathBuf>,
    },
    /// Delete a session, its history and the checkpoints only it kept.
    Delete {
        /// Session id.
        id: String,
    },
    /// Undo the file changes of a session's last turn (or the named one), whole or for the
    /// given paths; prints {"turnId", "restored", "removed", "refused"} and exits 1 when a file
    /// was refused (changed again since).
    Undo {
        /// Session id.
        id: String,
        /// The turn to undo (default: the last one that changed files).
        #[arg(long)]
        turn: Option<String>,
        /// Only these workspace-relative paths (repeatable).
        #[arg(long = "path")]
        paths: Vec<String>,
    },
    /// Put a worktree session away: its staged, unstaged and untracked files saved as three
    /// commits under refs/bridle/archive/ID, then its folder removed (refused while it runs).
    Archive {
        /// Session id.
        id: String,
    },
    /// Bring an archived worktree session back as it was, staged, unstaged and untracked (or
    /// check its branch out again when its folder was removed by hand).
    Restore {
        /// Session id.
        id: String,
    },
    /// Bring a worktree session's changes since its base into the main checkout, uncommitted;
    /// exits 1 on a conflict, naming the files, with nothing changed.
    Apply {
        /// Session id.
        id: String,
        /// Print the change as a patch and write nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Merge a worktree session's branch into the main checkout, which must be clean; exits 1
    /// on a conflict (the merge undone) or a dirty checkout.
    Merge {
        /// Session id.
        id: String,
    },
    /// List a turn's hunks (the last turn with changes, or the named one) with their ids, or
    /// keep, reject or unreject hunks by id, all or none; exits 1 on a conflict (lines changed
    /// since the turn), with nothing changed.
    Review {
        /// Session id.
        id: String,
        /// The turn to list (default: the last one that changed files).
        #[arg(long)]
        turn: Option<String>,
        /// Keep these hunks (reviewed, left as the turn made them).
        #[arg(long, num_args = 1.., conflicts_with_all = ["reject", "unreject"])]
        keep: Vec<String>,
        /// Reject these hunks: their lines go back to what they held before the turn.
        #[arg(long, num_args = 1.., conflicts_with = "unreject")]
        reject: Vec<String>,
        /// Undo the reject of these hunks.
        #[arg(long, num_args = 1..)]
        unreject: Vec<String>,
        /// Print the turn's hunks as one JSON object.
        #[arg(long)]
        json: bool,
    },
}

fn parse_mode(s: &str) -> Result<Mode, String> {
    s.parse()
}

fn parse_provider(s: &str) -> Result<ProviderKind, String> {
    s.parse()
}
