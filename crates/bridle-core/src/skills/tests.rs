#![allow(clippy::unwrap_used)]
use std::path::Path;

use super::*;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn skill_md(name: &str, description: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n---\nDo the {name} thing.\n")
}

struct World {
    _tmp: tempfile::TempDir,
    places: Places,
}

fn world() -> World {
    let tmp = tempfile::tempdir().unwrap();
    let workspace = tmp.path().join("ws");
    let home = tmp.path().join("home");
    write(&workspace.join(".agents/skills/alpha/SKILL.md"), &skill_md("alpha", "Alpha things."));
    write(&workspace.join(".agents/skills/alpha/scripts/run.sh"), "echo alpha\n");
    write(&workspace.join(".claude/skills/beta/SKILL.md"), &skill_md("beta", "Beta things."));
    write(&workspace.join(".agents/skills/broken/SKILL.md"), "---\nname: broken\n---\n");
    write(&workspace.join(".agents/skills/notes/README.md"), "not a skill folder");
    write(&home.join(".agents/skills/mine/SKILL.md"), &skill_md("mine", "The user's own."));
    write(&home.join(".config/bridle/skills/alpha/SKILL.md"), &skill_md("alpha", "A second alpha."));
    std::os::unix::fs::symlink(home.join(".agents/skills/mine"), workspace.join(".agents/skills/linked")).unwrap();
    let places = Places { workspace, home: Some(home), paths: Vec::new() };
    World { _tmp: tmp, places }
}

fn by_name<'a>(skills: &'a [Skill], name: &str) -> Vec<&'a Skill> {
    skills.iter().filter(|s| s.name() == name).collect()
}

#[test]
fn finds_every_folder_reports_the_broken_and_trusts_only_the_users() {
    let w = world();
    let skills = discover(&w.places, None);
    let names: Vec<_> = skills.iter().map(|s| (s.name(), s.source.as_str())).collect();
    assert_eq!(
        names,
        vec![
            ("alpha", "workspace"),
            ("broken", "workspace"),
            ("linked", "workspace"),
            ("beta", "workspace"),
            ("mine", "user"),
            ("alpha", "user"),
        ]
    );
    assert!(by_name(&skills, "broken")[0].parsed.as_ref().unwrap_err().contains("no `description`"));
    assert!(by_name(&skills, "linked")[0].parsed.as_ref().unwrap_err().contains("symbolic link"));
    let alphas = by_name(&skills, "alpha");
    assert!(alphas[0].parsed.is_ok());
    assert!(alphas[1].parsed.as_ref().unwrap_err().contains("duplicate"));
    let offered: Vec<_> = skills.iter().filter_map(Skill::offered).map(|p| p.name.as_str()).collect();
    assert_eq!(offered, vec!["mine"]);
}

#[test]
fn trust_holds_for_the_file_as_it_was_trusted() {
    let w = world();
    let store = crate::store::Store::open_in_memory().unwrap();
    let trusted = trust_workspace(&w.places, &store, 1).unwrap();
    assert_eq!(trusted, vec!["alpha".to_string(), "beta".to_string()]);
    let offered = |skills: &[Skill]| -> Vec<String> {
        skills.iter().filter_map(Skill::offered).map(|p| p.name.clone()).collect()
    };
    assert_eq!(offered(&discover(&w.places, Some(&store))), vec!["alpha", "beta", "mine"]);
    write(&w.places.workspace.join(".claude/skills/beta/SKILL.md"), &skill_md("beta", "Beta, edited."));
    assert_eq!(offered(&discover(&w.places, Some(&store))), vec!["alpha", "mine"]);
}

#[test]
fn a_load_reads_the_body_lists_resources_and_refuses_a_changed_file() {
    let w = world();
    let store = crate::store::Store::open_in_memory().unwrap();
    trust_workspace(&w.places, &store, 1).unwrap();
    let skills = discover(&w.places, Some(&store));
    let clock = std::sync::Arc::new(crate::clock::FixedClock(5));
    let session = SessionSkills::new(skills, &w.places.workspace, "s1", crate::audit::AuditSink::disabled(), clock);
    let loaded = session.load("alpha", "t1", Some("c1")).unwrap();
    assert_eq!(loaded.body, "Do the alpha thing.");
    assert_eq!(loaded.resources, vec![".agents/skills/alpha/scripts/run.sh".to_string()]);
    assert!(session.load("broken", "t1", Some("c2")).unwrap_err().contains("malformed"));
    write(&w.places.workspace.join(".claude/skills/beta/SKILL.md"), &skill_md("beta", "Changed."));
    assert!(session.load("beta", "t1", Some("c3")).unwrap_err().contains("changed since"));
    assert_eq!(session.loaded().iter().map(|l| l.name.as_str()).collect::<Vec<_>>(), vec!["alpha"]);
}

#[test]
fn commands_are_builtins_or_user_invocable_skills() {
    let w = world();
    let skills = discover(&w.places, None);
    assert_eq!(parse_command("/compact", &skills), Some(SlashCommand::Compact));
    assert_eq!(parse_command("  /mode plan ", &skills), Some(SlashCommand::Mode("plan".into())));
    assert_eq!(
        parse_command("/mine fix the bug", &skills),
        Some(SlashCommand::Skill { name: "mine".into(), args: "fix the bug".into() })
    );
    // Not trusted yet, so not a command; nor is a path.
    assert_eq!(parse_command("/alpha go", &skills), None);
    assert_eq!(parse_command("/etc/hosts looks odd", &skills), None);
    let names: Vec<_> = available_commands(&skills).into_iter().map(|c| c.name).collect();
    assert_eq!(names, vec!["compact", "undo", "mode", "model", "skills", "help", "mine"]);
}

#[test]
fn the_catalog_lists_names_and_descriptions_within_its_budget() {
    let w = world();
    let skills = discover(&w.places, None);
    let text = catalog(&skills, CATALOG_BUDGET).unwrap();
    assert!(text.contains("- mine: The user's own."));
    assert!(!text.contains("Do the mine thing"));
    assert!(!text.contains("alpha"));
    let small = catalog(&skills, 10).unwrap();
    assert!(small.contains("1 more skills are not listed"));
}
