//! What the desktop shell tells its window about the session it is attached to.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::Mode;

/// The open session, as the UI shows it in its header.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SessionSummary {
    /// Session id.
    pub session_id: String,
    /// The workspace folder.
    pub workspace: String,
    /// Approval mode.
    pub mode: Mode,
    /// The configured model, if a provider is set.
    pub model: Option<String>,
    /// The model's context window, when known.
    #[ts(type = "number | null")]
    pub context_window: Option<u64>,
    /// How `bash` runs: `bwrap`, `landlock` or `none`.
    pub sandbox: String,
    /// Why `bash` runs unconfined, when it does; when confined, what its sandbox does not hold
    /// (Landlock's gaps), if anything.
    pub unsandboxed_because: Option<String>,
    /// What of the home folder commands see, when the sandbox hides it (DESIGN §5.1).
    #[serde(default)]
    pub sandbox_home: Option<String>,
    /// What the model's tokens cost, when the config's `[pricing]` has it.
    #[serde(default)]
    pub price: Option<ModelPrice>,
    /// The project instruction files in the session's brief (`AGENTS.md`, `CLAUDE.md`).
    #[serde(default)]
    pub instructions: Vec<InstructionFileInfo>,
    /// The modes the managed policy allows (DESIGN §17); absent, every mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub allowed_modes: Option<Vec<Mode>>,
}

/// One instruction file the model was given, and what it costs in every request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct InstructionFileInfo {
    /// Where it was read.
    pub path: String,
    /// Its tokens.
    #[ts(type = "number")]
    pub tokens: u64,
}

/// A model's prices per million tokens, in the user's currency.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ModelPrice {
    /// ISO 4217 code.
    pub currency: String,
    /// Uncached input.
    pub input: f64,
    /// Cached input.
    pub cached_input: f64,
    /// Output.
    pub output: f64,
}
