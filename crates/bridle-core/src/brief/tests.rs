#![allow(clippy::unwrap_used)]
use std::path::PathBuf;

use super::*;

fn environment(git: Git, sandbox: &str) -> Environment {
    Environment {
        os: "linux (x86_64)".into(),
        workspace: PathBuf::from("/home/dev/project"),
        date: "2026-11-24".into(),
        git,
        sandbox: sandbox.into(),
        network: false,
    }
}

fn file(path: &str, text: &str, truncated: bool) -> InstructionFile {
    InstructionFile { path: path.into(), text: text.into(), truncated, tokens: 0 }
}

#[test]
fn the_assembled_prompt() {
    let files = vec![
        file("/home/dev/.local/share/bridle/AGENTS.md", "Answer in British English.\n", false),
        file("/home/dev/project/AGENTS.md", "# Atlas\n\nRun `cargo test -p atlas` before saying done.\n", true),
    ];
    let git = Git::Repo { branch: "main".into(), changed: Some(3) };
    let brief = assemble(crate::brief::DEFAULT_SYSTEM_PROMPT, &environment(git, "bwrap"), files);
    insta::assert_snapshot!(brief.text);
}

#[test]
fn the_assembled_prompt_outside_git_unsandboxed_and_without_instructions() {
    let brief = assemble("Be brief.", &environment(Git::None, "none"), vec![]);
    insta::assert_snapshot!(brief.text);
}

#[test]
fn agents_md_wins_over_claude_md_and_the_user_comes_first() {
    let dir = tempfile::tempdir().unwrap();
    let (config, ws) = (dir.path().join("config"), dir.path().join("ws"));
    std::fs::create_dir_all(&config).unwrap();
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(config.join("CLAUDE.md"), "user rules").unwrap();
    std::fs::write(ws.join("AGENTS.md"), "project rules").unwrap();
    std::fs::write(ws.join("CLAUDE.md"), "ignored").unwrap();
    let files = load_instructions(Some(&config), &ws);
    let shown: Vec<_> = files.iter().map(|f| (f.path.clone(), f.text.clone())).collect();
    assert_eq!(
        shown,
        [
            (config.join("CLAUDE.md").display().to_string(), "user rules".to_string()),
            (ws.join("AGENTS.md").display().to_string(), "project rules".to_string())
        ]
    );
    assert!(files.iter().all(|f| f.tokens > 0));
    // The config folder being the workspace reads it once.
    assert_eq!(load_instructions(Some(&ws), &ws).len(), 1);
}

#[test]
fn a_long_file_is_cut_at_a_character_and_odd_files_are_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    std::fs::write(ws.join("AGENTS.md"), "é".repeat(INSTRUCTION_LIMIT)).unwrap();
    let files = load_instructions(None, ws);
    assert!(files[0].truncated);
    assert!(files[0].text.len() <= INSTRUCTION_LIMIT && files[0].text.chars().all(|c| c == 'é'));
    let brief = assemble("x", &environment(Git::None, "bwrap"), files);
    assert!(brief.text.contains("[cut here: the file is longer than 32768 bytes]"));

    // A link to a secret elsewhere is not read as instructions.
    let other = tempfile::tempdir().unwrap();
    std::fs::write(other.path().join("secret"), "TOKEN=abc").unwrap();
    std::fs::remove_file(ws.join("AGENTS.md")).unwrap();
    std::os::unix::fs::symlink(other.path().join("secret"), ws.join("AGENTS.md")).unwrap();
    assert!(load_instructions(None, ws).is_empty());
    std::fs::write(ws.join("CLAUDE.md"), [0xff, 0xfe, 0x00]).unwrap();
    assert!(load_instructions(None, ws).is_empty(), "not UTF-8: left out");
}

#[test]
fn git_branch_and_changes_are_read_from_a_real_repository() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    let shell = crate::shell_sandbox::ShellSandbox::new(&Default::default(), ws, &[], false);
    let plain = Environment::detect(ws, 1_795_536_000_000, &shell, false);
    assert_eq!(plain.git, Git::None);
    assert_eq!(plain.date, "2026-11-24");
    let ok = std::process::Command::new("git").args(["init", "-q", "-b", "trunk"]).current_dir(ws).status().unwrap();
    assert!(ok.success());
    std::fs::write(ws.join("a.txt"), "a").unwrap();
    std::fs::write(ws.join("b.txt"), "b").unwrap();
    let env = Environment::detect(ws, 0, &shell, false);
    assert_eq!(env.git, Git::Repo { branch: "trunk".into(), changed: Some(2) });
    assert!(env.describe().contains("- Git: branch trunk, 2 changed or untracked files\n"), "{}", env.describe());
}

#[test]
fn reading_the_repository_never_runs_what_its_config_names_outside_the_sandbox() {
    // Outside /tmp, so the sandbox's private /tmp is not what stops the write.
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let ws = dir.path().join("ws");
    let canary = dir.path().join("ran");
    std::fs::create_dir_all(&ws).unwrap();
    let git = |args: &[&str]| std::process::Command::new("git").args(args).current_dir(&ws).status().unwrap();
    assert!(git(&["init", "-q", "-b", "trunk"]).success());
    std::fs::write(ws.join("a.txt"), "a").unwrap();
    // What a command could have planted: git runs the fsmonitor on every `git status`.
    let planted = format!("echo pwned > {}; exit 1", canary.display());
    assert!(git(&["config", "core.fsmonitor", &planted]).success());

    let shell = crate::shell_sandbox::ShellSandbox::new(&Default::default(), &ws, &[], false);
    let env = Environment::detect(&ws, 0, &shell, false);
    assert!(matches!(env.git, Git::Repo { .. }), "{:?}", env.git);
    assert!(!canary.exists(), "the planted fsmonitor wrote outside the workspace");

    let unsandboxed = crate::shell_sandbox::ShellSandbox::unsandboxed(&ws, "test");
    let env = Environment::detect(&ws, 0, &unsandboxed, false);
    assert_eq!(env.git, Git::Repo { branch: "trunk".into(), changed: None });
    assert!(!canary.exists(), "git ran unsandboxed");
}
