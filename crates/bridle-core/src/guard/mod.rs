//! The guard: every tool call is judged before it runs.
//!
//! This version holds the decision's final shape — a decision, its source and the findings
//! behind it — and applies the one column of the mode table that needs no human: `read-only`
//! denies every tool that is not a read. Every other call is allowed by the mode; `ask`, user
//! rules and the guardians (path, shell rules, shell evasion, exec-config) arrive with the
//! approval queue. (The sandbox's refusals are judged before the guard, in the pipeline.)

use bridle_protocol::{Decision, DecisionSource, Finding, Mode};

use crate::tools::{PreparedCall, ToolKind};

/// The guard's answer for one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// Allow, ask or deny.
    pub decision: Decision,
    /// What decided.
    pub source: DecisionSource,
    /// What the guardians found.
    pub findings: Vec<Finding>,
}

impl Verdict {
    /// An allow decided by the mode, with no findings.
    pub fn allow_by_mode() -> Self {
        Self { decision: Decision::Allow, source: DecisionSource::Mode, findings: Vec::new() }
    }
}

/// Judges calls for one session.
#[derive(Debug, Clone)]
pub struct Guard {
    mode: Mode,
}

impl Guard {
    /// A guard for `mode`.
    pub fn new(mode: Mode) -> Self {
        Self { mode }
    }

    /// The session's mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Judges one prepared call.
    pub fn judge(&self, call: &PreparedCall) -> Verdict {
        if self.mode == Mode::ReadOnly && call.kind != ToolKind::Read {
            return Verdict { decision: Decision::Deny, source: DecisionSource::Mode, findings: Vec::new() };
        }
        Verdict::allow_by_mode()
    }
}
