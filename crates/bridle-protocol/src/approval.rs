//! Modes, guard decisions, findings and approval requests: the vocabulary of the guard.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// How much the agent may do without asking.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Reads only; every change is denied.
    ReadOnly,
    /// Looking before changing: reads, and `bash` in a read-only sandbox; no file writes.
    Plan,
    /// Reads run; changes, commands and MCP tools ask.
    #[default]
    Ask,
    /// Commands run in the sandbox at once; what they change in the workspace, and every file
    /// tool's change, waits for approval as a diff.
    Review,
    /// File changes run; commands and MCP tools ask.
    AutoEdit,
    /// Everything runs unless a guardian finds something worth a look.
    Auto,
    /// Everything runs but hard denials.
    Bypass,
}

impl Mode {
    /// Every mode, strictest first.
    pub const ALL: [Mode; 7] =
        [Mode::ReadOnly, Mode::Plan, Mode::Ask, Mode::Review, Mode::AutoEdit, Mode::Auto, Mode::Bypass];

    /// The kebab-case name used in configs, flags and on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::ReadOnly => "read-only",
            Mode::Plan => "plan",
            Mode::Ask => "ask",
            Mode::Review => "review",
            Mode::AutoEdit => "auto-edit",
            Mode::Auto => "auto",
            Mode::Bypass => "bypass",
        }
    }
}

impl std::str::FromStr for Mode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Mode::ALL.into_iter().find(|m| m.as_str() == s).ok_or_else(|| {
            format!("unknown mode `{s}` (expected read-only, plan, ask, review, auto-edit, auto or bypass)")
        })
    }
}

/// The guard's verdict on one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    /// Run it.
    Allow,
    /// A human decides.
    Ask,
    /// Do not run it.
    Deny,
}

/// Who or what produced a decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum DecisionSource {
    /// The mode's decision table.
    Mode,
    /// A user rule from the config.
    Rule,
    /// A guardian's finding.
    Guard,
    /// The path sandbox.
    Sandbox,
    /// A human answer.
    User,
    /// An unanswered request that expired.
    Timeout,
    /// The call could not be understood (unknown tool, invalid arguments).
    Validation,
    /// One of the user's hooks.
    Hook,
}

/// How serious a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth recording (e.g. reading outside the workspace).
    Low,
    /// Worth a look (exec-config writes, downloads, installs, `git push`).
    Medium,
    /// Dangerous (writes outside the workspace, escalation, evasion).
    High,
    /// Never allowed (sensitive paths, `rm -rf /`, fork bombs).
    Critical,
}

/// One thing a guardian noticed about a call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Finding {
    /// Which guardian, e.g. `path`, `shell-rule`.
    pub guardian: String,
    /// The rule's stable id.
    pub rule: String,
    /// How serious it is.
    pub severity: Severity,
    /// What was found, for the user.
    pub message: String,
    /// The call's sandbox holds this effect (the network is off or goes through the proxy's
    /// policy, the command's writes are captured and judged when they land, the place is
    /// read-only): recorded and shown, never asked about in `auto-edit`, `auto` and `bypass`.
    #[serde(default)]
    pub contained: bool,
}

/// A human's answer to an approval request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum ApprovalAnswer {
    /// Run this call once.
    ApproveOnce,
    /// Run it, and the same command (or tool on the same path) for the rest of the session.
    ApproveSession,
    /// Run it and write an allow rule to the config.
    ApproveAlways,
    /// Do not run it.
    Deny,
}

/// What a question to a person is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum ApprovalSubject {
    /// A tool call, which runs when approved.
    Call {
        /// The tool's name.
        tool: String,
        /// The canonical repaired arguments as JSON text.
        arguments: String,
    },
    /// A host a running command wants to reach; the connection waits for the answer.
    Host {
        /// The host the command named.
        host: String,
        /// Its port.
        port: u16,
        /// The command.
        command: String,
    },
    /// What a command changed in the workspace, held until approved or discarded.
    Changes {
        /// The command.
        command: String,
        /// The workspace paths it changed.
        files: Vec<String>,
    },
}

impl ApprovalSubject {
    /// What is asked, in a few words: the tool, `host:port`, or `changes of <command>`.
    pub fn headline(&self) -> String {
        match self {
            ApprovalSubject::Call { tool, .. } => tool.clone(),
            ApprovalSubject::Host { host, port, .. } => format!("{host}:{port}"),
            ApprovalSubject::Changes { command, .. } => format!("changes of `{command}`"),
        }
    }

    /// The question, in a sentence.
    pub fn sentence(&self) -> String {
        match self {
            ApprovalSubject::Call { tool, arguments } => format!("{tool} wants to run: {arguments}"),
            ApprovalSubject::Host { host, port, command } => format!("`{command}` wants to reach {host}:{port}"),
            ApprovalSubject::Changes { command, files } => {
                format!("`{command}` changed {}; keep the changes?", files.join(", "))
            }
        }
    }
}

/// A question waiting for a human: a call to run, or something a running call does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalRequest {
    /// The request's id.
    pub id: String,
    /// The session the call belongs to.
    pub session_id: String,
    /// The Bridle id of the call it is about (or that asks).
    pub call_id: String,
    /// What it is about.
    pub subject: ApprovalSubject,
    /// What the guardians found.
    pub findings: Vec<Finding>,
    /// The diff a change would make (computed without writing), or a command's held changes.
    pub preview: Option<String>,
    /// Hash of what an answer covers: for a call its tool, arguments and, for file changes, the
    /// files' current content; for a host the host, port and call; for held changes the call and
    /// the diff.
    pub call_hash: String,
    /// When the request was made (ms since the epoch).
    #[ts(type = "number")]
    pub created_at: i64,
    /// When it expires as denied (ms since the epoch).
    #[ts(type = "number")]
    pub expires_at: i64,
}
