//! `[agents]`: how many children a session may run at once, how deep they may nest, and the
//! roles a child may be given (DESIGN §16.1).
//!
//! Rule: a role only narrows. Its tools are a subset of what the parent offers, its mode is
//! never looser than the parent's, and its instructions come after Bridle's own. A role file in
//! the workspace (`.agents/roles/NAME.md`, parsed here, read by the engine's `roles`) is text the
//! agent could have written, so it can take power away from a child and never give any.

use std::collections::BTreeMap;

use bridle_protocol::Mode;
use serde::{Deserialize, Serialize};

/// `[agents]`.
///
/// ```toml
/// [agents]
/// max_children = 4
/// [agents.roles.reviewer]
/// description = "Reads the change and reports problems"
/// instructions = "Review only. Never edit."
/// tools = ["read_file", "grep_search", "glob_search", "list_files"]
/// mode = "read-only"
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AgentsConfig {
    /// Children a session may have working or waiting at once.
    pub max_children: usize,
    /// How deep children nest: 1 lets a session start children that cannot start their own.
    pub max_depth: u32,
    /// Named roles a `spawn_agent` call may give a child.
    pub roles: BTreeMap<String, Role>,
}

impl Default for AgentsConfig {
    fn default() -> Self {
        Self { max_children: 4, max_depth: 1, roles: BTreeMap::new() }
    }
}

/// A role: instructions and what a child given it may use.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Role {
    /// One line for the model choosing a role.
    pub description: Option<String>,
    /// Added to the child's instructions.
    pub instructions: String,
    /// The only tools the child is offered (of those its parent has); all of them when absent.
    pub tools: Option<Vec<String>>,
    /// The model the child talks to, instead of its parent's.
    pub model: Option<String>,
    /// A mode for the child; used only when it is stricter than the parent's.
    pub mode: Option<Mode>,
    /// `worktree`: the child works in a git worktree of its own, not in its parent's checkout.
    pub isolation: Option<Isolation>,
}

/// Where a child works.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Isolation {
    /// In a git worktree of its own.
    Worktree,
}

impl Role {
    /// A role file (`.agents/roles/NAME.md`): YAML front matter with the keys of
    /// `[agents.roles.NAME]` but `instructions`, then the instructions; a file with no front
    /// matter is instructions only.
    pub fn parse(text: &str) -> Result<Role, String> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let Some(rest) = text.strip_prefix("---\n").or_else(|| text.strip_prefix("---\r\n")) else {
            return Ok(Role { instructions: text.trim().to_string(), ..Role::default() });
        };
        let (yaml, body) = super::split_front_matter(rest).ok_or("the YAML front matter has no closing `---` line")?;
        let mut role: Role = if yaml.trim().is_empty() {
            Role::default()
        } else {
            serde_yaml_ng::from_str(yaml).map_err(|e| format!("the YAML front matter does not parse: {e}"))?
        };
        role.instructions = body.trim().to_string();
        Ok(role)
    }
}
