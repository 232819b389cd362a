//! The built-in slash commands (DESIGN §13.1) a user types where a message goes: `/compact`,
//! `/undo`, `/mode M`, `/model M`, `/skills`, `/help`. Each does what its op or its view does and
//! ends with one `CommandDone` saying what happened; none starts a turn. A skill's `/name` is a
//! message (the turn loads the skill), and so is anything that is not a command.
//!
//! Rule: a command that would change the session while a turn runs is refused, saying why;
//! nothing is queued behind the turn's back.

use bridle_protocol::{Event, Mode};

use super::session::Session;
use crate::skills::{parse_command, SlashCommand};

/// Runs `text` when it is a built-in command (`None`: done); any other text comes back, to be
/// sent as a message.
pub(super) async fn builtin(session: &Session, text: String, turn_running: bool) -> Option<String> {
    let command = match parse_command(&text, session.skills.skills()) {
        None | Some(SlashCommand::Skill { .. }) => return Some(text),
        Some(command) => command,
    };
    let changes_session = matches!(command, SlashCommand::Compact | SlashCommand::Undo | SlashCommand::Mode(_));
    let (ok, output) = if turn_running && changes_session {
        (false, "a turn is running; run this when it has ended (or interrupt it first)".to_string())
    } else {
        run(session, command).await
    };
    let event = Event::CommandDone { session_id: session.id.clone(), command: text.trim().to_string(), output, ok };
    session.emit(event).await;
    None
}

async fn run(session: &Session, command: SlashCommand) -> (bool, String) {
    match command {
        SlashCommand::Compact => match session.compact(None, true).await {
            Some((before, after)) => (true, format!("Compacted: {before} -> {after} tokens.")),
            None => (false, "Nothing was compacted.".to_string()),
        },
        SlashCommand::Undo => {
            if session.undo(None, &[]).await {
                (true, "Undone: the last turn's file changes (what was put back is listed above).".to_string())
            } else {
                (false, "Nothing was undone (the error above says why).".to_string())
            }
        }
        SlashCommand::Mode(name) => match name.parse::<Mode>() {
            Ok(mode) => {
                session.set_mode(mode).await;
                let now = session.calls().permit().mode();
                (now == mode, format!("Mode: {}.", now.as_str()))
            }
            Err(_) => (
                false,
                format!("`{name}` is not a mode; use one of read-only, plan, ask, review, auto-edit, auto, bypass"),
            ),
        },
        SlashCommand::Model(name) => (
            false,
            format!(
                "The model cannot be changed inside a running session (it is {}); start a new session with `{}` (Settings, or `bridle run --model {}`).",
                session.deps.provider.model(),
                if name.is_empty() { "another model" } else { &name },
                if name.is_empty() { "MODEL" } else { &name }
            ),
        ),
        SlashCommand::Skills => (true, skills_text(session)),
        SlashCommand::Help => {
            let lines: Vec<String> = crate::skills::available_commands(session.skills.skills())
                .into_iter()
                .map(|c| match c.hint {
                    Some(hint) => format!("/{} {hint}: {}", c.name, c.description),
                    None => format!("/{}: {}", c.name, c.description),
                })
                .collect();
            (true, lines.join("\n"))
        }
        // Never reached: `builtin` hands a skill's command back to go as a message.
        SlashCommand::Skill { .. } => (false, String::new()),
    }
}

fn skills_text(session: &Session) -> String {
    let skills = session.skills.skills();
    if skills.is_empty() {
        return "No skills found (.agents/skills/NAME/SKILL.md in the workspace, or ~/.agents/skills/).".into();
    }
    let lines: Vec<String> = skills
        .iter()
        .map(|s| {
            let info = s.info();
            let state = match (&info.error, info.trusted) {
                (Some(error), _) => format!("error: {error}"),
                (None, true) => "trusted".into(),
                (None, false) => "not trusted (`bridle skills trust`)".into(),
            };
            format!("{} ({}): {}", info.name, info.source, state)
        })
        .collect();
    lines.join("\n")
}
