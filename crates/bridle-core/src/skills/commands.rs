//! Slash commands (`/name args`), parsed once here for every front end: the built-ins and the
//! user-invocable skills.
//!
//! Rule: a line is a command only when its first word after `/` is a built-in or a skill that is
//! offered and user-invocable; anything else (`/etc/hosts is odd`) is an ordinary message.

use bridle_protocol::SlashCommandInfo;

use super::Skill;

/// A command a user typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SlashCommand {
    /// `/compact`: compact the conversation now.
    Compact,
    /// `/undo`: undo the last turn's file changes.
    Undo,
    /// `/mode M`: switch the approval mode.
    Mode(String),
    /// `/model M`: switch the model.
    Model(String),
    /// `/skills`: list the skills found.
    Skills,
    /// `/help`: list the commands.
    Help,
    /// `/name args`: run a skill with `args`.
    Skill {
        /// The skill's name.
        name: String,
        /// What follows the name.
        args: String,
    },
}

/// The built-ins: name, what it does, its argument.
pub const BUILTIN_COMMANDS: &[(&str, &str, Option<&str>)] = &[
    ("compact", "Compact the conversation now", None),
    ("undo", "Undo the last turn's file changes", None),
    ("mode", "Switch the approval mode", Some("read-only | plan | ask | review | auto-edit | auto | bypass")),
    ("model", "Switch the model for the next turns", Some("MODEL")),
    ("skills", "List the skills found, their source and trust", None),
    ("help", "List the commands", None),
];

/// `text` as a command, or `None` for an ordinary message.
pub fn parse_command(text: &str, skills: &[Skill]) -> Option<SlashCommand> {
    let rest = text.trim().strip_prefix('/')?;
    let (name, args) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    let args = args.trim().to_string();
    Some(match name {
        "compact" => SlashCommand::Compact,
        "undo" => SlashCommand::Undo,
        "mode" => SlashCommand::Mode(args),
        "model" => SlashCommand::Model(args),
        "skills" => SlashCommand::Skills,
        "help" => SlashCommand::Help,
        _ => {
            let skill = skills.iter().filter_map(Skill::offered).find(|p| p.user_invocable && p.name == name)?;
            SlashCommand::Skill { name: skill.name.clone(), args }
        }
    })
}

/// Every command a user may type now: the built-ins, then the offered user-invocable skills.
pub fn available_commands(skills: &[Skill]) -> Vec<SlashCommandInfo> {
    let builtins = BUILTIN_COMMANDS.iter().map(|(name, description, hint)| SlashCommandInfo {
        name: name.to_string(),
        description: description.to_string(),
        hint: hint.map(str::to_string),
        skill: false,
    });
    let skills = skills.iter().filter_map(Skill::offered).filter(|p| p.user_invocable).map(|p| SlashCommandInfo {
        name: p.name.clone(),
        description: p.description.clone(),
        hint: Some("ARGS".into()),
        skill: true,
    });
    builtins.chain(skills).collect()
}
