//! Checkpoints, undo and stale writes as a user meets them: a real `bridle run` session
//! against aimock changes files, `bridle sessions undo` puts them back, and a file the user
//! edited after the agent read it is not overwritten.

use std::os::unix::fs::PermissionsExt;

use serde_json::{json, Value};

use super::aimock::Aimock;
use super::bridle::*;

/// An aimock serving `fixtures` (a list of fixture objects).
async fn model(fixtures: Value) -> (Aimock, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("script.json"), json!({ "fixtures": fixtures }).to_string()).unwrap();
    (Aimock::start_with(dir.path()).await, dir)
}

/// `bridle run PROMPT` (in `bypass`, against the mock), continuing `session` when given; the
/// events and the session id.
async fn run(dirs: &Dirs, mock: &Aimock, prompt: &str, session: Option<&str>) -> (Vec<Value>, String) {
    let base = format!("{}/v1", mock.url);
    let mut args =
        vec!["run", prompt, "--mode", "bypass", "--json", "--provider", "openai", "--base-url", &base, "--model", "m"];
    if let Some(id) = session {
        args.extend(["--session", id]);
    }
    let out = bridle(dirs, &args).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let events = json_lines(&out);
    let id = events[0]["sessionId"].as_str().unwrap().to_string();
    (events, id)
}

fn turn_id(events: &[Value]) -> String {
    events.iter().find(|e| e["type"] == "turnStarted").unwrap()["turnId"].as_str().unwrap().to_string()
}

fn outputs(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .filter(|e| e["type"] == "toolCallEnd")
        .map(|e| e["result"]["output"].as_str().unwrap_or_default().to_string())
        .collect()
}

async fn undo(dirs: &Dirs, args: &[&str]) -> (Option<i32>, Value) {
    let mut all = vec!["sessions", "undo"];
    all.extend(args);
    let out = bridle(dirs, &all).await;
    let report = serde_json::from_str(stdout(&out).trim()).unwrap_or_else(|_| json!({"stderr": stderr(&out)}));
    (out.status.code(), report)
}

