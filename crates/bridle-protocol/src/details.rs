//! What a built-in tool did, typed: the `details` of a [`crate::ToolResult`], and how a call is
//! described to a client ([`ClientKind`]).
//!
//! Rule: every built-in tool that says more than its text says it here, in one variant of
//! [`ToolDetails`]; the audit, the window and the editors read these fields and nothing reads a
//! result by key (`data` stays for an MCP server's own structured output). A field renamed here
//! breaks each reader at compile time, the TypeScript ones included.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::{PlanItem, ProcessInfo, ProcessState, TokenUsage};

/// A skill loaded: which, from where, its resources and how it narrows the tools.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SkillLoad {
    /// Its name.
    pub name: String,
    /// `workspace`, `user` or `config`.
    pub source: String,
    /// Its `SKILL.md`.
    pub path: String,
    /// The SHA-256 of its `SKILL.md` as loaded.
    pub hash: String,
    /// The other files of its folder (workspace-relative for a workspace skill).
    pub resources: Vec<String>,
    /// The tools it narrows the model to while active, when it does.
    pub allowed_tools: Option<Vec<String>>,
}

/// What a built-in tool's call did, beyond the text the model reads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum ToolDetails {
    /// A `bash` command that ran to its end (DESIGN §4.2, §4.3, §5.1, §5.2).
    Shell(Box<ShellDetails>),
    /// A `bash` command started in the background (DESIGN §4.4).
    Background(BackgroundDetails),
    /// A file tool's committed change (`write_file`, `edit_file`, `append_file`, `apply_patch`).
    Files {
        /// Whether any file changed (an identical write changes none).
        changed: bool,
        /// The files, in path order.
        changes: Vec<LandedChange>,
    },
    /// One page of a text file (`read_file`).
    Read {
        /// The file's lines, when known (a huge file is not counted to its end).
        #[ts(type = "number | null")]
        total_lines: Option<u64>,
        /// The first line shown; `null` when the page is empty.
        #[ts(type = "number | null")]
        start_line: Option<u64>,
        /// The last line shown; `null` when the page is empty.
        #[ts(type = "number | null")]
        end_line: Option<u64>,
        /// Whether lines after the page were left out.
        truncated: bool,
        /// How the text was decoded, when not UTF-8.
        encoding: Option<TextEncoding>,
    },
    /// A file `read_file` did not show: it is binary.
    Binary {
        /// Its size in bytes.
        #[ts(type = "number")]
        size: u64,
    },
    /// The entries `list_files` found.
    Listing(Listing),
    /// The files `glob_search` found.
    Glob(GlobHits),
    /// The lines `grep_search` found.
    Grep(GrepHits),
    /// A background process as `process_output` or `process_stop` left it.
    Process {
        /// Its id in the session.
        process_id: String,
        /// Where it stands.
        state: ProcessState,
        /// Its exit code, once it exited with one.
        exit_code: Option<i32>,
        /// Bytes of output lost before this read (the ring keeps the last part).
        #[ts(type = "number")]
        dropped: u64,
        /// Workspace files it changed, once it ended (not undoable).
        changed: Vec<String>,
    },
    /// The session's background processes (`process_list`), oldest first.
    Processes {
        /// Each of them.
        processes: Vec<ProcessInfo>,
    },
    /// A skill loaded (`skill`, or a user's `/name`): which, from where, and its resources.
    Skill(Box<SkillLoad>),
    /// Children of the session as a `spawn_agent`, `wait_agent`, `send_agent` or `close_agent`
    /// call left them (DESIGN §16.1).
    Agents {
        /// Each child named by the call.
        agents: Vec<crate::AgentInfo>,
    },
    /// The model's plan (`update_plan`); the engine keeps it with the session.
    Plan {
        /// The steps, in order.
        items: Vec<PlanItem>,
    },
    /// The time now (`get_current_time`).
    Time {
        /// RFC 3339, in `timezone`.
        iso: String,
        /// The IANA zone it is given in.
        timezone: String,
        /// Milliseconds since the epoch.
        #[ts(type = "number")]
        unix_ms: i64,
    },
    /// The session's tokens (`get_token_usage`).
    Usage {
        /// The session's totals.
        total: TokenUsage,
        /// Tokens the last request put in the context window.
        #[ts(type = "number")]
        context_used: u64,
        /// The model's context window, when known.
        #[ts(type = "number | null")]
        context_window: Option<u64>,
    },
}

/// How a command was confined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum SandboxKind {
    /// bubblewrap: mount, PID and network namespaces.
    Bwrap,
    /// Landlock: the kernel's file, TCP and signal restrictions.
    Landlock,
    /// Unconfined.
    None,
}

impl SandboxKind {
    /// The name in results, the audit and the window.
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxKind::Bwrap => "bwrap",
            SandboxKind::Landlock => "landlock",
            SandboxKind::None => "none",
        }
    }
}

