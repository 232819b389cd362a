//! Reviewing a turn hunk by hunk (DESIGN §10.1, issue 40) as a user meets it: a real `bridle run`
//! against aimock edits a file three times and runs a captured `sed -i`; `bridle sessions
//! review` lists the hunks with their calls, rejects and keeps them one by one around the user's
//! own edits, refuses a hunk the user changed since, and the model hears of the rejects once.

use serde_json::{json, Value};

use super::aimock::Aimock;
use super::bridle::*;

const NAMES: [&str; 20] = [
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
    "twenty",
];

fn source() -> String {
    NAMES.iter().enumerate().map(|(i, n)| format!("{n} = {}\n", i + 1)).collect()
}

fn edit(id: &str, old: &str, new: &str) -> Value {
    json!({"id": id, "name": "edit_file", "arguments": {"path": "f.py", "old_text": old, "new_text": new}})
}

/// An aimock that answers "tidy up" with three edits of f.py and a sed of g.txt, one call a step,
/// and anything else with "ok".
async fn model() -> (Aimock, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let fixtures = json!([
        {"match": {"userMessage": "tidy up", "hasToolResult": false},
         "response": {"toolCalls": [edit("e1", "three = 3", "three = 33")]}},
        {"match": {"userMessage": "tidy up", "toolCallId": "e1"},
         "response": {"toolCalls": [edit("e2", "nine = 9", "nine = 99")]}},
        {"match": {"userMessage": "tidy up", "toolCallId": "e2"},
         "response": {"toolCalls": [edit("e3", "fifteen = 15", "fifteen = 1515")]}},
        {"match": {"userMessage": "tidy up", "toolCallId": "e3"},
         "response": {"toolCalls": [{"id": "s1", "name": "bash", "arguments": {"command": "sed -i 's/old/new/' g.txt"}}]}},
        {"match": {"userMessage": "tidy up", "toolCallId": "s1"}, "response": {"content": "tidied"}},
        {"match": {"userMessage": "what now"}, "response": {"content": "ok"}}
    ]);
    std::fs::write(dir.path().join("script.json"), json!({ "fixtures": fixtures }).to_string()).unwrap();
    (Aimock::start_with(dir.path()).await, dir)
}

/// `bridle run PROMPT` in `auto`, answering yes, continuing `session` when given.
async fn run(dirs: &Dirs, mock: &Aimock, prompt: &str, session: Option<&str>) -> (Vec<Value>, String) {
    super::effects::run_in(dirs, mock, prompt, "auto", "approve", session).await
}

/// `bridle sessions review ARGS... --json`: the exit code and the review (or the stderr).
async fn review(dirs: &Dirs, args: &[&str]) -> (Option<i32>, Value) {
    let mut all = vec!["sessions", "review"];
    all.extend(args);
    all.push("--json");
    let out = bridle(dirs, &all).await;
    let answer = serde_json::from_str(stdout(&out).trim()).unwrap_or_else(|_| json!({"stderr": stderr(&out)}));
    (out.status.code(), answer)
}

fn ids(review: &Value) -> Vec<String> {
    review["hunks"].as_array().unwrap().iter().map(|h| h["id"].as_str().unwrap().to_string()).collect()
}

fn states(review: &Value) -> Vec<String> {
    review["hunks"].as_array().unwrap().iter().map(|h| h["state"].as_str().unwrap().to_string()).collect()
}

