//! Skills and slash commands (DESIGN §13.1, issue 42) through `bridle run` as a user meets them:
//! a workspace with two skills and a malformed one, a skill of the user's own in their home, a
//! real aimock whose journal shows what the model was sent.

use serde_json::{json, Value};

use super::aimock::Aimock;
use super::bridle::*;

fn write(path: &std::path::Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn skill_md(name: &str, description: &str, body: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n---\n{body}\n")
}

/// The workspace and home of the test: `alpha` (with a script) and `beta` in the
/// workspace, `broken` malformed, `mine` in the user's `~/.agents/skills/`.
struct World {
    dirs: Dirs,
    home: tempfile::TempDir,
    mock: Aimock,
    _fixtures: tempfile::TempDir,
}

impl World {
    async fn new(fixtures: Vec<Value>, config: &str) -> World {
        let dirs = Dirs::new();
        let home = tempfile::tempdir().unwrap();
        let ws = &dirs.workspace;
        write(
            &ws.join(".agents/skills/alpha/SKILL.md"),
            &skill_md("alpha", "Greets in the alpha way.", "ALPHA-BODY: run scripts/hello.sh and report what it says."),
        );
        write(&ws.join(".agents/skills/alpha/scripts/hello.sh"), "echo hello from alpha\n");
        write(&ws.join(".claude/skills/beta/SKILL.md"), &skill_md("beta", "Counts beta particles.", "BETA-BODY"));
        write(&ws.join(".agents/skills/broken/SKILL.md"), "---\nname: broken\n---\nno description\n");
        write(
            &home.path().join(".agents/skills/mine/SKILL.md"),
            &skill_md("mine", "The user's own skill.", "MINE-BODY"),
        );
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("f.json"), json!({ "fixtures": fixtures }).to_string()).unwrap();
        let mock = Aimock::start_with(dir.path()).await;
        std::fs::create_dir_all(&dirs.data).unwrap();
        let provider =
            format!("[provider]\nkind = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"mock-model\"\n", mock.url);
        std::fs::write(dirs.data.join("config.toml"), format!("{config}\n{provider}")).unwrap();
        World { dirs, home, mock, _fixtures: dir }
    }

    async fn bridle(&self, args: &[&str]) -> std::process::Output {
        let home = self.home.path().display().to_string();
        bridle_with_env(&self.dirs.data, &self.dirs.workspace, args, &[("HOME", &home)]).await
    }

    /// The system message of the latest request whose last user message contains `prompt`.
    async fn system_for(&self, prompt: &str) -> String {
        let journal = self.mock.journal().await;
        let body = journal.iter().rev().find(|b| last_user(b).contains(prompt)).expect("a request for the prompt");
        body["messages"][0]["content"].as_str().unwrap().to_string()
    }
}

fn last_user(body: &Value) -> String {
    let messages = body["messages"].as_array().unwrap();
    messages.iter().rev().find(|m| m["role"] == "user").and_then(|m| m["content"].as_str()).unwrap_or("").to_string()
}

fn reply(prompt: &str, content: &str) -> Value {
    json!({"match": {"userMessage": prompt}, "response": {"content": content}})
}

fn calls(prompt: &str, id: &str, name: &str, args: Value) -> Value {
    json!({"match": {"userMessage": prompt, "hasToolResult": false},
           "response": {"toolCalls": [{"id": id, "name": name, "arguments": args}]}})
}

fn after(call: &str, id: &str, name: &str, args: Value) -> Value {
    json!({"match": {"toolCallId": call}, "response": {"toolCalls": [{"id": id, "name": name, "arguments": args}]}})
}

fn done_after(call: &str, content: &str) -> Value {
    json!({"match": {"toolCallId": call}, "response": {"content": content}})
}