/// A `bash` command that ran to its end.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ShellDetails {
    /// Its exit code; `null` when a signal ended it.
    pub exit_code: Option<i32>,
    /// Whether it ran past its timeout and was stopped.
    pub timed_out: bool,
    /// Whether its output passed the cap and it was stopped.
    pub output_too_large: bool,
    /// How long it ran.
    #[ts(type = "number")]
    pub duration_ms: u64,
    /// Where its whole output was saved, when the model was shown only a part.
    pub output_file: Option<String>,
    /// How many processes it left running that were stopped with it.
    pub stopped_background: usize,
    /// How it was confined.
    pub sandbox: SandboxKind,
    /// What a confining sandbox did not hold.
    pub sandbox_gaps: Option<String>,
    /// What of the home folder it saw, when its sandbox hid it (DESIGN §5.1).
    pub sandbox_home: Option<String>,
    /// Whether it ran outside the sandbox, as a person approved.
    pub escalated: bool,
    /// Whether it could reach the network (through the proxy, or unconfined).
    pub network: bool,
    /// The hosts it reached or was refused, through the proxy.
    pub hosts: Vec<HostUse>,
    /// Whether what it changed is checkpointed (captured on an overlay, DESIGN §4.3).
    pub checkpointed: bool,
    /// What it changed in the workspace; `null` when that was not followed (outside a session).
    pub effects: Option<ShellEffects>,
}

/// A `bash` command started in the background.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct BackgroundDetails {
    /// Its id in the session.
    pub process_id: String,
    /// How long the call waited for it.
    #[ts(type = "number")]
    pub duration_ms: u64,
    /// Where it stands.
    pub state: ProcessState,
    /// Its exit code, when it ended already.
    pub exit_code: Option<i32>,
    /// How it is confined.
    pub sandbox: SandboxKind,
    /// What a confining sandbox does not hold.
    pub sandbox_gaps: Option<String>,
    /// What of the home folder it sees, when its sandbox hides it.
    pub sandbox_home: Option<String>,
    /// Whether it runs outside the sandbox, as a person approved.
    pub escalated: bool,
}

/// A command's dealings with one host, for its tool card.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct HostUse {
    /// The host, as the client named it.
    pub host: String,
    /// The port.
    pub port: u16,
    /// Whether these connections were let through.
    pub allowed: bool,
    /// How many.
    pub connections: u32,
    /// Bytes from the command to the host, all of them together.
    #[ts(type = "number")]
    pub sent: u64,
    /// Bytes from the host to the command.
    #[ts(type = "number")]
    pub received: u64,
    /// Why it was refused, when it was.
    pub reason: Option<String>,
}

/// What a command changed in the workspace (DESIGN §4.3).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ShellEffects {
    /// It ran on an overlay and its changes were captured (so they are diffed and undoable).
    pub captured: bool,
    /// Whether an undo can put its changes back.
    pub undoable: bool,
    /// Why they were not captured.
    pub reason: Option<String>,
    /// The files that landed, checkpointed.
    pub changes: Vec<LandedChange>,
    /// Not captured: what a scan before and after found, e.g. `src/a.rs (created)`.
    pub listed: Vec<String>,
    /// Not captured: the scan stopped before it saw everything.
    pub partial: bool,
    /// Ignored paths (build output) written through without checkpoints.
    pub ignored: Option<IgnoredOutput>,
    /// What landed in git's internals, e.g. `1 commit: abc1234 message`.
    pub git: Vec<String>,
    /// Files that did not land, and why.
    pub refused: Vec<RefusedPath>,
    /// Files thrown away, never landed (a person denied them, or nobody could be asked).
    pub discarded: Vec<String>,
    /// Why they were discarded.
    pub discarded_because: Option<String>,
    /// Why its changes could not be read back or applied.
    pub error: Option<String>,
}

/// Ignored output a command wrote through.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct IgnoredOutput {
    /// Files (and links).
    #[ts(type = "number")]
    pub files: u64,
    /// Their bytes.
    #[ts(type = "number")]
    pub bytes: u64,
}

/// A path left as it was, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RefusedPath {
    /// Workspace-relative POSIX path.
    pub path: String,
    /// Why.
    pub why: String,
}

/// How a file changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum ChangeKind {
    /// It did not exist.
    Created,
    /// Its content changed.
    Modified,
    /// It was removed.
    Deleted,
}

/// One file a call changed, checkpointed (its diff travels in the result's `diff`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct LandedChange {
    /// Workspace-relative POSIX path.
    pub path: String,
    /// How it changed.
    pub kind: ChangeKind,
    /// Lines added.
    #[ts(type = "number")]
    pub added: u64,
    /// Lines removed.
    #[ts(type = "number")]
    pub removed: u64,
    /// Bytes it holds now (0 when deleted).
    #[ts(type = "number")]
    pub bytes: u64,
}

/// A text encoding `read_file` decoded other than UTF-8.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
pub enum TextEncoding {
    /// UTF-16, little-endian (a `FF FE` mark).
    #[serde(rename = "utf-16le")]
    Utf16Le,
    /// UTF-16, big-endian (a `FE FF` mark).
    #[serde(rename = "utf-16be")]
    Utf16Be,
}

/// The entries of one directory listing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Listing {
    /// Root-relative paths in path order; directories end with `/`.
    pub entries: Vec<String>,
    /// Whether entries were left out because of the limit.
    pub truncated: bool,
    /// How many entries there are in all, when the walk finished; `None` when it stopped
    /// counting (more than 100 000 entries).
    pub total: Option<usize>,
}

