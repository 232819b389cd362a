#![allow(clippy::unwrap_used)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use pretty_assertions::assert_eq;

use crate::changes::*;
use crate::store::Store;
use crate::tools::{builtin_registry, ToolContext, ToolRegistry};

struct World {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    data: PathBuf,
    store: Arc<Store>,
    files: Arc<SessionFiles>,
    registry: ToolRegistry,
}

fn world() -> World {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("ws");
    std::fs::create_dir_all(&root).unwrap();
    let data = tmp.path().join("data");
    let store = Arc::new(Store::open_in_memory().unwrap());
    store.create_session("test-session", &root.display().to_string(), 0).unwrap();
    let clock: Arc<dyn crate::clock::Clock> = Arc::new(crate::clock::FixedClock(1_000));
    let files = Arc::new(SessionFiles::new("test-session", store.clone(), &data, clock));
    World { _tmp: tmp, root, data, store, files, registry: builtin_registry().unwrap() }
}

impl World {
    fn ctx(&self, turn: &str) -> ToolContext {
        let mut ctx = crate::tools::testing::context(&self.root);
        crate::tools::testing::in_session(&mut ctx, self.store.clone(), turn);
        // The world's own files' memory, which the tests read back.
        if let Some(session) = &mut ctx.session {
            session.files = self.files.clone();
        }
        ctx
    }

    async fn call(&self, turn: &str, tool: &str, args: serde_json::Value) -> Result<crate::tools::ToolOutput, String> {
        let call = self.registry.prepare(tool, &args.to_string()).unwrap();
        call.call.run(&self.ctx(turn)).await.map_err(|e| e.to_string())
    }

    fn undo(&self, turn: Option<&str>, paths: &[&str]) -> Result<UndoReport, String> {
        let paths: Vec<String> = paths.iter().map(|p| p.to_string()).collect();
        let workspace = crate::workspace::Workspace::open(&self.root, None, &self.data, &[]).unwrap();
        undo(&self.store, &BlobStore::new(&self.data), &workspace, "test-session", turn, &paths, 2_000)
    }

    fn read(&self, rel: &str) -> Option<Vec<u8>> {
        std::fs::read(self.root.join(rel)).ok()
    }

    fn mode(&self, rel: &str) -> u32 {
        std::fs::metadata(self.root.join(rel)).unwrap().permissions().mode() & 0o7777
    }
}

fn write(root: &Path, rel: &str, bytes: &[u8], mode: u32) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, bytes).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[tokio::test]
async fn a_turn_is_undone_with_exact_bytes_and_modes() {
    let w = world();
    write(&w.root, "edited.sh", b"#!/bin/sh\necho one\n", 0o755);
    write(&w.root, "doomed.bin", &[0, 159, 146, 150, 1, 2], 0o600);
    let out = w
        .call("t1", "edit_file", serde_json::json!({"path": "edited.sh", "old_text": "one", "new_text": "two"}))
        .await
        .unwrap();
    assert_eq!(out.changes.len(), 1);
    assert_eq!(out.changes[0].kind, ChangeKind::Modified);
    w.call("t1", "write_file", serde_json::json!({"path": "new/created.txt", "content": "fresh\n"})).await.unwrap();
    let patch = "--- a/doomed.bin\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n";
    // apply_patch cannot delete a binary file (it is not text): delete it with a text stand-in.
    write(&w.root, "doomed.txt", b"x\n", 0o640);
    let deleted = w
        .call("t1", "apply_patch", serde_json::json!({"patch": patch.replace("doomed.bin", "doomed.txt")}))
        .await
        .unwrap();
    assert_eq!(deleted.changes[0].kind, ChangeKind::Deleted);
    assert_eq!(w.read("edited.sh").unwrap(), b"#!/bin/sh\necho two\n");
    assert!(w.read("doomed.txt").is_none());

    let report = w.undo(None, &[]).unwrap();
    assert_eq!(report.turn_id, "t1");
    assert_eq!(report.restored, ["doomed.txt", "edited.sh"]);
    assert_eq!(report.removed, ["new/created.txt"]);
    assert!(report.refused.is_empty(), "{:?}", report.refused);
    assert_eq!(w.read("edited.sh").unwrap(), b"#!/bin/sh\necho one\n");
    assert_eq!(w.mode("edited.sh"), 0o755);
    assert_eq!(w.read("doomed.txt").unwrap(), b"x\n");
    assert_eq!(w.mode("doomed.txt"), 0o640);
    assert!(w.read("new/created.txt").is_none());
    assert_eq!(w.read("doomed.bin").unwrap(), [0, 159, 146, 150, 1, 2], "untouched");
    // Once undone, there is nothing left to undo.
    assert!(w.undo(None, &[]).unwrap_err().contains("no file change"));
}