#[tokio::test]
async fn a_turn_is_reviewed_hunk_by_hunk_around_the_users_edits_and_the_model_is_told() {
    let dirs = Dirs::new();
    let ws = &dirs.workspace;
    // The user's edit before the turn is part of the content before it.
    let before = source().replace("eighteen = 18\n", "eighteen = 180\n");
    std::fs::write(ws.join("f.py"), &before).unwrap();
    std::fs::write(ws.join("g.txt"), "keep\nold line\nkeep too\n").unwrap();
    let (mock, _f) = model().await;
    let (_, session) = run(&dirs, &mock, "tidy up", None).await;
    assert_eq!(std::fs::read_to_string(ws.join("g.txt")).unwrap(), "keep\nnew line\nkeep too\n", "the sed landed");
    // The user's edit after the turn is never the agent's.
    let after_turn = std::fs::read_to_string(ws.join("f.py")).unwrap();
    std::fs::write(ws.join("f.py"), after_turn.replace("twenty = 20\n", "twenty = 200\n")).unwrap();

    let (code, listed) = review(&dirs, &[&session]).await;
    assert_eq!(code, Some(0), "{listed}");
    let hunks = listed["hunks"].as_array().unwrap();
    let shape: Vec<(String, u64, String, String)> = hunks
        .iter()
        .map(|h| {
            (
                h["path"].as_str().unwrap().to_string(),
                h["range"]["start"].as_u64().unwrap(),
                h["call"]["tool"].as_str().unwrap().to_string(),
                h["newText"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let expected = [
        ("f.py", 3, "edit_file", "three = 33\n"),
        ("f.py", 9, "edit_file", "nine = 99\n"),
        ("f.py", 15, "edit_file", "fifteen = 1515\n"),
        ("g.txt", 2, "bash", "new line\n"),
    ];
    let expected: Vec<(String, u64, String, String)> =
        expected.iter().map(|(p, s, t, n)| (p.to_string(), *s, t.to_string(), n.to_string())).collect();
    assert_eq!(shape, expected);
    assert_eq!(states(&listed), ["pending"; 4]);
    assert_eq!(hunks[3]["call"]["command"], "sed -i 's/old/new/' g.txt");
    let h = ids(&listed);

    // Reject the second hunk of f.py: the content before with hunks 1 and 3 and both user edits.
    let (code, after) = review(&dirs, &[&session, "--reject", &h[1]]).await;
    assert_eq!(code, Some(0), "{after}");
    let expected_f = before
        .replace("three = 3\n", "three = 33\n")
        .replace("fifteen = 15\n", "fifteen = 1515\n")
        .replace("twenty = 20\n", "twenty = 200\n");
    assert_eq!(std::fs::read(ws.join("f.py")).unwrap(), expected_f.as_bytes());
    // Reject the sed's hunk: g.txt as it was.
    let (code, _) = review(&dirs, &[&session, "--reject", &h[3]]).await;
    assert_eq!(code, Some(0));
    assert_eq!(std::fs::read(ws.join("g.txt")).unwrap(), b"keep\nold line\nkeep too\n");
    let (code, after) = review(&dirs, &[&session, "--keep", &h[0], &h[2]]).await;
    assert_eq!(code, Some(0), "{after}");
    assert_eq!(ids(&after), h, "the same ids every time");
    assert_eq!(states(&after), ["kept", "rejected", "kept", "rejected"]);
    assert_eq!(after["decided"], 4);

    // The audit has the four decisions, each with the file, range, hash and who.
    let out = bridle(&dirs, &["audit", "--json", "--kind", "review", "--limit", "100"]).await;
    let rows = json_lines(&out);
    let decisions: Vec<(String, String)> = rows
        .iter()
        .map(|r| {
            (r["payload"]["path"].as_str().unwrap().to_string(), r["payload"]["decision"].as_str().unwrap().to_string())
        })
        .collect();
    let want = [("f.py", "reject"), ("g.txt", "reject"), ("f.py", "keep"), ("f.py", "keep")];
    assert_eq!(decisions, want.map(|(p, d)| (p.to_string(), d.to_string())));
    assert!(rows
        .iter()
        .all(|r| r["payload"]["who"] == "cli" && r["payload"]["hash"].as_str().unwrap().starts_with("sha256:")));
    assert_eq!(rows[0]["payload"]["range"], json!({"start": 9, "lines": 1}));

    // A hunk the user changed since: its reject fails, naming the file and line, and changes nothing.
    let mine = expected_f.replace("fifteen = 1515\n", "fifteen = 0\n");
    std::fs::write(ws.join("f.py"), &mine).unwrap();
    let (code, refused) = review(&dirs, &[&session, "--reject", &h[0], &h[2]]).await;
    assert_eq!(code, Some(1), "{refused}");
    let why = refused["stderr"].as_str().unwrap();
    assert!(why.contains("`f.py` line 15 changed since the turn") && why.contains("nothing was changed"), "{why}");
    assert_eq!(std::fs::read_to_string(ws.join("f.py")).unwrap(), mine);

    // The next model request holds one note naming both rejected hunks with their ranges.
    run(&dirs, &mock, "what now", Some(&session)).await;
    run(&dirs, &mock, "what now", Some(&session)).await;
    let journal = mock.journal().await;
    let notes: Vec<String> = journal
        .iter()
        .filter(|body| body.to_string().contains("what now"))
        .flat_map(|body| body["messages"].as_array().unwrap().clone())
        .filter_map(|m| m["content"].as_str().map(str::to_string))
        .filter(|c| c.starts_with("[Bridle] The user reviewed your changes"))
        .collect();
    // Both requests carry the history: the one note, told once, is in each.
    assert_eq!(notes.len(), 2, "{notes:?}");
    assert_eq!(notes[0], notes[1]);
    assert!(notes[0].contains("- f.py: line 9 (as your turn left the file), made by edit_file"), "{}", notes[0]);
    assert!(notes[0].contains("nine = 99"), "{}", notes[0]);
    assert!(
        notes[0].contains("- g.txt: line 2 (as your turn left the file), made by bash (`sed -i 's/old/new/' g.txt`)"),
        "{}",
        notes[0]
    );

    // Undo the reject: the hunk comes back, the user's edits stay.
    let (code, after) = review(&dirs, &[&session, "--unreject", &h[1]]).await;
    assert_eq!(code, Some(0), "{after}");
    assert_eq!(std::fs::read_to_string(ws.join("f.py")).unwrap(), mine.replace("nine = 9\n", "nine = 99\n"));
    assert_eq!(states(&after), ["kept", "pending", "kept", "rejected"]);
}

#[tokio::test]
async fn created_files_are_removed_and_deleted_files_restored_and_ids_are_checked() {
    let dirs = Dirs::new();
    let ws = &dirs.workspace;
    std::fs::write(ws.join("old.txt"), "bye\n").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let fixtures = json!([
        {"match": {"userMessage": "swap", "hasToolResult": false},
         "response": {"toolCalls": [
            {"id": "w1", "name": "write_file", "arguments": {"path": "new.txt", "content": "hello\n"}},
            {"id": "d1", "name": "bash", "arguments": {"command": "rm old.txt"}}
         ]}},
        {"match": {"userMessage": "swap", "hasToolResult": true}, "response": {"content": "swapped"}}
    ]);
    std::fs::write(dir.path().join("script.json"), json!({ "fixtures": fixtures }).to_string()).unwrap();
    let mock = Aimock::start_with(dir.path()).await;
    let (events, session) = run(&dirs, &mock, "swap", None).await;
    let turn = events.iter().find(|e| e["type"] == "turnStarted").unwrap()["turnId"].as_str().unwrap().to_string();
    assert!(ws.join("new.txt").exists() && !ws.join("old.txt").exists());

    let (code, listed) = review(&dirs, &[&session, "--turn", &turn]).await;
    assert_eq!(code, Some(0), "{listed}");
    let kinds: Vec<(&str, &str)> = listed["hunks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| (h["path"].as_str().unwrap(), h["kind"].as_str().unwrap()))
        .collect();
    assert_eq!(kinds, [("new.txt", "created"), ("old.txt", "deleted")]);
    let h = ids(&listed);
    let (code, after) = review(&dirs, &[&session, "--reject", &h[0], &h[1]]).await;
    assert_eq!(code, Some(0), "{after}");
    assert!(!ws.join("new.txt").exists(), "the created file is removed");
    assert_eq!(std::fs::read(ws.join("old.txt")).unwrap(), b"bye\n", "the deleted file is back");
    let (code, _) = review(&dirs, &[&session, "--unreject", &h[0]]).await;
    assert_eq!(code, Some(0));
    assert_eq!(std::fs::read(ws.join("new.txt")).unwrap(), b"hello\n");

    // The plain listing names each hunk with its call; an unknown id is an error, exit 1.
    let out = bridle(&dirs, &["sessions", "review", &session]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains(&format!("{}  new.txt:1+1  pending  write_file", h[0])), "{text}");
    assert!(text.contains("old.txt:1+0  rejected  bash `rm old.txt`"), "{text}");
    let out = bridle(&dirs, &["sessions", "review", &session, "--keep", "999999"]).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("no hunk `999999`"), "{}", stderr(&out));
}