fn mode(path: &std::path::Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

#[tokio::test]
async fn undo_puts_back_edited_created_and_deleted_files_with_their_modes() {
    let dirs = Dirs::new();
    let ws = &dirs.workspace;
    std::fs::write(ws.join("run.sh"), "#!/bin/sh\necho one\n").unwrap();
    std::fs::set_permissions(ws.join("run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(ws.join("old.txt"), "bye\n").unwrap();
    std::fs::set_permissions(ws.join("old.txt"), std::fs::Permissions::from_mode(0o640)).unwrap();
    let (mock, _f) = model(json!([
        {"match": {"userMessage": "change things", "hasToolResult": false},
         "response": {"toolCalls": [
            {"id": "c1", "name": "edit_file", "arguments": {"path": "run.sh", "old_text": "one", "new_text": "two"}},
            {"id": "c2", "name": "write_file", "arguments": {"path": "new/made.txt", "content": "made\n"}},
            {"id": "c3", "name": "apply_patch", "arguments": {"patch": "--- a/old.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n"}}
         ]}},
        {"match": {"userMessage": "change things", "hasToolResult": true}, "response": {"content": "done"}}
    ]))
    .await;
    let (events, session) = run(&dirs, &mock, "change things", None).await;
    assert!(outputs(&events).iter().all(|o| !o.starts_with("Error")), "{:?}", outputs(&events));
    assert_eq!(std::fs::read_to_string(ws.join("run.sh")).unwrap(), "#!/bin/sh\necho two\n");
    assert!(ws.join("new/made.txt").exists() && !ws.join("old.txt").exists());

    let (code, report) = undo(&dirs, &[&session]).await;
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(report["turnId"], turn_id(&events));
    assert_eq!(report["restored"], json!(["old.txt", "run.sh"]));
    assert_eq!(report["removed"], json!(["new/made.txt"]));
    assert_eq!(report["refused"], json!([]));
    assert_eq!(std::fs::read_to_string(ws.join("run.sh")).unwrap(), "#!/bin/sh\necho one\n");
    assert_eq!(mode(&ws.join("run.sh")), 0o755);
    assert_eq!(std::fs::read_to_string(ws.join("old.txt")).unwrap(), "bye\n");
    assert_eq!(mode(&ws.join("old.txt")), 0o640);
    assert!(!ws.join("new/made.txt").exists());

    // Nothing left to undo: a clear error, exit 1.
    let out = bridle(&dirs, &["sessions", "undo", &session]).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("no file change to undo"), "{}", stderr(&out));
}

/// Issue 27: after `bridle sessions undo`, the resumed session's model is told what was
/// restored and removed, and its edit of a restored file works from the restored content (the
/// undo was Bridle's own write, not a change "by the user or another program").
#[tokio::test]
async fn a_resumed_session_is_told_of_the_undo_and_edits_the_restored_file() {
    let dirs = Dirs::new();
    let ws = &dirs.workspace;
    std::fs::write(ws.join("notes.txt"), "alpha\nbeta\n").unwrap();
    let (mock, _f) = model(json!([
        {"match": {"userMessage": "shout beta", "hasToolResult": false},
         "response": {"toolCalls": [
            {"id": "r1", "name": "read_file", "arguments": {"path": "notes.txt"}},
            {"id": "e1", "name": "edit_file", "arguments": {"path": "notes.txt", "old_text": "beta", "new_text": "BETA"}},
            {"id": "w1", "name": "write_file", "arguments": {"path": "extra.txt", "content": "extra\n"}}
         ]}},
        {"match": {"userMessage": "shout beta", "hasToolResult": true}, "response": {"content": "shouted"}},
        {"match": {"userMessage": "shout alpha instead", "hasToolResult": false},
         "response": {"toolCalls": [
            {"id": "e2", "name": "edit_file", "arguments": {"path": "notes.txt", "old_text": "alpha", "new_text": "ALPHA"}}
         ]}},
        {"match": {"userMessage": "shout alpha instead", "hasToolResult": true}, "response": {"content": "done"}}
    ]))
    .await;
    let (events, session) = run(&dirs, &mock, "shout beta", None).await;
    assert!(outputs(&events).iter().all(|o| !o.starts_with("Error")), "{:?}", outputs(&events));
    let (code, report) = undo(&dirs, &[&session]).await;
    assert_eq!(code, Some(0), "{report}");
    assert_eq!((&report["restored"], &report["removed"]), (&json!(["notes.txt"]), &json!(["extra.txt"])));
    assert_eq!(std::fs::read_to_string(ws.join("notes.txt")).unwrap(), "alpha\nbeta\n");

    let (events, _) = run(&dirs, &mock, "shout alpha instead", Some(&session)).await;
    let outs = outputs(&events);
    assert_eq!(outs.len(), 1, "{outs:?}");
    assert!(outs[0].starts_with("Updated notes.txt"), "{}", outs[0]);
    assert_eq!(std::fs::read_to_string(ws.join("notes.txt")).unwrap(), "ALPHA\nbeta\n");

    // The first request of the resumed turn carried the note, just before the user's message.
    let journal = mock.journal().await;
    let request = journal.iter().find(|body| body.to_string().contains("shout alpha instead")).unwrap();
    let users: Vec<&str> = request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"].as_str())
        .collect();
    let [.., note, last] = users.as_slice() else { panic!("{users:?}") };
    assert_eq!(*last, "shout alpha instead");
    assert!(note.starts_with("[Bridle] The user undid the file changes of an earlier turn"), "{note}");
    assert!(note.contains("Restored to what they held before that turn: notes.txt."), "{note}");
    assert!(note.contains("Removed (that turn had created them): extra.txt."), "{note}");
    // `sessions show` keeps it in the history too.
    let out = bridle(&dirs, &["sessions", "show", &session, "--json"]).await;
    assert!(stdout(&out).contains("The user undid the file changes"), "{}", stdout(&out));
}

#[tokio::test]
async fn an_older_turn_is_refused_by_name_where_a_later_one_changed_the_file() {
    let dirs = Dirs::new();
    let ws = &dirs.workspace;
    std::fs::write(ws.join("a.txt"), "a0\n").unwrap();
    let (mock, _f) = model(json!([
        {"match": {"userMessage": "first", "hasToolResult": false},
         "response": {"toolCalls": [
            {"id": "f1", "name": "write_file", "arguments": {"path": "a.txt", "content": "a1\n"}},
            {"id": "f2", "name": "write_file", "arguments": {"path": "keep.txt", "content": "k1\n"}}
         ]}},
        {"match": {"userMessage": "first", "hasToolResult": true}, "response": {"content": "one"}},
        {"match": {"userMessage": "second", "hasToolResult": false},
         "response": {"toolCalls": [
            {"id": "s1", "name": "write_file", "arguments": {"path": "a.txt", "content": "a2\n"}},
            {"id": "s2", "name": "write_file", "arguments": {"path": "b.txt", "content": "b2\n"}}
         ]}},
        {"match": {"userMessage": "second", "hasToolResult": true}, "response": {"content": "two"}}
    ]))
    .await;
    let (first, session) = run(&dirs, &mock, "first", None).await;
    run(&dirs, &mock, "second", Some(&session)).await;

    let (code, report) = undo(&dirs, &[&session, "--turn", &turn_id(&first)]).await;
    assert_eq!(code, Some(1), "a refusal exits 1: {report}");
    assert_eq!(report["removed"], json!(["keep.txt"]));
    assert_eq!(report["refused"][0]["path"], "a.txt");
    assert!(report["refused"][0]["reason"].as_str().unwrap().contains("later turn"), "{report}");
    assert_eq!(std::fs::read_to_string(ws.join("a.txt")).unwrap(), "a2\n", "left as the later turn made it");

    // The last turn, for one chosen file only.
    let (code, report) = undo(&dirs, &[&session, "--path", "b.txt"]).await;
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(report["removed"], json!(["b.txt"]));
    assert!(!ws.join("b.txt").exists());
    assert_eq!(std::fs::read_to_string(ws.join("a.txt")).unwrap(), "a2\n");
}

#[tokio::test]
async fn a_file_the_user_edited_after_the_agent_read_it_is_not_overwritten() {
    let dirs = Dirs::new();
    let ws = &dirs.workspace;
    std::fs::write(ws.join("notes.txt"), "alpha\nbeta\n").unwrap();
    let edit = json!({"path": "notes.txt", "old_text": "beta", "new_text": "BETA"});
    let (mock, _f) = model(json!([
        {"match": {"userMessage": "look", "hasToolResult": false},
         "response": {"toolCalls": [{"id": "r1", "name": "read_file", "arguments": {"path": "notes.txt"}}]}},
        {"match": {"userMessage": "look", "hasToolResult": true}, "response": {"content": "seen"}},
        {"match": {"userMessage": "shout", "hasToolResult": false},
         "response": {"toolCalls": [{"id": "e1", "name": "edit_file", "arguments": edit}]}},
        {"match": {"userMessage": "shout", "toolCallId": "e1"},
         "response": {"toolCalls": [{"id": "r2", "name": "read_file", "arguments": {"path": "notes.txt"}}]}},
        {"match": {"userMessage": "shout", "toolCallId": "r2"},
         "response": {"toolCalls": [{"id": "e2", "name": "edit_file", "arguments": edit}]}},
        {"match": {"userMessage": "shout", "toolCallId": "e2"}, "response": {"content": "shouted"}}
    ]))
    .await;
    let (_, session) = run(&dirs, &mock, "look", None).await;
    // The user edits the file between the turns (another process, as a real editor would).
    std::fs::write(ws.join("notes.txt"), "alpha\nbeta\ngamma, added by the user\n").unwrap();
    let (events, _) = run(&dirs, &mock, "shout", Some(&session)).await;
    let outs = outputs(&events);
    assert_eq!(outs.len(), 3, "{outs:?}");
    assert!(
        outs[0].contains("modified on disk since you last read it") && outs[0].contains("read it again"),
        "{}",
        outs[0]
    );
    assert!(outs[1].contains("gamma, added by the user"), "the second read sees the user's line: {}", outs[1]);
    assert!(outs[2].starts_with("Updated notes.txt"), "{}", outs[2]);
    assert_eq!(std::fs::read_to_string(ws.join("notes.txt")).unwrap(), "alpha\nBETA\ngamma, added by the user\n");
}

/// Regression: undo wrote into `.git/config` after the folder a turn edited in was swapped for a
/// symlink to `.git` (`rm -rf sub && ln -s .git sub`): the turn's `sub/config` then resolved to
/// `.git/config`. The undo is now judged as a write on the path as it resolves when it is made:
/// refused by name with the reason, exit 1, and `.git/config` keeps every byte.
#[tokio::test]
async fn undo_through_a_folder_swapped_for_a_symlink_to_git_is_refused_by_name() {
    let dirs = Dirs::new();
    let ws = &dirs.workspace;
    let git_config = "[core]\n\trepositoryformatversion = 0\n\tbare = false\n";
    std::fs::create_dir_all(ws.join(".git")).unwrap();
    std::fs::write(ws.join(".git/config"), git_config).unwrap();
    std::fs::create_dir_all(ws.join("sub")).unwrap();
    // What the folder held before the turn: a config that runs code once git reads it as its own.
    std::fs::write(ws.join("sub/config"), "[core]\n\tfsmonitor = ./evil.sh\n").unwrap();
    // The turn leaves `sub/config` holding what `.git/config` holds, so after the swap the path
    // still looks exactly as the turn left it.
    let (mock, _f) = model(json!([
        {"match": {"userMessage": "tidy the config", "hasToolResult": false},
         "response": {"toolCalls": [
            {"id": "w1", "name": "write_file", "arguments": {"path": "sub/config", "content": git_config}}
         ]}},
        {"match": {"userMessage": "tidy the config", "hasToolResult": true}, "response": {"content": "done"}}
    ]))
    .await;
    let (events, session) = run(&dirs, &mock, "tidy the config", None).await;
    assert!(outputs(&events).iter().all(|o| o.starts_with("Updated sub/config")), "{:?}", outputs(&events));

    // A later shell command swaps the folder for a link to `.git`.
    std::fs::remove_dir_all(ws.join("sub")).unwrap();
    std::os::unix::fs::symlink(".git", ws.join("sub")).unwrap();

    let (code, report) = undo(&dirs, &[&session]).await;
    assert_eq!(code, Some(1), "a refusal exits 1: {report}");
    assert_eq!(report["restored"], json!([]), "{report}");
    assert_eq!(report["refused"][0]["path"], "sub/config", "{report}");
    let reason = report["refused"][0]["reason"].as_str().unwrap();
    assert!(reason.contains("now leads to `.git/config` through a symlink"), "{reason}");
    assert_eq!(std::fs::read(ws.join(".git/config")).unwrap(), git_config.as_bytes(), "byte for byte");
}

/// Every entry under `root` (names as bytes): its type, mode and content or link target, so two
/// trees compare byte for byte.
fn tree(root: &std::path::Path) -> Vec<(Vec<u8>, String)> {
    use std::os::unix::ffi::OsStrExt as _;
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let rel = path.strip_prefix(root).unwrap().as_os_str().as_bytes().to_vec();
            let meta = path.symlink_metadata().unwrap();
            let what = if meta.file_type().is_symlink() {
                format!("link {}", std::fs::read_link(&path).unwrap().display())
            } else if meta.is_dir() {
                stack.push(path.clone());
                format!("folder {:o}", meta.permissions().mode() & 0o7777)
            } else {
                format!("file {:o} {:?}", meta.permissions().mode() & 0o7777, std::fs::read(&path).unwrap())
            };
            out.push((rel, what));
        }
    }
    out.sort();
    out
}

