//! Worktrees made, archived and restored on real git repositories.

#![allow(clippy::unwrap_used)]
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use super::*;

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        // The test's own git runs no hook either: a mark is Bridle's doing.
        .args([
            "-c",
            "user.name=T",
            "-c",
            "user.email=t@t",
            "-c",
            "init.defaultBranch=main",
            "-c",
            "core.hooksPath=/dev/null",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// A repository on branch `feat` with an unrelated dirty file, an ignored `.env` that
/// `.worktreeinclude` names and an ignored `target/` it does not, and a post-checkout hook that
/// leaves a mark if it ever runs.
fn repository(root: &Path) -> std::path::PathBuf {
    let repo = root.join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q"]);
    std::fs::write(repo.join(".gitignore"), ".env\ntarget/\n").unwrap();
    std::fs::write(repo.join(".worktreeinclude"), ".env\n").unwrap();
    std::fs::write(repo.join("a.txt"), "one\ntwo\n").unwrap();
    std::fs::write(repo.join("b.txt"), "bee\n").unwrap();
    std::fs::write(repo.join("run.sh"), "#!/bin/sh\necho hi\n").unwrap();
    std::fs::set_permissions(repo.join("run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "first"]);
    git(&repo, &["checkout", "-qb", "feat"]);
    std::fs::write(repo.join("a.txt"), "one\ntwo\nmine\n").unwrap();
    std::fs::write(repo.join(".env"), "TOKEN=x\n").unwrap();
    std::fs::create_dir_all(repo.join("target")).unwrap();
    std::fs::write(repo.join("target/out"), "built\n").unwrap();
    let hook = repo.join(".git/hooks/post-checkout");
    std::fs::write(&hook, format!("#!/bin/sh\ntouch {}\n", root.join("hook-ran").display())).unwrap();
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    repo
}

/// What `git` says of a checkout: branch, HEAD, status (untracked and ignored too), the two diffs.
fn state(dir: &Path) -> Vec<String> {
    vec![
        git(dir, &["branch", "--show-current"]),
        git(dir, &["rev-parse", "HEAD"]),
        git(dir, &["status", "--porcelain=v1", "--untracked-files=all", "--ignored"]),
        git(dir, &["diff", "--binary"]),
        git(dir, &["diff", "--cached", "--binary"]),
    ]
}

#[test]
fn a_worktree_is_cut_on_its_own_branch_with_the_included_files_and_the_main_checkout_untouched() {
    let root = tempfile::tempdir().unwrap();
    let repo = repository(root.path());
    let before = state(&repo);
    let path = root.path().join("data/worktrees/s1");
    let made = create(&repo, &path, "one", None).unwrap();
    assert_eq!(made.branch, "bridle/one");
    assert_eq!(made.base, before[1].trim());
    assert_eq!(git(&path, &["branch", "--show-current"]).trim(), "bridle/one");
    assert_eq!(made.included, vec![std::path::PathBuf::from(".env")]);
    assert_eq!(std::fs::read_to_string(path.join(".env")).unwrap(), "TOKEN=x\n");
    assert!(!path.join("target").exists(), "an ignored file the include file does not name stays out");
    // The committed tree, not the main checkout's dirty edit.
    assert_eq!(std::fs::read_to_string(path.join("a.txt")).unwrap(), "one\ntwo\n");
    assert_eq!(state(&repo), before, "the main checkout is as it was");
    assert!(!root.path().join("hook-ran").exists(), "no hook of the repository ran");
    assert!(git(&repo, &["worktree", "list", "--porcelain"]).contains("locked"));

    // A base by name; names and places that cannot be are refused.
    let other = create(&repo, &root.path().join("data/worktrees/s2"), "two", Some("main")).unwrap();
    assert_eq!(other.base, git(&repo, &["rev-parse", "main"]).trim());
    assert!(matches!(create(&repo, &root.path().join("x"), "-rf", None), Err(WorktreeError::BadName(_))));
    assert!(matches!(create(&repo, &root.path().join("x"), "a/../b", None), Err(WorktreeError::BadName(_))));
    assert!(matches!(create(&repo, &path, "three", None), Err(WorktreeError::Exists(_))));
    assert!(matches!(
        create(&repo.join("target"), &root.path().join("y"), "four", None),
        Err(WorktreeError::NotACheckout(_))
    ));
    let taken = create(&repo, &root.path().join("z"), "one", None).unwrap_err();
    assert!(taken.to_string().contains("bridle/one"), "{taken}");
    assert!(!root.path().join("z").exists());
}

#[test]
fn an_archived_worktree_comes_back_staged_unstaged_and_untracked_as_it_was_even_after_gc() {
    let root = tempfile::tempdir().unwrap();
    let repo = repository(root.path());
    let path = root.path().join("data/worktrees/s1");
    let made = create(&repo, &path, "one", None).unwrap();
    // Staged: an edit and a new file; unstaged on top: another edit of the same file, a deletion,
    // a mode change; untracked: a new file and a nested one; the included file edited.
    std::fs::write(path.join("a.txt"), "one\ntwo\nstaged\n").unwrap();
    std::fs::write(path.join("c.txt"), "new and staged\n").unwrap();
    git(&path, &["add", "a.txt", "c.txt"]);
    std::fs::write(path.join("a.txt"), "one\ntwo\nstaged\nand unstaged\n").unwrap();
    std::fs::remove_file(path.join("b.txt")).unwrap();
    std::fs::set_permissions(path.join("run.sh"), std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::write(path.join("d.txt"), "untracked\n").unwrap();
    std::fs::create_dir_all(path.join("notes/deep")).unwrap();
    std::fs::write(path.join("notes/deep/e.bin"), [0u8, 159, 146, 150, 255]).unwrap();
    std::fs::write(path.join(".env"), "TOKEN=changed\n").unwrap();
    std::fs::write(path.join("target-ignored.log"), "x").unwrap();
    let before = state(&path);
    let main_before = state(&repo);

    let archived = archive(&made, "s1").unwrap();
    assert!(!path.exists(), "the folder is removed");
    assert_eq!(archived.branch, "bridle/one");
    git(&repo, &["worktree", "prune"]);
    git(&repo, &["gc", "-q", "--prune=now"]);
    assert_eq!(state(&repo), main_before, "the main checkout is as it was");

    restore(&made, &archived).unwrap();
    assert_eq!(state(&path), before);
    assert_eq!(std::fs::read_to_string(path.join(".env")).unwrap(), "TOKEN=changed\n");
    assert_eq!(std::fs::read(path.join("notes/deep/e.bin")).unwrap(), [0u8, 159, 146, 150, 255]);
    assert_eq!(std::fs::metadata(path.join("run.sh")).unwrap().permissions().mode() & 0o777, 0o644);
    assert!(!git(&repo, &["for-each-ref", "refs/bridle/"]).contains("archive"), "the archive's ref is dropped");
    assert!(!root.path().join("hook-ran").exists(), "no hook of the repository ran");
}

#[test]
fn a_restore_onto_a_branch_that_moved_changes_nothing() {
    let root = tempfile::tempdir().unwrap();
    let repo = repository(root.path());
    let path = root.path().join("data/worktrees/s1");
    let made = create(&repo, &path, "one", None).unwrap();
    std::fs::write(path.join("d.txt"), "untracked\n").unwrap();
    let archived = archive(&made, "s1").unwrap();
    // Someone commits on the branch meanwhile.
    let elsewhere = root.path().join("elsewhere");
    git(&repo, &["worktree", "add", "-q", elsewhere.to_str().unwrap(), "bridle/one"]);
    std::fs::write(elsewhere.join("f.txt"), "f\n").unwrap();
    git(&elsewhere, &["add", "f.txt"]);
    git(&elsewhere, &["commit", "-qm", "moved"]);
    git(&repo, &["worktree", "remove", elsewhere.to_str().unwrap()]);

    let refused = restore(&made, &archived).unwrap_err();
    assert!(matches!(refused, WorktreeError::BranchMoved { .. }), "{refused}");
    assert!(!path.exists());
    assert!(git(&repo, &["for-each-ref", "refs/bridle/"]).contains("archive"), "the archive is kept");
}

#[test]
fn apply_brings_the_sessions_changes_in_and_keeps_the_main_checkouts_own_edits() {
    use super::handoff::{apply, HandoffError};
    let root = tempfile::tempdir().unwrap();
    let repo = repository(root.path());
    let path = root.path().join("data/worktrees/s1");
    let made = create(&repo, &path, "one", None).unwrap();
    // Committed, staged, unstaged and untracked work in the session.
    std::fs::write(path.join("run.sh"), "#!/bin/sh\necho bye\n").unwrap();
    git(&path, &["commit", "-qam", "bye"]);
    std::fs::write(path.join("c.txt"), "staged\n").unwrap();
    git(&path, &["add", "c.txt"]);
    std::fs::write(path.join("b.txt"), "bee\nmore\n").unwrap();
    std::fs::write(path.join("d.txt"), "untracked\n").unwrap();
    let before = state(&repo);

    // A dry run says what would change and writes nothing.
    let dry = apply(&made, true).unwrap();
    let mut files = dry.files.clone();
    files.sort();
    assert_eq!(files, ["b.txt", "c.txt", "d.txt", "run.sh"].map(std::path::PathBuf::from));
    assert!(dry.patch.contains("+echo bye"), "{}", dry.patch);
    assert_eq!(state(&repo), before);

    apply(&made, false).unwrap();
    assert_eq!(std::fs::read_to_string(repo.join("run.sh")).unwrap(), "#!/bin/sh\necho bye\n");
    assert_eq!(std::fs::read_to_string(repo.join("b.txt")).unwrap(), "bee\nmore\n");
    assert_eq!(std::fs::read_to_string(repo.join("d.txt")).unwrap(), "untracked\n");
    assert_eq!(std::fs::read_to_string(repo.join("a.txt")).unwrap(), "one\ntwo\nmine\n", "the unrelated edit stays");
    assert_eq!(git(&repo, &["rev-parse", "HEAD"]), before[1], "uncommitted: HEAD did not move");
    assert_eq!(git(&path, &["diff", "--cached", "--name-only"]), "c.txt\n", "the session's own index is untouched");

    // A second session whose change conflicts with the main checkout changes nothing there.
    let other = root.path().join("data/worktrees/s2");
    let made = create(&repo, &other, "two", Some(&made.base)).unwrap();
    std::fs::write(other.join("b.txt"), "wasp\n").unwrap();
    std::fs::write(other.join("e.txt"), "would be new\n").unwrap();
    let before = state(&repo);
    let refused = apply(&made, false).unwrap_err();
    match &refused {
        HandoffError::Conflict(files) => assert_eq!(files, &[std::path::PathBuf::from("b.txt")]),
        other => panic!("{other}"),
    }
    assert!(refused.to_string().contains("`b.txt`"), "{refused}");
    assert_eq!(state(&repo), before, "nothing of it landed");
    assert!(!repo.join("e.txt").exists());
}

#[test]
fn merge_lands_the_branch_on_a_clean_checkout_and_undoes_a_conflicting_one() {
    use super::handoff::{merge, HandoffError};
    let root = tempfile::tempdir().unwrap();
    let repo = repository(root.path());
    let path = root.path().join("data/worktrees/s1");
    create(&repo, &path, "one", None).unwrap();
    std::fs::write(path.join("c.txt"), "from the session\n").unwrap();
    git(&path, &["add", "c.txt"]);
    git(&path, &["commit", "-qm", "session work"]);

    // The main checkout's dirty a.txt stops it.
    assert!(
        matches!(merge(&repo, "bridle/one"), Err(HandoffError::Dirty(files)) if files == [std::path::PathBuf::from("a.txt")])
    );
    git(&repo, &["checkout", "--", "a.txt"]);
    merge(&repo, "bridle/one").unwrap();
    assert_eq!(std::fs::read_to_string(repo.join("c.txt")).unwrap(), "from the session\n");
    assert_eq!(git(&repo, &["rev-list", "--parents", "-n1", "HEAD"]).split_whitespace().count(), 3, "a merge commit");

    // Both sides change b.txt: the merge is undone and b.txt named.
    std::fs::write(repo.join("b.txt"), "main's bee\n").unwrap();
    git(&repo, &["commit", "-qam", "main"]);
    std::fs::write(path.join("b.txt"), "session's bee\n").unwrap();
    git(&path, &["commit", "-qam", "session"]);
    let before = state(&repo);
    let refused = merge(&repo, "bridle/one").unwrap_err();
    assert!(
        matches!(&refused, HandoffError::Conflict(files) if files == &[std::path::PathBuf::from("b.txt")]),
        "{refused}"
    );
    assert_eq!(state(&repo), before);
    assert!(!root.path().join("hook-ran").exists(), "no hook of the repository ran");
}

#[test]
fn head_names_the_branch_of_a_checkout_and_of_a_worktree_and_nothing_else() {
    let root = tempfile::tempdir().unwrap();
    let repo = repository(root.path());
    assert_eq!(head(&repo).as_deref(), Some("feat"));
    let path = root.path().join("data/worktrees/s1");
    create(&repo, &path, "one", None).unwrap();
    assert_eq!(head(&path).as_deref(), Some("bridle/one"), "a worktree's .git file is followed");
    git(&path, &["checkout", "-q", "--detach"]);
    assert!(head(&path).unwrap().starts_with("detached at "));
    assert_eq!(head(root.path()), None, "no checkout");
    // A .git that is a FIFO is no repository, and nothing waits on it.
    let fifo = root.path().join("fifo");
    std::fs::create_dir_all(&fifo).unwrap();
    assert!(Command::new("mkfifo").arg(fifo.join(".git")).status().unwrap().success());
    assert_eq!(head(&fifo), None);
}
