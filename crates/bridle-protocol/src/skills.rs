//! Skills and slash commands as the front ends show them (DESIGN §13.1): a skill found, with
//! where it came from, whether it is trusted and what is wrong with it; a command a user may
//! type.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// One skill found, as `bridle skills list` and the Settings view show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SkillInfo {
    /// Its name (the folder's, when its `SKILL.md` could not be read as a skill).
    pub name: String,
    /// Its catalog line (empty when malformed).
    pub description: String,
    /// `workspace`, `user` or `config`.
    pub source: String,
    /// Its `SKILL.md`.
    pub path: String,
    /// Whether it is offered (the user's own, or a workspace's trusted as it is now).
    pub trusted: bool,
    /// Why it is never loaded (malformed, a duplicate name, unreadable); `null` when it is fine.
    pub error: Option<String>,
    /// Whether the user may run it as `/name`.
    pub user_invocable: bool,
    /// Whether the model may load it on its own.
    pub model_invocable: bool,
}

/// A slash command a user may type (`/name args`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SlashCommandInfo {
    /// Its name, without the slash.
    pub name: String,
    /// What it does.
    pub description: String,
    /// What its argument is, when it takes one (`MODE`).
    pub hint: Option<String>,
    /// Whether it runs a skill (else it is built in).
    pub skill: bool,
}