#[tokio::test]
async fn chosen_files_are_undone_alone_and_several_changes_go_back_to_the_first() {
    let w = world();
    write(&w.root, "a.txt", b"a0\n", 0o644);
    write(&w.root, "b.txt", b"b0\n", 0o644);
    for (file, text) in [("a.txt", "a1\n"), ("b.txt", "b1\n"), ("a.txt", "a2\n")] {
        w.call("t1", "write_file", serde_json::json!({"path": file, "content": text})).await.unwrap();
    }
    let report = w.undo(Some("t1"), &["a.txt"]).unwrap();
    assert_eq!(report.restored, ["a.txt"]);
    assert_eq!(w.read("a.txt").unwrap(), b"a0\n", "back to before the turn's first change");
    assert_eq!(w.read("b.txt").unwrap(), b"b1\n", "not chosen, not touched");
    let report = w.undo(Some("t1"), &["./b.txt"]).unwrap();
    assert_eq!(report.restored, ["b.txt"]);
    assert_eq!(w.read("b.txt").unwrap(), b"b0\n");
}

#[tokio::test]
async fn undo_refuses_by_name_a_file_changed_again_later() {
    let w = world();
    write(&w.root, "shared.txt", b"v0\n", 0o644);
    write(&w.root, "own.txt", b"o0\n", 0o644);
    w.call("t1", "write_file", serde_json::json!({"path": "shared.txt", "content": "v1\n"})).await.unwrap();
    w.call("t1", "write_file", serde_json::json!({"path": "own.txt", "content": "o1\n"})).await.unwrap();
    w.call("t2", "write_file", serde_json::json!({"path": "shared.txt", "content": "v2\n"})).await.unwrap();
    let report = w.undo(Some("t1"), &[]).unwrap();
    assert_eq!(report.restored, ["own.txt"]);
    assert_eq!(report.refused.len(), 1);
    assert_eq!(report.refused[0].path, "shared.txt");
    assert!(report.refused[0].reason.contains("later turn (t2)"), "{}", report.refused[0].reason);
    assert_eq!(w.read("shared.txt").unwrap(), b"v2\n");

    // The user edits what the last turn left: undoing it leaves the user's work alone.
    std::fs::write(w.root.join("shared.txt"), "mine\n").unwrap();
    let report = w.undo(None, &[]).unwrap();
    assert_eq!(report.turn_id, "t2");
    assert_eq!(report.refused[0].path, "shared.txt");
    assert!(report.refused[0].reason.contains("changed since"), "{}", report.refused[0].reason);
    assert_eq!(w.read("shared.txt").unwrap(), b"mine\n");
}

