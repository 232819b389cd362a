//! A session that outgrows its window keeps going: a scripted aimock session of many turns, each
//! reading a big file, in a window of 8,000 tokens, through `bridle run --session` as a user
//! would drive it. Every request aimock received stays under the window, the latest user
//! message arrives word for word, no turn fails; the originals stay in the store, marked.

use serde_json::{json, Value};

use super::aimock::Aimock;
use super::bridle::*;

const WINDOW: usize = 8_000;
const TURNS: usize = 10;

/// The token count this suite holds a request to: its JSON body at four characters a token.
fn tokens(body: &Value) -> usize {
    body.to_string().len() / 4
}

fn last_user_text(body: &Value) -> Option<String> {
    body["messages"]
        .as_array()?
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str().map(String::from))
}

async fn long_model() -> (Aimock, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    // The summary request first: its transcript quotes the turns' messages.
    let mut fixtures = vec![json!({
        "match": {"systemMessage": "You compact a coding agent's conversation"},
        "response": {"content": "Summary: the user asked for a series of files to be read; each was read and reported."}
    })];
    for turn in 0..TURNS {
        fixtures.push(json!({
            "match": {"userMessage": format!("turn {turn}:"), "hasToolResult": false},
            "response": {"toolCalls": [{"id": format!("read{turn}"), "name": "read_file", "arguments": {"path": format!("big{turn}.txt")}}]}
        }));
        fixtures.push(json!({
            "match": {"userMessage": format!("turn {turn}:"), "hasToolResult": true},
            "response": {"content": format!("I read big{turn}.txt.")}
        }));
    }
    std::fs::write(dir.path().join("long.json"), json!({ "fixtures": fixtures }).to_string()).unwrap();
    (Aimock::start_with(dir.path()).await, dir)
}

fn write_config(dirs: &Dirs, mock: &Aimock) {
    std::fs::create_dir_all(&dirs.data).unwrap();
    let config = format!(
        "mode = \"auto\"\n[provider]\nkind = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"mock-model\"\ncontext_window = {WINDOW}\n[compaction]\nat = 0.8\n",
        mock.url
    );
    std::fs::write(dirs.data.join("config.toml"), config).unwrap();
}

#[tokio::test]
async fn a_session_past_its_window_compacts_and_every_request_fits() {
    let (mock, _f) = long_model().await;
    let dirs = Dirs::new();
    write_config(&dirs, &mock);
    for turn in 0..TURNS {
        // About 1,500 tokens of file per turn.
        let line = format!("line of file {turn} with some words to read and remember later\n");
        std::fs::write(dirs.workspace.join(format!("big{turn}.txt")), line.repeat(6_000 / line.len() + 1)).unwrap();
    }
    let mut session: Option<String> = None;
    let mut compactions = 0;
    for turn in 0..TURNS {
        let prompt = format!("turn {turn}: read big{turn}.txt and tell me about it");
        let mut args = vec!["run", prompt.as_str(), "--json"];
        if let Some(id) = &session {
            args.extend(["--session", id.as_str()]);
        }
        let out = bridle(&dirs, &args).await;
        assert_eq!(out.status.code(), Some(0), "turn {turn}: {}", stderr(&out));
        let events = json_lines(&out);
        assert!(events.iter().any(|e| e["type"] == "turnCompleted"), "turn {turn} did not complete: {events:?}");
        compactions += events.iter().filter(|e| e["type"] == "compacted").count();
        session.get_or_insert_with(|| events[0]["sessionId"].as_str().unwrap().to_string());
    }
    let session = session.unwrap();

    let journal = mock.journal().await;
    let summaries = journal.iter().filter(|b| b.to_string().contains("You compact a coding agent")).count();
    let largest = journal.iter().map(tokens).max().unwrap();
    println!(
        "long session: {} requests ({summaries} summaries), largest {largest} tokens of {WINDOW}, {compactions} compactions",
        journal.len()
    );
    assert!(compactions >= 2, "the threshold was crossed only {compactions} times");
    assert!(summaries >= 1, "the model was never asked for a summary");
    for (i, body) in journal.iter().enumerate() {
        assert!(tokens(body) < WINDOW, "request {i} has {} tokens", tokens(body));
        let Some(text) = last_user_text(body) else { continue };
        if !body.to_string().contains("You compact a coding agent") {
            let turn: usize = text.trim_start_matches("turn ").split(':').next().unwrap().parse().unwrap();
            assert_eq!(text, format!("turn {turn}: read big{turn}.txt and tell me about it"), "request {i}");
        }
    }

    // The originals are all still there, marked; the audit has the compactions.
    let shown = bridle(&dirs, &["sessions", "show", &session, "--json"]).await;
    assert_eq!(shown.status.code(), Some(0), "{}", stderr(&shown));
    let snapshot: Value = serde_json::from_str(stdout(&shown).trim()).unwrap();
    let items = snapshot["items"].as_array().unwrap();
    assert_eq!(items.iter().filter(|i| i["item"]["type"] == "user").count(), TURNS, "every user message is kept");
    assert!(items.iter().any(|i| i["compacted"] == "summarized"));
    assert!(items.last().unwrap()["compacted"].is_null(), "the latest items are not compacted");
    assert!(snapshot["summary"].as_str().unwrap().starts_with("Summary:"));
    assert!(snapshot["usage"]["inputTokens"].as_u64().unwrap() > 0, "{}", snapshot["usage"]);
    let audit = bridle(&dirs, &["audit", "--kind", "compaction", "--json"]).await;
    assert_eq!(stdout(&audit).lines().count(), compactions, "{}", stdout(&audit));
}

#[tokio::test]
async fn sessions_compact_compacts_now_and_says_how_much() {
    let (mock, _f) = long_model().await;
    let dirs = Dirs::new();
    write_config(&dirs, &mock);
    let mut session: Option<String> = None;
    for turn in 0..3 {
        std::fs::write(dirs.workspace.join(format!("big{turn}.txt")), "small file\n".repeat(100)).unwrap();
        let prompt = format!("turn {turn}: read big{turn}.txt and tell me about it");
        let mut args = vec!["run", prompt.as_str(), "--json"];
        if let Some(id) = &session {
            args.extend(["--session", id.as_str()]);
        }
        let out = bridle(&dirs, &args).await;
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert!(!json_lines(&out).iter().any(|e| e["type"] == "compacted"), "far below the threshold");
        session.get_or_insert_with(|| json_lines(&out)[0]["sessionId"].as_str().unwrap().to_string());
    }
    let session = session.unwrap();
    let out = bridle(&dirs, &["sessions", "compact", &session]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(report["summarized"], true, "{report}");
    assert!(report["tokensAfter"].as_u64().unwrap() < report["tokensBefore"].as_u64().unwrap(), "{report}");
    let snapshot: Value =
        serde_json::from_str(stdout(&bridle(&dirs, &["sessions", "show", &session, "--json"]).await).trim()).unwrap();
    let marked: Vec<&Value> =
        snapshot["items"].as_array().unwrap().iter().filter(|i| i["compacted"] == "summarized").collect();
    assert!(!marked.is_empty());
    // The next turn goes on from the compacted view: the summary is in its system prompt.
    std::fs::write(dirs.workspace.join("big3.txt"), "x\n").unwrap();
    let prompt = "turn 3: read big3.txt and tell me about it";
    let out = bridle(&dirs, &["run", prompt, "--json", "--session", &session]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let journal = mock.journal().await;
    let last = journal.last().unwrap();
    assert!(last["messages"][0]["content"].as_str().unwrap().contains("Summary: the user asked"), "{last}");
}
