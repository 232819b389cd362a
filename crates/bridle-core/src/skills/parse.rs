//! A `SKILL.md` read as the agentskills format: YAML front matter between `---` lines (`name`,
//! `description`, optional `allowed-tools`, `disable-model-invocation`, `user-invocable`,
//! `metadata`, and the fields other clients add), then the body.
//!
//! Rule: a file that breaks the format is an error naming what is wrong, never a half-read
//! skill; fields Bridle does not use are allowed (other agents add their own), fields it does
//! use are checked by type and by the spec's limits.

use std::collections::BTreeMap;

use serde::Deserialize;

/// The longest `name` the spec allows.
const NAME_MAX: usize = 64;
/// The longest `description` the spec allows.
const DESCRIPTION_MAX: usize = 1024;

/// What a `SKILL.md` says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parsed {
    /// Its name (lower-case letters, digits and hyphens).
    pub name: String,
    /// What it does and when to use it: the catalog line.
    pub description: String,
    /// The tools it may call while active, when it narrows them (Bridle's names).
    pub allowed_tools: Option<Vec<String>>,
    /// Whether the model may load it on its own (`disable-model-invocation` not set).
    pub model_invocable: bool,
    /// Whether the user may run it as `/name` (`user-invocable`, default yes).
    pub user_invocable: bool,
    /// The author's `metadata` map, as text.
    pub metadata: BTreeMap<String, String>,
    /// The instructions after the front matter.
    pub body: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "kebab-case")]
struct FrontMatter {
    name: Option<String>,
    description: Option<String>,
    #[serde(default)]
    allowed_tools: Option<AllowedTools>,
    #[serde(default)]
    disable_model_invocation: bool,
    #[serde(default)]
    user_invocable: Option<bool>,
    #[serde(default)]
    metadata: BTreeMap<String, serde_yaml_ng::Value>,
}

/// `allowed-tools`: a space- or comma-separated string (the spec's form) or a list.
#[derive(Deserialize)]
#[serde(untagged)]
enum AllowedTools {
    Line(String),
    List(Vec<String>),
}

/// `text` as a skill, or why it is not one.
pub fn parse(text: &str) -> Result<Parsed, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
        .ok_or("SKILL.md does not start with a `---` line of YAML front matter")?;
    let (yaml, body) =
        crate::config::split_front_matter(rest).ok_or("the YAML front matter has no closing `---` line")?;
    let front: FrontMatter =
        serde_yaml_ng::from_str(yaml).map_err(|e| format!("the YAML front matter does not parse: {e}"))?;
    let name = front.name.map(|n| n.trim().to_string()).ok_or("the front matter has no `name`")?;
    check_name(&name)?;
    let description = front
        .description
        .map(|d| d.trim().to_string())
        .filter(|d| !d.is_empty())
        .ok_or("the front matter has no `description`")?;
    if description.chars().count() > DESCRIPTION_MAX {
        return Err(format!("`description` is longer than {DESCRIPTION_MAX} characters"));
    }
    let allowed_tools = front.allowed_tools.map(|tools| {
        let entries = match tools {
            AllowedTools::Line(line) => line.split([' ', ',']).map(str::to_string).collect(),
            AllowedTools::List(list) => list,
        };
        entries.iter().filter(|e| !e.trim().is_empty()).map(|e| bridle_tool_name(e.trim())).collect()
    });
    let metadata = front
        .metadata
        .into_iter()
        .map(|(k, v)| {
            let shown = match v {
                serde_yaml_ng::Value::String(s) => s,
                other => serde_yaml_ng::to_string(&other).unwrap_or_default().trim_end().to_string(),
            };
            (k, shown)
        })
        .collect();
    Ok(Parsed {
        name,
        description,
        allowed_tools,
        model_invocable: !front.disable_model_invocation,
        user_invocable: front.user_invocable.unwrap_or(true),
        metadata,
        body: body.trim().to_string(),
    })
}

/// The spec's rule for names: 1-64 of `a-z`, `0-9` and `-`, not starting or ending with `-`,
/// no `--`.
fn check_name(name: &str) -> Result<(), String> {
    let valid = !name.is_empty()
        && name.len() <= NAME_MAX
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--");
    if valid {
        Ok(())
    } else {
        Err(format!("`name: {name}` is not a skill name (1-{NAME_MAX} lower-case letters, digits and single hyphens)"))
    }
}

/// An `allowed-tools` entry as the Bridle tool it names: `Bash(git:*)` is `bash` (the pattern is
/// not a narrower grant: the guard judges every call as always), Claude Code's names map to
/// Bridle's, anything else is kept as written.
fn bridle_tool_name(entry: &str) -> String {
    let name = entry.split('(').next().unwrap_or(entry).trim();
    match name {
        "Bash" => "bash",
        "Read" => "read_file",
        "Write" => "write_file",
        "Edit" | "MultiEdit" => "edit_file",
        "Grep" => "grep_search",
        "Glob" => "glob_search",
        "LS" => "list_files",
        "TodoWrite" => "update_plan",
        "Skill" => "skill",
        other => other,
    }
    .to_string()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn reads_the_front_matter_and_the_body() {
        let parsed = parse(
            "---\nname: pdf-tools\ndescription: Fill PDF forms.\nallowed-tools: Bash(python:*) Read\nmetadata:\n  version: 2\n---\n# Steps\nRun it.\n",
        )
        .unwrap();
        assert_eq!(parsed.name, "pdf-tools");
        assert_eq!(parsed.description, "Fill PDF forms.");
        assert_eq!(parsed.allowed_tools, Some(vec!["bash".to_string(), "read_file".to_string()]));
        assert!(parsed.model_invocable && parsed.user_invocable);
        assert_eq!(parsed.metadata.get("version").map(String::as_str), Some("2"));
        assert_eq!(parsed.body, "# Steps\nRun it.");
    }

    #[test]
    fn says_what_is_wrong() {
        assert!(parse("no front matter").unwrap_err().contains("does not start"));
        assert!(parse("---\nname: x\n").unwrap_err().contains("no closing"));
        assert!(parse("---\nname: [x\n---\n").unwrap_err().contains("does not parse"));
        assert!(parse("---\nname: Bad_Name\ndescription: d\n---\n").unwrap_err().contains("not a skill name"));
        assert!(parse("---\nname: ok\n---\n").unwrap_err().contains("no `description`"));
        let flags =
            parse("---\nname: ok\ndescription: d\ndisable-model-invocation: true\nuser-invocable: false\n---\n")
                .unwrap();
        assert!(!flags.model_invocable && !flags.user_invocable);
    }
}
