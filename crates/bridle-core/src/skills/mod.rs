//! Skills (DESIGN §13.1): folders holding a `SKILL.md` in the agentskills format, found in the
//! workspace (`.agents/skills/`, `.claude/skills/`), the user's own folders
//! (`~/.agents/skills/`, `~/.config/bridle/skills/`) and `[skills] paths`; the catalog the model
//! reads, the skills a session has loaded, and the slash commands a user types.
//!
//! Rules: a skill that is malformed, unreadable or a duplicate name (the first found wins) is
//! listed with its error and never loaded; the user's skills (and those of folders the config
//! names) are trusted, a workspace's only once the user trusted that very `SKILL.md` (its hash
//! is in the store): a changed file is not offered until trusted again; only trusted skills are
//! ever offered to the model or run as a command.

mod catalog;
mod commands;
mod folders;
mod parse;
mod session;

use std::path::PathBuf;

use bridle_protocol::SkillInfo;
use sha2::{Digest, Sha256};

pub use catalog::{catalog, CATALOG_BUDGET};
pub use commands::{available_commands, parse_command, SlashCommand, BUILTIN_COMMANDS};
pub use folders::SKILL_LIMIT;
pub use parse::{parse, Parsed};
pub use session::{Loaded, Narrowing, SessionSkills};

use crate::store::Store;

/// Where a skill was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The workspace's `.agents/skills/` or `.claude/skills/`: trusted only by the user's word.
    Workspace,
    /// The user's own folders.
    User,
    /// A folder `[skills] paths` names.
    Config,
}

impl Source {
    /// `workspace`, `user` or `config`.
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Workspace => "workspace",
            Source::User => "user",
            Source::Config => "config",
        }
    }
}

/// One skill found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    /// The folder it lies in.
    pub source: Source,
    /// Its folder.
    pub dir: PathBuf,
    /// Its `SKILL.md`.
    pub path: PathBuf,
    /// The SHA-256 of its `SKILL.md`, hex (empty when it could not be read).
    pub hash: String,
    /// Its front matter and body, or why it is not a skill.
    pub parsed: Result<Parsed, String>,
    /// The folder's name.
    pub folder: String,
    /// Whether it may be offered (see the module's rule).
    pub trusted: bool,
}

impl Skill {
    /// Its name (the folder's when it is malformed).
    pub fn name(&self) -> &str {
        self.parsed.as_ref().map(|p| p.name.as_str()).unwrap_or(&self.folder)
    }

    /// Its parsed form when it may be offered: well-formed and trusted.
    pub fn offered(&self) -> Option<&Parsed> {
        self.parsed.as_ref().ok().filter(|_| self.trusted)
    }

    /// How the front ends list it.
    pub fn info(&self) -> SkillInfo {
        let parsed = self.parsed.as_ref().ok();
        SkillInfo {
            name: self.name().to_string(),
            description: parsed.map(|p| p.description.clone()).unwrap_or_default(),
            source: self.source.as_str().to_string(),
            path: self.path.display().to_string(),
            trusted: self.trusted,
            error: self.parsed.as_ref().err().cloned(),
            user_invocable: parsed.is_some_and(|p| p.user_invocable),
            model_invocable: parsed.is_some_and(|p| p.model_invocable),
        }
    }
}

/// Where to look: the workspace, the user's home, the config's folders.
#[derive(Debug, Clone, Default)]
pub struct Places {
    /// The workspace root.
    pub workspace: PathBuf,
    /// The user's home folder, when known.
    pub home: Option<PathBuf>,
    /// `[skills] paths` (`~/` expanded against `home`).
    pub paths: Vec<PathBuf>,
}

impl Places {
    /// The folders in the order they are looked in, each with its source.
    fn roots(&self) -> Vec<(folders::Root, Source)> {
        let mut roots = Vec::new();
        for rel in [".agents/skills", ".claude/skills"] {
            roots.push((folders::Root { base: self.workspace.clone(), rel: rel.into() }, Source::Workspace));
        }
        if let Some(home) = &self.home {
            for folder in [".agents/skills", ".config/bridle/skills"] {
                roots.push((folders::Root { base: home.join(folder), rel: PathBuf::new() }, Source::User));
            }
        }
        for path in &self.paths {
            let path = match (path.strip_prefix("~"), &self.home) {
                (Ok(rest), Some(home)) => home.join(rest),
                _ => path.clone(),
            };
            roots.push((folders::Root { base: path, rel: PathBuf::new() }, Source::Config));
        }
        roots
    }
}

/// The hash [`Skill::hash`] holds: SHA-256 of the bytes, hex.
pub fn hash(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// Every skill in `places`, in the order found, trusted as `store` records (none of the
/// workspace's without a store); duplicates and malformed ones carry their error.
pub fn discover(places: &Places, store: Option<&Store>) -> Vec<Skill> {
    let workspace = places.workspace.display().to_string();
    let trusted = store.and_then(|s| s.trusted_skills(&workspace).ok()).unwrap_or_default();
    let mut skills: Vec<Skill> = Vec::new();
    for (root, source) in places.roots() {
        for read in root.read() {
            let hash = read.bytes.as_ref().map(|b| hash(b)).unwrap_or_default();
            let parsed = read.bytes.and_then(|bytes| {
                String::from_utf8(bytes).map_err(|_| "SKILL.md is not UTF-8 text".to_string()).and_then(|t| parse(&t))
            });
            let parsed = match parsed {
                Ok(p) => match skills.iter().find(|s| s.parsed.as_ref().is_ok_and(|q| q.name == p.name)) {
                    Some(first) => Err(format!(
                        "duplicate: a skill named `{}` was found first at {}; the first found wins",
                        p.name,
                        first.path.display()
                    )),
                    None => Ok(p),
                },
                Err(e) => Err(e),
            };
            let key = read.path.display().to_string();
            let trusted = match source {
                Source::User | Source::Config => true,
                Source::Workspace => trusted.get(&key).is_some_and(|h| *h == hash),
            };
            skills.push(Skill { source, dir: read.dir, path: read.path, hash, parsed, folder: read.folder, trusted });
        }
    }
    skills
}

/// Trusts every well-formed workspace skill of `places` as its `SKILL.md` is now; the skills
/// trusted, by name.
pub fn trust_workspace(places: &Places, store: &Store, now_ms: i64) -> Result<Vec<String>, crate::store::StoreError> {
    let workspace = places.workspace.display().to_string();
    let mut names = Vec::new();
    for skill in discover(places, Some(store)) {
        if skill.source == Source::Workspace && skill.parsed.is_ok() {
            store.trust_skill(&workspace, &skill.path.display().to_string(), &skill.hash, now_ms)?;
            names.push(skill.name().to_string());
        }
    }
    Ok(names)
}

#[cfg(test)]
mod tests;
