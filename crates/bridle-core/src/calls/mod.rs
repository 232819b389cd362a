//! The one owner of a tool call: check → permit → approve → run → record.
//!
//! - [`Calls::check`] looks the tool up, repairs and validates the arguments, has the path
//!   sandbox, the guard, the user's hooks and the loop guard judge the call, and folds what they
//!   say into one verdict (the stricter winning); a change a person will be asked about is
//!   planned here, once.
//! - [`Permit`] is the only holder of the session's mode, the rules in force and the
//!   approvals it remembers; the guard judges under what it holds.
//! - [`Calls::approve`] takes a call the verdict asks about through a person's answer; every
//!   question, a running call's about a host or its held changes too, is asked through the
//!   call's [`CallStream`] ([`Desk`], [`ApprovalQueue`]).
//! - [`Calls::run`] runs the tool, or commits the change that was approved, in its timeout;
//!   [`Calls::finish`] takes a checked call through approve, a slot of the batch and run.
//! - Each step says what happened as a [`CallEvent`] through the call's [`CallStream`] to a
//!   front end's [`Recorder`], and the audit rows a call leaves are shaped once ([`audit_rows`]).
//!
//! Rule: every front end runs calls through here and nothing else decides whether a call runs;
//! every way a call can fail — unknown tool, bad arguments, denial, tool error, timeout,
//! interrupt — ends as a result the model can read ([`CallOutcome`], [`NotRun`]), never a panic.
//! No step reads a tool's arguments by name: tools say what they touch, what an approval covers
//! and what else they do.

mod approval;
mod approve;
mod check;
mod held;
mod loop_guard;
mod outcome;
mod permit;
mod queue;
mod record;
mod run;
mod stream;

use std::sync::Arc;
use std::time::Duration;

use crate::guard::Guard;
use crate::hooks::Hooks;
use crate::tools::ToolRegistry;
use crate::workspace::Workspace;

pub use approval::{call_hash, hash, preview, COMMAND_GRANT};
pub use approve::Approved;
pub use check::{Checked, CheckedCall};
pub use loop_guard::{LoopGuard, Repetition, REMINDER};
pub use outcome::{CallFailure, CallOutcome, NotRun};
pub use permit::{Always, Grant, Permit};
pub use queue::{status_word, Answer, AnswerError, ApprovalQueue};
pub use record::{audit_rows, CallEvent, Problem, Recorder, Unrecorded};
pub use run::{Finished, Schedule, Slot};
pub use stream::{
    too_many_pending, too_many_questions, CallStream, Desk, Question, Refusal, Settled, Waiting, CALL_QUESTIONS,
    PENDING_QUESTIONS,
};

/// What every call of a session goes through; cheap to clone. Rebuilt when the mode (and with
/// it the shell sandbox) or the offered tools change; the [`Permit`] is shared across.
#[derive(Clone)]
pub struct Calls {
    registry: Arc<ToolRegistry>,
    guard: Arc<Guard>,
    workspace: Arc<Workspace>,
    hooks: Arc<Hooks>,
    permit: Arc<Permit>,
    timeout: Duration,
}

impl Calls {
    /// Calls of `registry`'s tools in `workspace`, judged by `guard` under `permit`, with a
    /// default per-call `timeout` (a tool may ask for another, e.g. `bash`'s `timeout_secs`).
    pub fn new(
        registry: Arc<ToolRegistry>,
        guard: Arc<Guard>,
        workspace: Arc<Workspace>,
        permit: Arc<Permit>,
        timeout: Duration,
    ) -> Self {
        Self { registry, guard, workspace, hooks: Arc::new(Hooks::default()), permit, timeout }
    }

    /// The same, running the user's `hooks` around every call.
    pub fn with_hooks(self, hooks: Arc<Hooks>) -> Self {
        Self { hooks, ..self }
    }

    /// The same, offering `registry` instead (the session's MCP tools changed).
    pub fn with_registry(self, registry: Arc<ToolRegistry>) -> Self {
        Self { registry, ..self }
    }

    /// The workspace.
    pub fn workspace(&self) -> &Arc<Workspace> {
        &self.workspace
    }

    /// The registry.
    pub fn registry(&self) -> &Arc<ToolRegistry> {
        &self.registry
    }

    /// The permit: mode, rules in force, grants.
    pub fn permit(&self) -> &Arc<Permit> {
        &self.permit
    }

    /// Calls in `workspace` of the built-in tools, in `ask` mode with no rules (unit tests).
    #[cfg(test)]
    pub(crate) fn for_tests(workspace: Arc<Workspace>) -> Self {
        #[allow(clippy::unwrap_used)]
        let registry = Arc::new(crate::tools::builtin_registry().unwrap());
        let permit = Arc::new(Permit::new(bridle_protocol::Mode::Ask, crate::guard::Policy::empty()));
        let guard = Arc::new(Guard::new(bridle_protocol::Mode::Ask).with_sandbox(workspace.sandbox.clone()));
        Self::new(registry, guard, workspace, permit, Duration::from_secs(60))
    }
}
