//! The sandbox's decisions on real directories, symlinks included.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use super::*;

struct World {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    root: PathBuf,
    evil: PathBuf,
    data: PathBuf,
    sandbox: PathSandbox,
}

/// `home/project` is the workspace, `home/project-evil` its sibling, `home/.ssh` a secret.
fn world() -> World {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().canonicalize().unwrap().join("home");
    let root = home.join("project");
    let evil = home.join("project-evil");
    let data = home.join(".local/share/bridle");
    for d in [&root, &evil, &home.join(".ssh"), &data.join("tool-output/s1"), &root.join("src"), &root.join(".git")] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(home.join(".ssh/id_rsa"), "KEY").unwrap();
    std::fs::write(evil.join("secret.txt"), "evil").unwrap();
    std::fs::write(root.join("src/lib.rs"), "fn main() {}").unwrap();
    symlink(&evil, root.join("link-dir")).unwrap();
    symlink(evil.join("secret.txt"), root.join("link-file")).unwrap();
    symlink(root.join("src"), root.join("inner-link")).unwrap();
    let sandbox = PathSandbox::new(&root, Some(home.clone()), &data, &[]).unwrap();
    World { _tmp: tmp, home, root, evil, data, sandbox }
}

fn inside(w: &World, given: &str, access: Access) -> PathBuf {
    match w.sandbox.resolve(given, access, "s1") {
        Ok(Resolved { place: Place::Workspace(rel), .. }) => rel,
        other => panic!("{given}: expected inside, got {other:?}"),
    }
}

fn refused(w: &World, given: &str, access: Access) -> SandboxError {
    w.sandbox.resolve(given, access, "s1").expect_err(given)
}

#[test]
fn relative_and_absolute_paths_inside_are_accepted() {
    let w = world();
    assert_eq!(inside(&w, "src/lib.rs", Access::Read), Path::new("src/lib.rs"));
    assert_eq!(inside(&w, "./src/../src/lib.rs", Access::Read), Path::new("src/lib.rs"));
    let abs = w.root.join("src/new/deeper/file.rs");
    assert_eq!(inside(&w, abs.to_str().unwrap(), Access::Write), Path::new("src/new/deeper/file.rs"));
    assert_eq!(inside(&w, ".", Access::Read), Path::new(""));
    // A symlink that stays inside is inside, judged where it leads.
    assert_eq!(inside(&w, "inner-link/lib.rs", Access::Read), Path::new("src/lib.rs"));
}

#[test]
fn dot_dot_chains_and_absolute_paths_outside_are_refused() {
    let w = world();
    for given in [
        "../project-evil/secret.txt",
        "src/../../project-evil/x",
        "../../../../../../etc/passwd",
        "/etc/passwd",
        "new/../../outside.txt",
        "/",
    ] {
        assert!(matches!(refused(&w, given, Access::Read), SandboxError::Outside { .. }), "{given}");
    }
    // The sibling whose name starts with the root's name is not inside.
    let sibling = w.evil.join("secret.txt");
    assert!(matches!(refused(&w, sibling.to_str().unwrap(), Access::Write), SandboxError::Outside { .. }));
}

#[test]
fn symlinks_leading_outside_are_outside() {
    let w = world();
    assert!(matches!(refused(&w, "link-file", Access::Read), SandboxError::Outside { .. }));
    assert!(matches!(refused(&w, "link-dir/secret.txt", Access::Read), SandboxError::Outside { .. }));
    // A new file through a symlinked directory: judged through its nearest existing ancestor.
    assert!(matches!(refused(&w, "link-dir/new/file.txt", Access::Write), SandboxError::Outside { .. }));
}

#[test]
fn home_forms_are_expanded_then_judged() {
    let w = world();
    for given in ["~/.ssh/id_rsa", "$HOME/.ssh/id_rsa", "${HOME}/.ssh/id_rsa", "~/.ssh/new_key"] {
        assert!(matches!(refused(&w, given, Access::Write), SandboxError::Sensitive { .. }), "{given}");
    }
    assert!(matches!(refused(&w, "~/project-evil/secret.txt", Access::Read), SandboxError::Outside { .. }));
    assert_eq!(inside(&w, "~/project/src/lib.rs", Access::Read), Path::new("src/lib.rs"));
}