#[tokio::test]
async fn an_edit_after_the_file_changed_on_disk_is_refused_until_read_again() {
    let w = world();
    write(&w.root, "notes.txt", b"alpha\nbeta\n", 0o644);
    w.call("t1", "read_file", serde_json::json!({"path": "notes.txt"})).await.unwrap();
    // The user changes the file (a different size, so the stamp differs on any filesystem).
    std::fs::write(w.root.join("notes.txt"), "alpha\nbeta\ngamma from the user\n").unwrap();
    let edit = serde_json::json!({"path": "notes.txt", "old_text": "beta", "new_text": "BETA"});
    let err = w.call("t1", "edit_file", edit.clone()).await.unwrap_err();
    assert!(err.contains("modified on disk since you last read it") && err.contains("read it again"), "{err}");
    assert_eq!(w.read("notes.txt").unwrap(), b"alpha\nbeta\ngamma from the user\n", "the user's edit is kept");
    w.call("t1", "read_file", serde_json::json!({"path": "notes.txt"})).await.unwrap();
    w.call("t1", "edit_file", edit.clone()).await.unwrap();
    assert_eq!(w.read("notes.txt").unwrap(), b"alpha\nBETA\ngamma from the user\n");
    // Its own write does not make the file stale for the session.
    w.call("t1", "edit_file", serde_json::json!({"path": "notes.txt", "old_text": "alpha", "new_text": "A"}))
        .await
        .unwrap();
    // A file never read can be changed (the edit reads it).
    write(&w.root, "unread.txt", b"x\n", 0o644);
    w.call("t1", "edit_file", serde_json::json!({"path": "unread.txt", "old_text": "x", "new_text": "y"}))
        .await
        .unwrap();
}

