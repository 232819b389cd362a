//! `[agents]`: how many children a session may run at once, how deep they may nest, and the
//! roles a child may be given (DESIGN §16.1).
//!
//! Rule: a role only narrows. Its tools are a subset of what the parent offers, its mode is
//! never looser than the parent's, and its instructions come after Bridle's own; a role file in
//! the workspace (`.agents/roles/NAME.md`) is read like any file the agent could have written,
//! so it can take power away from a child and never give any.

use std::collections::BTreeMap;
use std::path::Path;

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

impl AgentsConfig {
    /// The roles a session in `workspace` may give: the config's, then each
    /// `.agents/roles/NAME.md` of the workspace whose name the config does not use (the user's
    /// own config wins). A role file that does not parse is skipped with its reason.
    pub fn roles_in(&self, workspace: &Path) -> (BTreeMap<String, Role>, Vec<String>) {
        use crate::fs::{Entry, WorkspaceFs};
        let mut roles = self.roles.clone();
        let mut problems = Vec::new();
        let folder = Path::new(".agents/roles");
        // Through the one door: beneath the workspace, regular files only, links not followed.
        let Ok(fs) = WorkspaceFs::open(workspace) else { return (roles, problems) };
        let Ok(Some(mut names)) = fs.names(folder) else { return (roles, problems) };
        names.sort();
        for file in names {
            let file = Path::new(&file);
            let (Some(name), Some("md")) =
                (file.file_stem().and_then(|s| s.to_str()), file.extension().and_then(|s| s.to_str()))
            else {
                continue;
            };
            if roles.contains_key(name) {
                continue;
            }
            let rel = folder.join(file);
            let read = match fs.entry(&rel) {
                Ok(Some(Entry::File { .. })) => match fs.read_at_most(&rel, ROLE_LIMIT) {
                    Ok(Some(bytes)) => String::from_utf8(bytes).map_err(|_| "it is not UTF-8 text".to_string()),
                    Ok(None) => Err("it is gone".to_string()),
                    Err(e) => Err(e.to_string()),
                },
                Ok(_) => Err("it is not a regular file (a link is not followed)".to_string()),
                Err(e) => Err(e.to_string()),
            };
            match read.and_then(|text| role_file(&text)) {
                Ok(role) => {
                    roles.insert(name.to_string(), role);
                }
                Err(why) => problems.push(format!("{}: {why}", workspace.join(&rel).display())),
            }
        }
        (roles, problems)
    }
}

/// The largest role file read.
const ROLE_LIMIT: u64 = 64 * 1024;

/// A role file: YAML front matter with the keys of `[agents.roles.NAME]` but `instructions`,
/// then the instructions.
fn role_file(text: &str) -> Result<Role, String> {
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_role_file_reads_its_front_matter_and_the_config_wins_a_name() {
        let dir = tempfile::tempdir().unwrap();
        let roles = dir.path().join(".agents/roles");
        std::fs::create_dir_all(&roles).unwrap();
        std::fs::write(
            roles.join("reader.md"),
            "---\ntools: [read_file, grep_search]\nmode: read-only\n---\nRead and summarise.\n",
        )
        .unwrap();
        std::fs::write(roles.join("mine.md"), "From the file.\n").unwrap();
        std::fs::write(roles.join("broken.md"), "---\ntools: 3: x\n---\n").unwrap();
        // A link is not followed, wherever it points.
        std::os::unix::fs::symlink("/etc/hostname", roles.join("linked.md")).unwrap();
        let config = AgentsConfig {
            roles: BTreeMap::from([(
                "mine".to_string(),
                Role { instructions: "From the config.".into(), ..Role::default() },
            )]),
            ..AgentsConfig::default()
        };
        let (found, problems) = config.roles_in(dir.path());
        let reader = &found["reader"];
        assert_eq!(reader.tools.as_deref(), Some(&["read_file".to_string(), "grep_search".to_string()][..]));
        assert_eq!(reader.mode, Some(Mode::ReadOnly));
        assert_eq!(reader.instructions, "Read and summarise.");
        assert_eq!(found["mine"].instructions, "From the config.");
        assert!(!found.contains_key("broken") && !found.contains_key("linked"));
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].contains("broken.md") && problems[1].contains("linked.md"), "{problems:?}");
    }
}
