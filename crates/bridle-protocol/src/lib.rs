//! Bridle's wire types, and nothing else.
//!
//! Everything that crosses a process or language boundary — the engine's ops and events, tool
//! calls and results, approval requests, audit rows — is defined here once, serialised with
//! serde in camelCase and exported to TypeScript with ts-rs into `ui/src/api/bindings/`.
//! The rule this crate keeps: no behaviour, no I/O, no dependency on the engine, so every
//! consumer (core, CLI, desktop shell, UI) agrees on one shape.
//!
//! ```
//! use bridle_protocol::{Event, AbortReason};
//! let event = Event::TurnAborted {
//!     session_id: "s1".into(),
//!     turn_id: "t1".into(),
//!     reason: AbortReason::MaxSteps,
//! };
//! let json = serde_json::to_string(&event).unwrap();
//! assert_eq!(json, r#"{"type":"turnAborted","sessionId":"s1","turnId":"t1","reason":"maxSteps"}"#);
//! ```
#![deny(missing_docs)]

mod agent;
mod app;
mod approval;
mod audit;
pub mod bindings;
mod details;
mod error;
mod event;
mod history;
pub mod ipc;
mod op;
mod process;
mod review;
mod settings;
mod skills;
mod tool;
mod usage;

pub use agent::{AgentInfo, AgentState};
pub use app::{InstructionFileInfo, ModelPrice, SessionSummary};
pub use approval::{
    ApprovalAnswer, ApprovalRequest, ApprovalSubject, Decision, DecisionSource, Finding, Mode, Severity,
};
pub use audit::{AuditEvent, AuditQuery};
pub use details::{
    BackgroundDetails, ChangeKind, ClientKind, GlobHits, GrepFile, GrepHits, GrepLine, HostUse, IgnoredOutput,
    LandedChange, Listing, RefusedPath, SandboxKind, ShellDetails, ShellEffects, SkillLoad, TextEncoding, ToolDetails,
};
pub use error::{ErrorCode, ErrorInfo};
pub use event::{AbortReason, Event, SequencedEvent, ToolStatus, UndoRefusal, WarningCode};
pub use history::{
    CheckpointChange, HistoryItem, PlanItem, PlanStatus, SessionInfo, SessionSnapshot, SessionState, SessionWorktree,
    SnapshotItem, TurnUsage, WaitingFor,
};
pub use op::Op;
pub use process::{ProcessInfo, ProcessState};
pub use review::{Hunk, HunkCall, HunkKind, HunkState, LineRange, ReviewDecision, TurnReview};
pub use settings::{
    LimitSettings, ManagedSetting, McpServerList, McpServerSettings, McpServerStatus, McpStatus, ModelInfo,
    NetworkMode, NetworkSettings, ProviderKindInfo, ProviderSettings, RuleList, RuleMeaning, RuleSettings, Settings,
    SettingsUpdate,
};
pub use skills::{SkillInfo, SlashCommandInfo};
pub use tool::{ToolCall, ToolDefinition, ToolResult};
pub use usage::TokenUsage;