#[tokio::test]
async fn a_plan_is_not_committed_over_a_file_that_changed_after_it_was_made() {
    let w = world();
    write(&w.root, "a.txt", b"one\n", 0o644);
    let call = w.registry.prepare("edit_file", r#"{"path":"a.txt","old_text":"one","new_text":"two"}"#).unwrap();
    let ctx = w.ctx("t1");
    let plan = call.call.plan(&ctx).await.unwrap().unwrap();
    assert!(plan.diff().contains("-one\n+two\n"));
    assert_eq!(w.read("a.txt").unwrap(), b"one\n", "planning writes nothing");
    std::fs::write(w.root.join("a.txt"), "one, edited\n").unwrap();
    let err = commit(&plan, &ctx).await.unwrap_err().to_string();
    assert!(err.contains("changed on disk while this change was being prepared"), "{err}");
    assert_eq!(w.read("a.txt").unwrap(), b"one, edited\n");
    assert!(w.store.changes("test-session").unwrap().is_empty(), "no checkpoint for a change not made");
}

/// Regression: undo wrote into `.git/config` after a later command swapped a folder the turn had
/// edited in for a symlink to `.git` (the turn's `sub/config` then resolved to `.git/config`).
#[tokio::test]
async fn undo_refuses_by_name_a_path_whose_folder_became_a_symlink_to_git() {
    let w = world();
    let git_config = "[core]\n\trepositoryformatversion = 0\n";
    let git_head = "ref: refs/heads/main\n";
    write(&w.root, ".git/config", git_config.as_bytes(), 0o644);
    write(&w.root, ".git/HEAD", git_head.as_bytes(), 0o644);
    // Before the turn the folder held a config that runs code if git ever reads it as its own.
    write(&w.root, "sub/config", b"[core]\n\tfsmonitor = ./evil.sh\n", 0o644);
    // The turn leaves `sub/config` and a new `sub/HEAD` holding what `.git` holds, so after the
    // swap each path still looks exactly as the turn left it.
    w.call("t1", "write_file", serde_json::json!({"path": "sub/config", "content": git_config})).await.unwrap();
    w.call("t1", "write_file", serde_json::json!({"path": "sub/HEAD", "content": git_head})).await.unwrap();
    std::fs::remove_dir_all(w.root.join("sub")).unwrap();
    std::os::unix::fs::symlink(".git", w.root.join("sub")).unwrap();

    let report = w.undo(None, &[]).unwrap();
    assert_eq!((report.restored.len(), report.removed.len()), (0, 0), "{report:?}");
    let refused: Vec<(&str, &str)> = report.refused.iter().map(|r| (r.path.as_str(), r.reason.as_str())).collect();
    assert_eq!(
        refused,
        [
            ("sub/HEAD", "`sub/HEAD` now leads to `.git/HEAD` through a symlink; Bridle writes only to the path it names, never through a symlinked folder; it was left as it is"),
            ("sub/config", "`sub/config` now leads to `.git/config` through a symlink; Bridle writes only to the path it names, never through a symlinked folder; it was left as it is"),
        ]
    );
    assert_eq!(w.read(".git/config").unwrap(), git_config.as_bytes(), "byte for byte");
    assert_eq!(w.read(".git/HEAD").unwrap(), git_head.as_bytes());
    assert!(w.store.changes("test-session").unwrap().iter().all(|r| r.undone_at.is_none()), "nothing marked undone");
}

/// A plan waiting for approval is judged again when committed: a folder swapped for a link to
/// `.git` meanwhile is refused by name, and nothing lands in `.git/`.
#[tokio::test]
async fn a_commit_is_refused_when_a_folder_became_a_symlink_since_the_plan() {
    let w = world();
    write(&w.root, ".git/config", b"[core]\n", 0o644);
    std::fs::create_dir_all(w.root.join("sub/hooks")).unwrap();
    let args = r#"{"path":"sub/hooks/post-checkout","content":"echo hi\n"}"#;
    let call = w.registry.prepare("write_file", args).unwrap();
    let ctx = w.ctx("t1");
    let plan = call.call.plan(&ctx).await.unwrap().unwrap();
    std::fs::remove_dir_all(w.root.join("sub")).unwrap();
    std::os::unix::fs::symlink(".git", w.root.join("sub")).unwrap();
    let err = commit(&plan, &ctx).await.unwrap_err().to_string();
    assert!(
        err.starts_with("`sub/hooks/post-checkout` now leads to `.git/hooks/post-checkout` through a symlink")
            && err.ends_with("Nothing was changed."),
        "{err}"
    );
    assert!(!w.root.join(".git/hooks").exists());
    assert!(w.store.changes("test-session").unwrap().is_empty(), "no checkpoint for a change not made");
}

#[tokio::test]
async fn a_failed_write_leaves_every_file_and_no_checkpoint() {
    let w = world();
    write(&w.root, "a.txt", b"a\n", 0o644);
    // `blocked` is a directory, so writing a file there fails after `a.txt` was written.
    std::fs::create_dir_all(w.root.join("blocked")).unwrap();
    let patch = "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+A\n--- /dev/null\n+++ b/blocked\n@@ -0,0 +1 @@\n+x\n";
    let err = w.call("t1", "apply_patch", serde_json::json!({"patch": patch})).await.unwrap_err();
    assert!(err.contains("blocked"), "{err}");
    assert_eq!(w.read("a.txt").unwrap(), b"a\n");
    assert!(w.store.changes("test-session").unwrap().is_empty());
}

/// An undo is Bridle's own write: the session's stamps follow it, in memory of a resumed
/// session too, so the next edit of the restored file is not refused as changed on disk; the
/// report's note names what was restored and what was refused.
#[tokio::test]
async fn after_an_undo_the_stamps_follow_the_restored_files() {
    let w = world();
    write(&w.root, "a.txt", b"one\n", 0o644);
    write(&w.root, "b.txt", b"bee\n", 0o644);
    let edit = |path: &str, old: &str, new: &str| serde_json::json!({"path": path, "old_text": old, "new_text": new});
    w.call("t1", "edit_file", edit("a.txt", "one", "two")).await.unwrap();
    w.call("t1", "edit_file", edit("b.txt", "bee", "B")).await.unwrap();
    write(&w.root, "c.txt", b"sea\n", 0o644);
    w.call("t1", "edit_file", edit("c.txt", "sea", "C")).await.unwrap();
    // As if a command had changed c.txt: the session has no stamp of it, and gets none.
    w.store.set_seen("test-session", "c.txt", None).unwrap();
    write(&w.root, "b.txt", b"the user's\n", 0o644);
    let report = w.undo(None, &[]).unwrap();
    assert_eq!(report.restored, ["a.txt", "c.txt"]);
    assert_eq!(report.stamps.iter().map(|(p, _)| p.as_str()).collect::<Vec<_>>(), ["a.txt"]);
    let note = report.note().unwrap();
    assert!(note.contains("Restored to what they held before that turn: a.txt, c.txt."), "{note}");
    assert!(note.contains("Not undone, left as it is: b.txt (changed since this turn"), "{note}");
    // The store knows the restored file's stamp: a session opened now (a resumed one) may edit it.
    let resumed =
        SessionFiles::new("test-session", w.store.clone(), &w.data, Arc::new(crate::clock::FixedClock(3_000)));
    let fs = &crate::workspace::Workspace::open(&w.root, None, &w.data, &[]).unwrap().fs;
    assert!(resumed.check_fresh(fs, Path::new("a.txt")).is_ok());
    assert_eq!(resumed.seen(Path::new("c.txt")), None);
    // The refused file is still one the user changed behind the session's back.
    assert!(resumed.check_fresh(fs, Path::new("b.txt")).unwrap_err().to_string().contains("modified on disk"));
}

/// DESIGN 4.1: the closest region of a "not found" error, copied with its `  N | ` prefixes,
/// applies; an edit that still fails leaves the file byte-identical and no checkpoint.
#[tokio::test]
async fn an_edit_copied_from_the_closest_region_applies_and_a_failed_one_writes_nothing() {
    let w = world();
    let original = b"\xef\xbb\xbfalpha\r\n    beta();\r\n\r\ngamma\r\n";
    write(&w.root, "f.txt", original, 0o644);
    let edit = |old: &str, new: &str| serde_json::json!({"path": "f.txt", "old_text": old, "new_text": new});
    let err = w.call("t1", "edit_file", edit("\nalpha\nbeta(1);", "x")).await.unwrap_err();
    assert!(err.contains("   1 | alpha\n   2 |     beta();") && err.contains("The file was not changed."), "{err}");
    for (old, new) in [
        ("   1 | alpha\n   2 |     beta(1);", "x"),
        ("   1 | alpha\n       beta();", "x"),
        ("   1 | alpha\n   2 |     beta();", "   1 | alpha\n    beta(2);"),
        ("\n\n", "x"),
    ] {
        let err = w.call("t1", "edit_file", edit(old, new)).await.unwrap_err();
        assert!(err.ends_with("The file was not changed."), "{err}");
        assert_eq!(w.read("f.txt").unwrap(), original, "{old:?}");
    }
    assert!(w.store.changes("test-session").unwrap().is_empty());

    let out = w
        .call(
            "t1",
            "edit_file",
            edit("\n   1 | alpha\n   2 |     beta();\n   3 |\n", "   1 | alpha\n   2 |     beta(2);\n   3 |\n"),
        )
        .await
        .unwrap();
    assert_eq!(w.read("f.txt").unwrap(), b"\xef\xbb\xbfalpha\r\n    beta(2);\r\n\r\ngamma\r\n");
    assert!(
        out.output.contains("line-number prefixes (`  N | `) were removed from old_text (and from new_text)"),
        "{}",
        out.output
    );
}

#[test]
fn blobs_are_stored_once_checked_on_read_and_collected() {
    let tmp = tempfile::tempdir().unwrap();
    let blobs = BlobStore::new(tmp.path());
    let a = blobs.put(b"same").unwrap();
    assert_eq!(blobs.put(b"same").unwrap(), a);
    let b = blobs.put(b"other").unwrap();
    assert_eq!(blobs.get(&a).unwrap(), b"same");
    assert!(blobs.get("not-a-hash").is_err());
    let path = tmp.path().join("blobs").join(&a[..2]).join(&a[2..]);
    std::fs::write(&path, "tampered").unwrap();
    assert!(blobs.get(&a).unwrap_err().to_string().contains("corrupt"));
    assert_eq!(blobs.collect(&[b.clone()].into_iter().collect()).unwrap(), 1);
    assert!(!path.exists());
    assert_eq!(blobs.get(&b).unwrap(), b"other");
}

#[test]
fn a_session_open_in_another_process_is_not_deleted() {
    let w = world();
    std::fs::create_dir_all(&w.data).unwrap();
    let lease = crate::store::SessionLease::try_acquire(&w.data, "test-session").unwrap().unwrap();
    let refused = delete_session(&w.store, &w.data, "test-session").unwrap_err();
    assert!(refused.contains("open in another Bridle process"), "{refused}");
    assert!(w.store.session("test-session").is_ok(), "the session is still there");
    drop(lease);
    // Its saved tool outputs go with it; another session's stay.
    let outputs = w.data.join("tool-output");
    std::fs::create_dir_all(outputs.join("test-session")).unwrap();
    std::fs::create_dir_all(outputs.join("other")).unwrap();
    std::fs::write(outputs.join("test-session/call.txt"), "x".repeat(1000)).unwrap();
    delete_session(&w.store, &w.data, "test-session").unwrap();
    assert!(w.store.session("test-session").is_err());
    assert!(!outputs.join("test-session").exists());
    assert!(outputs.join("other").exists());
}

/// A commit of 20,000 files stopped once `stop_after` of them hold their new text (its call's
/// timeout): every file it wrote is put back before it returns, and its checkpoint rows are
/// forgotten. Returns how many were written and how long putting them back took.
async fn stopped_while_writing(stop_after: usize) -> (usize, std::time::Duration) {
    const FILES: usize = 20_000;
    let w = world();
    std::fs::create_dir_all(w.root.join("f")).unwrap();
    let mut files = Vec::new();
    for n in 0..FILES {
        let rel = PathBuf::from(format!("f/{n:05}.txt"));
        std::fs::write(w.root.join(&rel), format!("old {n}\n")).unwrap();
        let (before, after) = (format!("old {n}\n").into_bytes(), format!("new {n}\n").into_bytes());
        files.push(PlannedFile { rel, before: Some(before), after: Some(after) });
    }
    let plan = ChangePlan { files, note: None };
    let ctx = w.ctx("t1");
    let writes = ctx.writes.clone();
    // Stopped once the chosen file holds its new text: the commit is writing.
    let watched = w.root.join(format!("f/{:05}.txt", stop_after - 1));
    let new = format!("new {}\n", stop_after - 1).into_bytes();
    let stopper = tokio::spawn(async move {
        while std::fs::read(&watched).unwrap_or_default() != new {
            tokio::time::sleep(std::time::Duration::from_millis(1)).await;
        }
        writes.stop();
        std::time::Instant::now()
    });
    let result = commit(&plan, &ctx).await;
    let returned = std::time::Instant::now();
    let stopped_at = stopper.await.unwrap();
    let written = match result {
        Err(CommitError::RolledBack { written, restored: true }) => written,
        other => panic!("expected a rollback mid-write: {other:?}"),
    };
    assert!(written >= stop_after && written < FILES, "{written}");
    for n in 0..FILES {
        assert_eq!(w.read(&format!("f/{n:05}.txt")).unwrap(), format!("old {n}\n").into_bytes(), "f/{n:05}.txt");
    }
    assert!(w.store.changes("test-session").unwrap().is_empty(), "checkpoint rows were kept");
    (written, returned - stopped_at)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_commit_stopped_while_writing_puts_back_every_file_it_wrote() {
    let (written, took) = stopped_while_writing(1).await;
    eprintln!("rolled back {written} file(s) in {took:?}");
}

/// The time to put back a large commit stopped midway, for the figures. A report, not a check.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "a figure: cargo test -p bridle-core --lib rollback_figure -- --ignored --nocapture"]
async fn rollback_figure() {
    let (written, took) = stopped_while_writing(10_000).await;
    eprintln!("rolled back {written} file(s) of a 20,000-file commit in {took:?}");
}