/// A folder a command replaced with a file, a file it replaced with a folder, and two names that
/// differ only in bytes that are not UTF-8 (rewritten, and two more made): undo puts the tree back
/// byte for byte, children and names included.
#[tokio::test]
async fn undo_puts_back_replaced_folders_and_files_and_names_that_are_not_utf8() {
    use std::os::unix::ffi::OsStrExt as _;
    let dirs = Dirs::new();
    let ws = &dirs.workspace;
    std::fs::create_dir_all(ws.join("d/sub")).unwrap();
    std::fs::write(ws.join("d/a"), "a\n").unwrap();
    std::fs::write(ws.join("d/sub/b"), "b\n").unwrap();
    std::fs::write(ws.join("f"), "f\n").unwrap();
    let name = |b: &[u8]| ws.join(std::ffi::OsStr::from_bytes(b));
    std::fs::write(name(b"m\xff"), "one\n").unwrap();
    std::fs::write(name(b"m\xfe"), "two\n").unwrap();
    let before = tree(ws);
    let command = "rm -rf d && printf x > d && rm f && mkdir f && printf y > f/x && \
                   printf 1 > $'m\\xff' && printf 2 > $'m\\xfe' && printf 3 > $'n\\xff' && printf 4 > $'n\\xfe'";
    let (mock, _f) = model(json!([
        {"match": {"userMessage": "reshape", "hasToolResult": false},
         "response": {"toolCalls": [{"id": "c1", "name": "bash", "arguments": {"command": command}}]}},
        {"match": {"userMessage": "reshape", "hasToolResult": true}, "response": {"content": "done"}}
    ]))
    .await;
    let (events, session) = run(&dirs, &mock, "reshape", None).await;
    assert_eq!(std::fs::read(ws.join("d")).unwrap(), b"x", "{:?}", outputs(&events));
    assert_eq!(std::fs::read(ws.join("f/x")).unwrap(), b"y");
    assert_eq!(std::fs::read(name(b"n\xfe")).unwrap(), b"4");

    let (code, report) = undo(&dirs, &[&session]).await;
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(report["refused"], json!([]), "{report}");
    let names: Vec<&str> = report["removed"].as_array().unwrap().iter().map(|n| n.as_str().unwrap()).collect();
    assert!(names.contains(&"n\\xff") && names.contains(&"n\\xfe"), "two names, told apart: {report}");
    assert_eq!(tree(ws), before);
}
