//! `bridle skills list [--json]` and `bridle skills trust`: the skills found for the workspace
//! (name, source, trusted, error), and the user's word that the workspace's may be offered.

use clap::{Args, Subcommand};

use crate::cli::Global;
use crate::setup;
use crate::terminal::safe;

/// `bridle skills`.
#[derive(Args, Debug)]
pub struct SkillsArgs {
    #[command(subcommand)]
    pub action: SkillsAction,
}

#[derive(Subcommand, Debug)]
pub enum SkillsAction {
    /// Every skill found, in the order looked in, with its source, trust and error.
    List {
        /// Print {"skills": [{"name","description","source","path","trusted","error",...}]}.
        #[arg(long)]
        json: bool,
    },
    /// Trust the workspace's skills as their SKILL.md files are now (a file changed later is
    /// not offered until trusted again).
    Trust,
}

pub fn skills(global: &Global, args: &SkillsArgs) -> anyhow::Result<u8> {
    let setup = setup::load(global)?;
    let places = setup.engine_config().skill_places();
    let store = setup.store()?;
    match &args.action {
        SkillsAction::List { json } => {
            let found = bridle_core::skills::discover(&places, Some(&store));
            let infos: Vec<_> = found.iter().map(|s| s.info()).collect();
            if *json {
                println!("{}", serde_json::json!({ "skills": infos }));
                return Ok(0);
            }
            if infos.is_empty() {
                eprintln!("no skills found (.agents/skills/NAME/SKILL.md in the workspace or ~/.agents/skills/)");
            }
            for s in &infos {
                let trust = if s.trusted { "trusted" } else { "not trusted" };
                println!("{}  {}  {}  {}", safe(&s.name), s.source, trust, safe(&s.path));
                match &s.error {
                    Some(error) => println!("    error: {}", safe(error)),
                    None => println!("    {}", safe(&s.description)),
                }
            }
            Ok(0)
        }
        SkillsAction::Trust => {
            let now = bridle_core::clock::Clock::now_ms(&bridle_core::clock::SystemClock);
            let trusted = bridle_core::skills::trust_workspace(&places, &store, now)?;
            if trusted.is_empty() {
                println!("no workspace skills to trust in {}", safe(&places.workspace.display().to_string()));
            } else {
                println!("trusted {} workspace skill(s): {}", trusted.len(), safe(&trusted.join(", ")));
            }
            Ok(0)
        }
    }
}
