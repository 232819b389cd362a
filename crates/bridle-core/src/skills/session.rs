//! The skills of one session: those found when it opened, those it has loaded (kept so a
//! compaction cannot take a loaded skill away), and the one narrowing the tools now.
//!
//! Rules: a skill is loaded only when it is offered (well-formed and trusted) and its `SKILL.md`
//! still has the hash it was found (and trusted) with — a file changed since is refused, never
//! read in; every load is an audit row of kind `skill` (name, source folder, hash); a skill with
//! `allowed-tools` narrows the calls of the turn that loaded it, from its load to the turn's end
//! (the engine refuses the others), and never widens what the mode allows.

use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use bridle_protocol::{HistoryItem, SkillLoad, ToolDetails};
use serde_json::json;

use super::{folders, Skill, Source};
use crate::audit::{AuditKind, AuditRecord, AuditSink};
use crate::clock::Clock;

/// A skill a session loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loaded {
    /// Its name.
    pub name: String,
    /// Where it was found.
    pub source: Source,
    /// Its `SKILL.md`.
    pub path: String,
    /// The hash of its `SKILL.md` as loaded.
    pub hash: String,
    /// Its instructions.
    pub body: String,
    /// Its other files (workspace-relative for a workspace skill, else absolute).
    pub resources: Vec<String>,
    /// The tools it narrows the model to while active.
    pub allowed_tools: Option<Vec<String>>,
}

impl Loaded {
    /// What the model reads when it loads the skill.
    pub fn text(&self) -> String {
        let mut text = format!("# Skill: {}\n\n{}\n", self.name, self.body);
        let folder = Path::new(&self.path).parent().map(|p| p.display().to_string()).unwrap_or_default();
        text.push_str(&format!("\nThe skill's folder: {folder}\n"));
        if self.resources.is_empty() {
            text.push_str("It has no other files.\n");
        } else {
            text.push_str("Its files (read them with `read_file`, run its scripts with `bash`):\n");
            for resource in &self.resources {
                text.push_str(&format!("- {resource}\n"));
            }
        }
        if let Some(tools) = &self.allowed_tools {
            text.push_str(&format!(
                "\nWhile this skill is active (to the end of this turn) only these tools may be called: {}.\n",
                tools.join(", ")
            ));
        }
        text
    }

    /// The typed details of its load.
    pub fn details(&self) -> ToolDetails {
        ToolDetails::Skill(Box::new(SkillLoad {
            name: self.name.clone(),
            source: self.source.as_str().to_string(),
            path: self.path.clone(),
            hash: self.hash.clone(),
            resources: self.resources.clone(),
            allowed_tools: self.allowed_tools.clone(),
        }))
    }
}

/// The tools a loaded skill narrows a turn to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Narrowing {
    /// The turn.
    pub turn_id: String,
    /// The skill.
    pub skill: String,
    /// The tools it allows (the `skill` tool is always allowed too).
    pub tools: Vec<String>,
}

impl Narrowing {
    /// The tools offered while it holds: those it allows, and `skill` (loading another skill
    /// is how a skill hands on).
    pub fn allowed(&self) -> Vec<String> {
        let mut tools = self.tools.clone();
        if !tools.iter().any(|t| t == "skill") {
            tools.push("skill".into());
        }
        tools
    }

    /// Why the tools are fewer, as a refused call says it.
    pub fn why(&self) -> String {
        format!("while the skill `{}` is active in this turn, only these tools may be called", self.skill)
    }
}

/// One session's skills.
pub struct SessionSkills {
    skills: Vec<Skill>,
    workspace: std::path::PathBuf,
    session_id: String,
    audit: AuditSink,
    clock: Arc<dyn Clock>,
    loaded: Mutex<Vec<Loaded>>,
    narrowing: Mutex<Option<Narrowing>>,
}

impl std::fmt::Debug for SessionSkills {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionSkills").field("skills", &self.skills.len()).finish_non_exhaustive()
    }
}

impl SessionSkills {
    /// `skills` (as found when the session opened) for the session `session_id` of `workspace`.
    pub fn new(
        skills: Vec<Skill>,
        workspace: &Path,
        session_id: &str,
        audit: AuditSink,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Self {
            skills,
            workspace: workspace.to_path_buf(),
            session_id: session_id.to_string(),
            audit,
            clock,
            loaded: Mutex::default(),
            narrowing: Mutex::default(),
        }
    }

    /// Whether the model has any skill to load (the `skill` tool is offered only then).
    pub fn offers_model_skills(&self) -> bool {
        self.skills.iter().filter_map(Skill::offered).any(|p| p.model_invocable)
    }

    /// Every skill found, offered or not.
    pub fn skills(&self) -> &[Skill] {
        &self.skills
    }

