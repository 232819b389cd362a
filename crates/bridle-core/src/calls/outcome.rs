//! How a call ends: [`CallOutcome`], and [`NotRun`], every reason a call does not run.
//!
//! Rule: a call that does not run is built in one place ([`CallOutcome::not_run`]), from a
//! reason; the reason decides the words the model reads, the status the window shows and the
//! failure the front ends act on, so the same refusal reads the same wherever it happens.

use std::time::Duration;

use bridle_protocol::{ToolResult, ToolStatus};

use crate::changes::FileChange;
use crate::guard::Verdict;
use crate::hooks::HookRun;
use crate::tools::{CallError, Effect};

/// Why a call did not produce a successful result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallFailure {
    /// No such tool.
    UnknownTool,
    /// Arguments not JSON even after repair.
    NotJson,
    /// Arguments do not match the schema.
    InvalidArguments,
    /// The guard (or a human) refused it.
    Denied,
    /// It could not go on (the loop guard, a store that failed, an unreadable approval).
    Stopped,
    /// The tool ran and reported an error.
    ToolError,
    /// The tool ran past its timeout.
    TimedOut,
    /// The turn was interrupted while it ran or waited.
    Interrupted,
}

/// Why a call is not run: each reason has its own words for the model.
#[derive(Debug, Clone)]
pub enum NotRun {
    /// The call never became a valid call of a known tool.
    Invalid(CallError),
    /// The verdict is deny; the result names every finding behind it.
    Refused {
        /// The tool's name as called.
        tool: String,
    },
    /// The fourth identical call in a row: the turn ends.
    Looping,
    /// An earlier call of the same answer ended the turn through the loop guard.
    AfterLoop,
    /// A person said no, with their words for the model when they gave any.
    DeniedByUser(Option<String>),
    /// Nobody answered within the approval timeout (seconds).
    Expired(u64),
    /// The request was withdrawn (a new message came instead of an answer, say).
    Withdrawn(String),
    /// The turn was interrupted before the call ran.
    Interrupted,
    /// The person edited the arguments and the edited call was refused, for this reason.
    EditRefused(Box<NotRun>),
    /// Something Bridle needed to record or read failed first (the words say what).
    Unrecorded(String),
}

impl NotRun {
    fn message(&self, verdict: &Verdict) -> String {
        match self {
            NotRun::Invalid(err) => format!("Error: {err}"),
            NotRun::Refused { tool } => {
                let reasons: Vec<_> = verdict.findings.iter().map(|f| f.message.as_str()).collect();
                if reasons.is_empty() {
                    format!("Denied: `{tool}` is not allowed here.")
                } else {
                    format!("Denied: {}", reasons.join("; "))
                }
            }
            NotRun::Looping => {
                "Not run: this is the fourth identical call in a row with nothing changed, so the turn has ended."
                    .into()
            }
            NotRun::AfterLoop => "Not run: the turn was ended by the loop guard.".into(),
            NotRun::DeniedByUser(Some(words)) => format!("Denied by the user: {words}"),
            NotRun::DeniedByUser(None) => "Denied by the user.".into(),
            NotRun::Expired(secs) => format!("Denied: nobody answered the approval request within {secs} s."),
            NotRun::Withdrawn(why) => format!("Denied: {why}."),
            NotRun::Interrupted => "Not run: interrupted by the user.".into(),
            NotRun::EditRefused(why) => format!("The user's edited arguments were refused. {}", why.message(verdict)),
            NotRun::Unrecorded(why) => format!("Not run: {why}."),
        }
    }

    fn status(&self) -> ToolStatus {
        match self {
            NotRun::Refused { .. } | NotRun::DeniedByUser(_) | NotRun::Expired(_) | NotRun::Withdrawn(_) => {
                ToolStatus::Denied
            }
            NotRun::Interrupted => ToolStatus::Interrupted,
            NotRun::EditRefused(why) => why.status(),
            NotRun::Invalid(_) | NotRun::Looping | NotRun::AfterLoop | NotRun::Unrecorded(_) => ToolStatus::Error,
        }
    }

    fn failure(&self) -> CallFailure {
        match self {
            NotRun::Invalid(CallError::UnknownTool { .. }) => CallFailure::UnknownTool,
            NotRun::Invalid(CallError::NotJson { .. }) => CallFailure::NotJson,
            NotRun::Invalid(CallError::Invalid { .. }) => CallFailure::InvalidArguments,
            NotRun::EditRefused(why) => why.failure(),
            NotRun::Refused { .. } | NotRun::DeniedByUser(_) | NotRun::Expired(_) | NotRun::Withdrawn(_) => {
                CallFailure::Denied
            }
            NotRun::Interrupted => CallFailure::Interrupted,
            NotRun::Looping | NotRun::AfterLoop | NotRun::Unrecorded(_) => CallFailure::Stopped,
        }
    }
}

/// Everything known about a finished call.
#[derive(Debug, Clone)]
pub struct CallOutcome {
    /// The verdict it ran or was refused under (a validation deny when it never reached the guard).
    pub verdict: Verdict,
    /// Whether the tool ran.
    pub executed: bool,
    /// What the model receives.
    pub result: ToolResult,
    /// How it ended, for events and the UI.
    pub status: ToolStatus,
    /// Why it failed, if it did.
    pub failure: Option<CallFailure>,
    /// Why it did not run, when it did not.
    pub not_run: Option<NotRun>,
    /// Execution time (zero when it did not run).
    pub duration: Duration,
    /// The files it changed, as committed (empty unless a write succeeded).
    pub changes: Vec<FileChange>,
    /// What else its success did, as its tool declares (none unless it ran and succeeded).
    pub effect: Effect,
    /// The post-call hooks that ran, for the audit log.
    pub hooks: Vec<HookRun>,
}

impl CallOutcome {
    /// The outcome of call `call_id` that did not run, for `reason`, under `verdict`.
    pub fn not_run(call_id: &str, verdict: Verdict, reason: NotRun) -> Self {
        Self {
            result: ToolResult::error(call_id, reason.message(&verdict)),
            status: reason.status(),
            failure: Some(reason.failure()),
            not_run: Some(reason),
            verdict,
            executed: false,
            duration: Duration::ZERO,
            changes: Vec::new(),
            effect: Effect::None,
            hooks: Vec::new(),
        }
    }

    /// Whether the loop guard stopped this call (the turn ends).
    pub fn stopped_by_loop_guard(&self) -> bool {
        matches!(self.not_run, Some(NotRun::Looping))
    }
}