/// The files one glob search found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct GlobHits {
    /// Root-relative file paths in path order: the first `limit` of all matches.
    pub files: Vec<String>,
    /// Whether matches were left out because of the limit.
    pub truncated: bool,
    /// How many files matched in all.
    pub total: usize,
}

/// One matching line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct GrepLine {
    /// 1-based line number.
    #[ts(type = "number")]
    pub line: u64,
    /// The line without its terminator, cut to `max_line_chars` (a cut ends in `… [+N chars]`).
    pub text: String,
}

/// The matching lines of one file, in line order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct GrepFile {
    /// Root-relative path of the file.
    pub path: String,
    /// Its matching lines that made the cut.
    pub lines: Vec<GrepLine>,
}

/// The outcome of one grep search.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct GrepHits {
    /// The first `max_results` matching lines, grouped by file, in (path, line) order; see
    /// [`GrepHits::hits`] for them one by one.
    pub files: Vec<GrepFile>,
    /// Whether matching lines were left out because of `max_results`.
    pub truncated: bool,
    /// How many lines matched in all.
    pub total_matches: usize,
    /// How many files had at least one match.
    pub files_matched: usize,
    /// Files not searched because they exceed `max_file_size`.
    pub skipped_large: usize,
    /// Files abandoned as binary (a NUL byte); their matches are not counted.
    pub skipped_binary: usize,
    /// Files that could not be opened or read.
    pub unreadable: usize,
}

impl GrepHits {
    /// The kept hits one by one: (root-relative path, 1-based line number, cut line text).
    pub fn hits(&self) -> impl Iterator<Item = (&str, u64, &str)> + '_ {
        self.files.iter().flat_map(|file| file.lines.iter().map(|l| (file.path.as_str(), l.line, l.text.as_str())))
    }

    /// How many hits were kept (at most `max_results`).
    pub fn len(&self) -> usize {
        self.files.iter().map(|file| file.lines.len()).sum()
    }

    /// Whether no hit was kept.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }
}

/// What kind of action a call is, as an editor shows it (ACP's tool kinds, DESIGN §15); each
/// tool declares its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum ClientKind {
    /// Reads files or state.
    Read,
    /// Changes files.
    Edit,
    /// Removes files.
    Delete,
    /// Moves or renames files.
    Move,
    /// Searches.
    Search,
    /// Runs a command.
    Execute,
    /// Thinks or plans.
    Think,
    /// Fetches from the network.
    Fetch,
    /// Anything else (an MCP server's tool).
    Other,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_variant_reads_as_its_tag_beside_its_fields() {
        let plan = ToolDetails::Plan { items: vec![] };
        assert_eq!(serde_json::to_value(&plan).unwrap(), serde_json::json!({"type": "plan", "items": []}));
        let glob = ToolDetails::Glob(GlobHits { files: vec!["a.rs".into()], truncated: false, total: 1 });
        let json = serde_json::to_value(&glob).unwrap();
        assert_eq!(json, serde_json::json!({"type": "glob", "files": ["a.rs"], "truncated": false, "total": 1}));
        assert_eq!(serde_json::from_value::<ToolDetails>(json).unwrap(), glob);
        let read = ToolDetails::Read {
            total_lines: Some(3),
            start_line: Some(1),
            end_line: Some(3),
            truncated: false,
            encoding: Some(TextEncoding::Utf16Le),
        };
        let json = serde_json::to_value(&read).unwrap();
        assert_eq!(json["encoding"], "utf-16le");
        assert_eq!(json["totalLines"], 3);
        assert_eq!(serde_json::from_value::<ToolDetails>(json).unwrap(), read);
    }

    #[test]
    fn a_shell_result_round_trips_with_its_effects() {
        let shell = ToolDetails::Shell(Box::new(ShellDetails {
            exit_code: Some(0),
            timed_out: false,
            output_too_large: false,
            duration_ms: 12,
            output_file: None,
            stopped_background: 0,
            sandbox: SandboxKind::Bwrap,
            sandbox_gaps: None,
            sandbox_home: None,
            escalated: false,
            network: true,
            hosts: vec![],
            checkpointed: true,
            effects: Some(ShellEffects {
                captured: true,
                undoable: true,
                changes: vec![LandedChange {
                    path: "f.txt".into(),
                    kind: ChangeKind::Modified,
                    added: 1,
                    removed: 1,
                    bytes: 9,
                }],
                ignored: Some(IgnoredOutput { files: 1, bytes: 4 }),
                ..ShellEffects::default()
            }),
        }));
        let json = serde_json::to_value(&shell).unwrap();
        assert_eq!(json["type"], "shell");
        assert_eq!(json["sandbox"], "bwrap");
        assert_eq!(json["effects"]["changes"][0]["kind"], "modified");
        assert_eq!(json["effects"]["discardedBecause"], serde_json::Value::Null);
        assert_eq!(serde_json::from_value::<ToolDetails>(json).unwrap(), shell);
    }
}