#[tokio::test]
async fn workspace_skills_are_offered_only_once_trusted_load_on_demand_and_run_in_the_sandbox() {
    let fixtures = vec![
        calls("use alpha", "c1", "skill", json!({"name": "alpha"})),
        after("c1", "c2", "bash", json!({"command": "sh .agents/skills/alpha/scripts/hello.sh"})),
        done_after("c2", "Alpha said hello."),
        reply("hello", "Hi."),
    ];
    let w = World::new(fixtures, "mode = \"auto\"").await;

    // Before trust: only the user's own skill is in the catalog.
    let out = w.bridle(&["run", "hello before", "--json"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let system = w.system_for("hello before").await;
    assert!(system.contains("- mine: The user's own skill."), "{system}");
    for absent in ["alpha", "beta", "broken", "MINE-BODY"] {
        assert!(!system.contains(absent), "{absent} is in the catalog before trust:\n{system}");
    }

    let trust = w.bridle(&["skills", "trust"]).await;
    assert_eq!(trust.status.code(), Some(0), "{}", stderr(&trust));
    assert!(stdout(&trust).contains("trusted 2 workspace skill(s): alpha, beta"), "{}", stdout(&trust));

    // After trust: names and descriptions, no bodies; the model loads alpha and runs its script.
    let out = w.bridle(&["run", "use alpha", "--json"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let system = w.system_for("use alpha").await;
    for expected in
        ["- alpha: Greets in the alpha way.", "- beta: Counts beta particles.", "- mine: The user's own skill."]
    {
        assert!(system.contains(expected), "{expected:?} is not in the catalog:\n{system}");
    }
    for absent in ["ALPHA-BODY", "BETA-BODY", "broken"] {
        assert!(!system.contains(absent), "{absent} is in the system prompt:\n{system}");
    }
    let events = json_lines(&out);
    let ends: Vec<&Value> = events.iter().filter(|e| e["type"] == "toolCallEnd").collect();
    assert_eq!(ends.len(), 2, "{events:?}");
    let loaded = &ends[0]["result"];
    assert!(loaded["output"].as_str().unwrap().contains("ALPHA-BODY"), "{loaded}");
    assert_eq!(loaded["details"]["type"], "skill", "{loaded}");
    assert_eq!(loaded["details"]["resources"], json!([".agents/skills/alpha/scripts/hello.sh"]), "{loaded}");
    let ran = &ends[1]["result"];
    assert!(ran["output"].as_str().unwrap().contains("hello from alpha"), "{ran}");
    assert_ne!(ran["details"]["sandbox"], "none", "the script ran in the sandbox: {ran}");
    assert_eq!(ends[1]["status"], "ok", "{ran}");

    // The load is on the record: kind `skill`, with its name, source folder and hash.
    let audit = w.bridle(&["audit", "--kind", "skill", "--json"]).await;
    let rows: Vec<Value> = stdout(&audit).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(rows.len(), 1, "{}", stdout(&audit));
    let payload = &rows[0]["payload"];
    assert_eq!(payload["name"], "alpha");
    assert_eq!(payload["source"], "workspace");
    assert_eq!(payload["hash"].as_str().unwrap().len(), 64, "{payload}");
    assert!(payload["folder"].as_str().unwrap().ends_with(".agents/skills/alpha"), "{payload}");

    // A hand edit of a trusted SKILL.md takes it out of the next catalog.
    write(
        &w.dirs.workspace.join(".claude/skills/beta/SKILL.md"),
        &skill_md("beta", "Counts beta particles, edited.", "BETA-BODY"),
    );
    let out = w.bridle(&["run", "hello after edit", "--json"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let system = w.system_for("hello after edit").await;
    assert!(system.contains("- alpha: Greets in the alpha way."), "{system}");
    assert!(!system.contains("beta"), "{system}");

    // `bridle skills list` names each with its source and trust, the malformed one with its error.
    let list = w.bridle(&["skills", "list", "--json"]).await;
    assert_eq!(list.status.code(), Some(0), "{}", stderr(&list));
    let listed: Value = serde_json::from_str(&stdout(&list)).unwrap();
    let by_name = |name: &str| listed["skills"].as_array().unwrap().iter().find(|s| s["name"] == name).unwrap().clone();
    assert_eq!(by_name("alpha")["trusted"], true);
    assert_eq!(by_name("beta")["trusted"], false, "changed since it was trusted");
    assert_eq!(by_name("mine")["source"], "user");
    assert_eq!(by_name("mine")["trusted"], true);
    let broken = by_name("broken");
    assert_eq!(broken["trusted"], false);
    assert!(broken["error"].as_str().unwrap().contains("no `description`"), "{broken}");
}

#[tokio::test]
async fn a_users_slash_command_loads_the_skill_and_allowed_tools_narrow_the_turn() {
    let fixtures = vec![
        // `/mine tidy up` reaches the model with the skill's body after what the user typed.
        reply("/mine tidy up", "Tidied."),
        // A skill that allows only `read_file`: a later `bash` of its turn is refused.
        calls("use narrow", "n1", "skill", json!({"name": "narrow"})),
        after("n1", "n2", "bash", json!({"command": "echo should-not-run"})),
        done_after("n2", "Stopped."),
    ];
    let w = World::new(fixtures, "mode = \"auto\"").await;
    write(
        &w.home.path().join(".config/bridle/skills/narrow/SKILL.md"),
        "---\nname: narrow\ndescription: Reads only.\nallowed-tools: Read\n---\nNARROW-BODY\n",
    );
    let out = w.bridle(&["run", "/mine tidy up", "--json"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let journal = w.mock.journal().await;
    let user = last_user(&journal[0]);
    assert!(user.starts_with("/mine tidy up") && user.contains("MINE-BODY"), "{user}");
    let audit = w.bridle(&["audit", "--kind", "skill", "--json"]).await;
    let row: Value = serde_json::from_str(stdout(&audit).lines().next().unwrap()).unwrap();
    assert_eq!((row["payload"]["name"].as_str(), row["status"].as_str()), (Some("mine"), Some("user")), "{row}");

    let out = w.bridle(&["run", "use narrow", "--json"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let events = json_lines(&out);
    let ends: Vec<&Value> = events.iter().filter(|e| e["type"] == "toolCallEnd").collect();
    assert_eq!(ends.len(), 2, "{events:?}");
    let refused = ends[1]["result"]["output"].as_str().unwrap();
    assert!(refused.contains("the skill `narrow` is active"), "{refused}");
    assert!(!refused.contains("should-not-run\n"), "{refused}");
    // The request after the load offered only the skill's tools (and `skill`).
    let journal = w.mock.journal().await;
    let after_load = journal.iter().find(|b| b.to_string().contains("NARROW-BODY")).unwrap();
    let tools: Vec<&str> =
        after_load["tools"].as_array().unwrap().iter().map(|t| t["function"]["name"].as_str().unwrap()).collect();
    assert_eq!(tools, vec!["read_file", "skill"]);
}

#[tokio::test]
async fn slash_compact_keeps_a_loaded_skill_and_slash_mode_switches() {
    let mut fixtures = vec![
        json!({"match": {"systemMessage": "You compact a coding agent's conversation"},
               "response": {"content": "Summary: the user had a skill loaded and said hello."}}),
        calls("load mine", "m1", "skill", json!({"name": "mine"})),
        done_after("m1", "Loaded."),
    ];
    for n in 0..3 {
        fixtures.push(reply(&format!("hello {n}"), "Hi."));
    }
    let config = "mode = \"auto\"\n[compaction]\nkeep_user_messages = 1";
    let w = World::new(fixtures, config).await;
    let config_file = w.dirs.data.join("config.toml");
    let text = std::fs::read_to_string(&config_file)
        .unwrap()
        .replace("model = \"mock-model\"", "model = \"mock-model\"\ncontext_window = 200000");
    std::fs::write(&config_file, text).unwrap();

    let out = w.bridle(&["run", "load mine", "--json"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let session = json_lines(&out)[0]["sessionId"].as_str().unwrap().to_string();
    for n in 0..2 {
        let out = w.bridle(&["run", &format!("hello {n}"), "--json", "--session", &session]).await;
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
    let out = w.bridle(&["run", "/compact", "--json", "--session", &session]).await;
    assert_eq!(out.status.code(), Some(0), "{}\n{}", stdout(&out), stderr(&out));
    let events = json_lines(&out);
    assert!(events.iter().any(|e| e["type"] == "compacted"), "{events:?}");
    let done = events.iter().find(|e| e["type"] == "commandDone").unwrap();
    assert_eq!((done["command"].as_str(), done["ok"].as_bool()), (Some("/compact"), Some(true)), "{done}");

    // The next request no longer holds the load's result, but the skill's body is there.
    let out = w.bridle(&["run", "hello 2", "--json", "--session", &session]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let journal = w.mock.journal().await;
    let last = journal.last().unwrap();
    let history: Vec<&Value> = last["messages"].as_array().unwrap().iter().skip(1).collect();
    assert!(!Value::from(history.into_iter().cloned().collect::<Vec<_>>()).to_string().contains("MINE-BODY"));
    let system = last["messages"][0]["content"].as_str().unwrap();
    assert!(system.contains("Summary: the user had a skill loaded"), "{system}");
    assert!(system.contains("# Skills loaded in this session") && system.contains("MINE-BODY"), "{system}");

    // `/mode plan` switches the mode without a turn.
    let out = w.bridle(&["run", "/mode plan", "--json", "--session", &session]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let events = json_lines(&out);
    assert!(events.iter().any(|e| e["type"] == "modeChanged" && e["mode"] == "plan"), "{events:?}");
    assert!(!events.iter().any(|e| e["type"] == "turnStarted"), "{events:?}");
}

#[tokio::test]
async fn writing_a_skill_file_asks_even_in_auto() {
    let dirs = Dirs::new();
    let args = json!({"path": ".agents/skills/x/SKILL.md", "content": "---\nname: x\ndescription: d\n---\n"});
    let out = bridle(&dirs, &["tool", "write_file", "--args", &args.to_string(), "--mode", "auto"]).await;
    assert_eq!(out.status.code(), Some(3), "{}", stdout(&out));
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(report["decision"], "ask");
    assert_eq!(report["findings"][0]["guardian"], "config", "{report}");
    assert!(!dirs.workspace.join(".agents/skills/x/SKILL.md").exists());
}

#[tokio::test]
async fn acp_advertises_the_commands_and_a_slash_name_in_a_prompt_loads_the_skill() {
    let dirs = Dirs::new();
    // acpx runs with HOME at the test's root: the user's own skill lives there.
    let home = dirs.data.parent().unwrap().to_path_buf();
    write(&home.join(".agents/skills/mine/SKILL.md"), &skill_md("mine", "The user's own skill.", "MINE-BODY"));
    let fixtures_dir = tempfile::tempdir().unwrap();
    let fixtures = json!({"fixtures": [reply("/mine tidy up", "Tidied by the skill.")]});
    std::fs::write(fixtures_dir.path().join("f.json"), fixtures.to_string()).unwrap();
    let mock = Aimock::start_with(fixtures_dir.path()).await;
    std::fs::create_dir_all(&dirs.data).unwrap();
    let config =
        format!("mode = \"auto\"\n[provider]\nkind = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"m\"\n", mock.url);
    std::fs::write(dirs.data.join("config.toml"), config).unwrap();

    let messages = super::acp::acpx(&dirs, "--approve-all", "/mine tidy up").await;
    let advertised = super::acp::updates(&messages, "available_commands_update");
    assert_eq!(advertised.len(), 1, "{messages:?}");
    let names: Vec<&str> =
        advertised[0]["availableCommands"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(names, vec!["compact", "undo", "mode", "model", "skills", "help", "mine"]);
    let mode = advertised[0]["availableCommands"].as_array().unwrap().iter().find(|c| c["name"] == "mode").unwrap();
    assert!(mode["input"]["hint"].as_str().unwrap().contains("plan"), "{mode}");
    let text: String = super::acp::updates(&messages, "agent_message_chunk")
        .iter()
        .filter_map(|u| u["content"]["text"].as_str())
        .collect();
    assert_eq!(text, "Tidied by the skill.");
    let journal = mock.journal().await;
    assert!(last_user(&journal[0]).contains("MINE-BODY"), "{}", journal[0]);
    let audit = bridle(&dirs, &["audit", "--kind", "skill", "--json"]).await;
    let row: Value = serde_json::from_str(stdout(&audit).lines().next().unwrap()).unwrap();
    assert_eq!(row["payload"]["name"], "mine", "{row}");
}