#[test]
fn sensitive_paths_are_refused_even_inside_the_workspace() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().canonicalize().unwrap();
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    let data = home.join("data");
    // The user opened their home folder as the workspace.
    let sandbox = PathSandbox::new(&home, Some(home.clone()), &data, &[home.join("private")]).unwrap();
    assert!(matches!(sandbox.resolve(".ssh/id_rsa", Access::Read, "s"), Err(SandboxError::Sensitive { .. })));
    assert!(matches!(sandbox.resolve("data/bridle.db", Access::Read, "s"), Err(SandboxError::Sensitive { .. })));
    assert!(matches!(sandbox.resolve("private/x", Access::Read, "s"), Err(SandboxError::Sensitive { .. })));
    assert!(sandbox.resolve("notes.txt", Access::Write, "s").is_ok());
}

#[test]
fn git_internals_are_read_only() {
    let w = world();
    assert_eq!(inside(&w, ".git/HEAD", Access::Read), Path::new(".git/HEAD"));
    assert!(matches!(refused(&w, ".git/hooks/pre-commit", Access::Write), SandboxError::GitInternals { .. }));
    assert!(matches!(refused(&w, "vendor/sub/.git/config", Access::Write), SandboxError::GitInternals { .. }));
    // A file merely named like it is fine.
    assert_eq!(inside(&w, ".gitignore", Access::Write), Path::new(".gitignore"));
}

/// A write Bridle makes for the user (a commit, an undo) is judged on the path as it resolves
/// when it is made: a folder swapped for a link to `.git` is refused by name, with where it leads.
#[test]
fn a_write_for_the_user_through_a_symlink_is_refused_by_name() {
    let w = world();
    symlink(".git", w.root.join("sub")).unwrap();
    let judge = |rel: &str| w.sandbox.judge_write(Path::new(rel), "s1");
    let through = |given: &str, leads_to: &str| {
        Err(SandboxError::ThroughSymlink { given: given.into(), leads_to: leads_to.into() })
    };
    assert_eq!(judge("src/lib.rs"), Ok(()));
    assert_eq!(judge("src/new/deeper/file.rs"), Ok(()), "a file to create, in folders to create");
    assert_eq!(judge("sub/config"), through("sub/config", ".git/config"));
    assert_eq!(judge("inner-link/lib.rs"), through("inner-link/lib.rs", "src/lib.rs"));
    assert_eq!(judge("link-file"), through("link-file", &w.evil.join("secret.txt").display().to_string()));
    assert!(matches!(judge(".git/config"), Err(SandboxError::GitInternals { .. })));
    assert!(matches!(judge("../project-evil/secret.txt"), Err(SandboxError::Outside { .. })));
    let err = judge("sub/config").unwrap_err();
    assert_eq!(err.rule(), ("symlinked-path", Severity::High));
    assert_eq!(
        err.to_string(),
        "`sub/config` now leads to `.git/config` through a symlink; Bridle writes only to the path it names, never through a symlinked folder"
    );
}

#[test]
fn the_sessions_own_tool_outputs_are_readable_and_nothing_else_of_the_data_dir() {
    let w = world();
    let own = w.data.join("tool-output/s1/call.txt");
    let resolved = w.sandbox.resolve(own.to_str().unwrap(), Access::Read, "s1").unwrap();
    assert_eq!(resolved.place, Place::ToolOutput(PathBuf::from("call.txt")));
    assert!(matches!(
        w.sandbox.resolve(own.to_str().unwrap(), Access::Write, "s1"),
        Err(SandboxError::ToolOutputReadOnly { .. })
    ));
    // Another session's outputs and the database are Bridle's own data.
    let other = w.data.join("tool-output/s2/call.txt");
    assert!(matches!(
        w.sandbox.resolve(other.to_str().unwrap(), Access::Read, "s1"),
        Err(SandboxError::Sensitive { .. })
    ));
    let db = w.data.join("bridle.db");
    assert!(matches!(w.sandbox.resolve(db.to_str().unwrap(), Access::Read, "s1"), Err(SandboxError::Sensitive { .. })));
}

#[test]
fn nul_bytes_empty_and_overlong_paths_are_clear_errors() {
    let w = world();
    assert_eq!(refused(&w, "src/\0lib.rs", Access::Read), SandboxError::NulByte);
    assert_eq!(refused(&w, "", Access::Read), SandboxError::Empty);
    // Over-long paths stay inside when they would; the OS refuses them when they are opened.
    let long = "a/".repeat(3000) + "b";
    let resolved = w.sandbox.resolve(&long, Access::Write, "s1");
    assert!(
        matches!(resolved, Ok(Resolved { place: Place::Workspace(_), .. })),
        "an over-long path was not judged inside"
    );
    let escaping = "a/".repeat(3000) + &"../".repeat(3002) + "etc/passwd";
    assert!(
        matches!(w.sandbox.resolve(&escaping, Access::Read, "s1"), Err(SandboxError::Outside { .. })),
        "an over-long escape was not refused"
    );
    let _ = &w.home;
}