    /// Loads the skill `name` for `turn_id` (by the model's call `call_id`, or by the user when
    /// `None`): checks it may be, reads it again, records the load; or says why not.
    pub fn load(&self, name: &str, turn_id: &str, call_id: Option<&str>) -> Result<Loaded, String> {
        let Some(skill) = self.skills.iter().find(|s| s.name() == name) else {
            let offered: Vec<_> = self.skills.iter().filter_map(Skill::offered).map(|p| p.name.as_str()).collect();
            return Err(format!("there is no skill named `{name}`; the skills offered are: {}", offered.join(", ")));
        };
        let parsed = match (&skill.parsed, skill.trusted) {
            (Err(e), _) => return Err(format!("the skill `{name}` is malformed and never loaded: {e}")),
            (Ok(_), false) => {
                return Err(format!(
                    "the skill `{name}` is the workspace's and not trusted; the user trusts it with `bridle skills trust` (or in Settings)"
                ))
            }
            (Ok(parsed), true) => parsed,
        };
        if call_id.is_some() && !parsed.model_invocable {
            return Err(format!(
                "the skill `{name}` is for the user to run (`/{name}`); it cannot be loaded by the model"
            ));
        }
        // Read again: what is loaded is what was trusted, or nothing.
        let bytes = crate::fs::read_named(&skill.path, folders::SKILL_LIMIT).map_err(|e| e.to_string())?;
        if super::hash(&bytes) != skill.hash {
            return Err(format!(
                "the skill `{name}`'s SKILL.md changed since this session found it; it is not loaded until it is trusted again (`bridle skills trust`)"
            ));
        }
        let resources = folders::resources(&skill.dir)
            .into_iter()
            .map(|r| {
                let full = skill.dir.join(&r);
                match skill.source {
                    Source::Workspace => full.strip_prefix(&self.workspace).unwrap_or(&full).display().to_string(),
                    Source::User | Source::Config => full.display().to_string(),
                }
            })
            .collect();
        let loaded = Loaded {
            name: parsed.name.clone(),
            source: skill.source,
            path: skill.path.display().to_string(),
            hash: skill.hash.clone(),
            body: parsed.body.clone(),
            resources,
            allowed_tools: parsed.allowed_tools.clone(),
        };
        self.record(&loaded, skill, turn_id, call_id);
        self.keep(loaded.clone());
        if let Some(tools) = &loaded.allowed_tools {
            *self.narrowing.lock().unwrap_or_else(PoisonError::into_inner) =
                Some(Narrowing { turn_id: turn_id.to_string(), skill: loaded.name.clone(), tools: tools.clone() });
        }
        Ok(loaded)
    }

    fn record(&self, loaded: &Loaded, skill: &Skill, turn_id: &str, call_id: Option<&str>) {
        let mut row = AuditRecord::new(AuditKind::Skill, self.clock.now_ms())
            .session(self.session_id.clone())
            .status(if call_id.is_some() { "model" } else { "user" })
            .payload(json!({
                "name": loaded.name,
                "source": loaded.source.as_str(),
                "folder": skill.dir.display().to_string(),
                "hash": loaded.hash,
            }));
        if !turn_id.is_empty() {
            row = row.turn(turn_id);
        }
        if let Some(call_id) = call_id {
            row = row.call(call_id).tool("skill");
        }
        self.audit.record(row);
    }

    fn keep(&self, loaded: Loaded) {
        let mut all = self.loaded.lock().unwrap_or_else(PoisonError::into_inner);
        all.retain(|l| l.name != loaded.name);
        all.push(loaded);
    }

    /// The skills loaded so far, in load order.
    pub fn loaded(&self) -> Vec<Loaded> {
        self.loaded.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// A resumed session's loaded skills, from the loads its history holds (each read again and
    /// kept only when its file is unchanged); recorded nowhere, since they were.
    pub fn restore(&self, history: &[HistoryItem]) {
        for item in history {
            let HistoryItem::ToolResult { result } = item else { continue };
            let Some(ToolDetails::Skill(load)) = &result.details else { continue };
            let Some(skill) = self.skills.iter().find(|s| s.name() == load.name && s.hash == load.hash) else {
                continue;
            };
            let Some(parsed) = skill.offered() else { continue };
            self.keep(Loaded {
                name: parsed.name.clone(),
                source: skill.source,
                path: skill.path.display().to_string(),
                hash: skill.hash.clone(),
                body: parsed.body.clone(),
                resources: Vec::new(),
                allowed_tools: parsed.allowed_tools.clone(),
            });
        }
    }

    /// The narrowing in force for `turn_id`, if a skill it loaded set one.
    pub fn narrowing(&self, turn_id: &str) -> Option<Narrowing> {
        self.narrowing.lock().unwrap_or_else(PoisonError::into_inner).clone().filter(|n| n.turn_id == turn_id)
    }

    /// A turn ended (or a new one starts after one that failed): no skill narrows the next one.
    /// Answers whether one narrowed the tools until now.
    pub fn end_turn(&self) -> bool {
        self.narrowing.lock().unwrap_or_else(PoisonError::into_inner).take().is_some()
    }
}
