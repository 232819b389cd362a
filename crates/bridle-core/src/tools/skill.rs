//! `skill`: loads one skill of the catalog (DESIGN §13.1) — its instructions and the list of its
//! files — so the model reads a skill's body only when it uses it.
//!
//! Rules: only a skill the session offers (well-formed, trusted, model-invocable, its `SKILL.md`
//! unchanged since it was found) is loaded, by [`crate::skills::SessionSkills::load`], which
//! records the load (audit kind `skill`); the tool reads nothing else and runs nothing: the
//! skill's scripts run through `bash` like any command.

use async_trait::async_trait;
use bridle_protocol::ClientKind;
use serde::Deserialize;

use super::{Tool, ToolContext, ToolError, ToolKind, ToolOutput};

/// Loads a skill listed under "Skills" in your instructions: returns its instructions and the
/// list of its files (read them with `read_file`, run its scripts with `bash`). Load a skill when
/// the task matches its description, before you start.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SkillArgs {
    /// The skill's name, as the list gives it.
    pub name: String,
}

/// The `skill` tool.
pub struct LoadSkill;

#[async_trait]
impl Tool for LoadSkill {
    type Args = SkillArgs;
    const NAME: &'static str = "skill";
    const KIND: ToolKind = ToolKind::Read;
    const CLIENT_KIND: ClientKind = ClientKind::Read;

    fn title(args: &Self::Args) -> String {
        format!("Load the skill {}", super::quoted(&args.name))
    }

    async fn run(&self, args: &Self::Args, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let Some(skills) = ctx.session.as_ref().map(|s| &s.skills) else {
            return Err(ToolError::new("skills are loaded only in a session; there is none here"));
        };
        let loaded = skills.load(args.name.trim(), ctx.turn_id(), Some(&ctx.call_id)).map_err(ToolError::new)?;
        Ok(ToolOutput { output: loaded.text(), details: Some(loaded.details()), ..ToolOutput::default() })
    }
}
