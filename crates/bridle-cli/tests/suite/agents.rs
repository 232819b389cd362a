//! Subagents (DESIGN §16.1) through real `bridle` processes against aimock: a parent turn that
//! hands work to two children and collects both answers, their edits in the parent's undo and
//! their rows carrying the parent's ids; a child's question in the one inbox, answered from
//! another process; a question that expires, said as such; the limits refused at once; a role
//! that narrows; an interrupt that ends the children and what they run.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::aimock::Aimock;
use super::bridle::*;
use super::desk::{listed, pending, run_args_asking as run_args, spawn};

/// aimock playing every model of the test: `fixtures` in order (the first match wins).
async fn model(fixtures: Vec<Value>) -> (Aimock, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("script.json"), json!({ "fixtures": fixtures }).to_string()).unwrap();
    (Aimock::start_with(dir.path()).await, dir)
}

fn call(id: &str, name: &str, arguments: Value) -> Value {
    json!({"id": id, "name": name, "arguments": arguments})
}

/// A parent answering `prompt` with `spawns`, then (after the result of `last`) waiting for
/// every child, then saying `text`.
fn waiting_parent(prompt: &str, spawns: Vec<Value>, last: &str, text: &str) -> Vec<Value> {
    vec![
        json!({"match": {"userMessage": prompt, "toolCallId": "w1"}, "response": {"content": text}}),
        json!({"match": {"userMessage": prompt, "toolCallId": last},
            "response": {"toolCalls": [call("w1", "wait_agent", json!({"timeout_secs": 120}))]}}),
        json!({"match": {"userMessage": prompt, "hasToolResult": false}, "response": {"toolCalls": spawns}}),
    ]
}

/// A model answering `prompt` with `calls`, then, after the tool result of `last`, with `text`.
fn script(prompt: &str, calls: Vec<Value>, last: &str, text: &str) -> Vec<Value> {
    vec![
        json!({"match": {"userMessage": prompt, "toolCallId": last}, "response": {"content": text}}),
        json!({"match": {"userMessage": prompt, "hasToolResult": false}, "response": {"toolCalls": calls}}),
    ]
}

fn dirs_with(config: &str) -> Dirs {
    let dirs = Dirs::new();
    std::fs::create_dir_all(&dirs.data).unwrap();
    std::fs::write(dirs.data.join("config.toml"), config).unwrap();
    dirs
}

/// The parent's session id: the one its `turnStarted` names first.
fn parent_of(events: &[Value]) -> String {
    events.iter().find(|e| e["type"] == "turnStarted").unwrap()["sessionId"].as_str().unwrap().to_string()
}

/// The last state of each child, from the parent's `agentUpdated` events, by task.
fn agents_by_task(events: &[Value]) -> std::collections::BTreeMap<String, Value> {
    events
        .iter()
        .filter(|e| e["type"] == "agentUpdated")
        .map(|e| (e["agent"]["task"].as_str().unwrap().to_string(), e["agent"].clone()))
        .collect()
}

/// The output of the parent's call of `tool`.
fn result_of(events: &[Value], parent: &str, tool: &str) -> Value {
    let call = events
        .iter()
        .find(|e| e["type"] == "toolCallBegin" && e["sessionId"] == parent && e["call"]["name"] == tool)
        .unwrap_or_else(|| panic!("the parent never called {tool}"));
    let id = &call["call"]["id"];
    events
        .iter()
        .find(|e| e["type"] == "toolCallEnd" && e["result"]["toolCallId"] == *id)
        .unwrap_or_else(|| panic!("{tool} never ended"))["result"]
        .clone()
}

#[tokio::test]
async fn a_parent_hands_work_to_two_children_and_collects_both_answers() {
    let spawns = vec![
        call("s1", "spawn_agent", json!({"task": "Summarise notes.txt for me"})),
        call("s2", "spawn_agent", json!({"task": "Rewrite target.txt to say new"})),
    ];
    let mut fixtures = waiting_parent("delegate the work", spawns, "s2", "both agents are done");
    fixtures.extend(script(
        "Summarise notes.txt",
        vec![call("r1", "read_file", json!({"path": "notes.txt"}))],
        "r1",
        "The notes say alpha beta gamma.",
    ));
    fixtures.extend(script(
        "Rewrite target.txt",
        vec![call("e1", "write_file", json!({"path": "target.txt", "content": "new\n"}))],
        "e1",
        "target.txt now says new.",
    ));
    let (mock, _f) = model(fixtures).await;
    let dirs = dirs_with("");
    std::fs::write(dirs.workspace.join("notes.txt"), "alpha beta gamma\n").unwrap();
    std::fs::write(dirs.workspace.join("target.txt"), "old\n").unwrap();
    let base = format!("{}/v1", mock.url);

    let out = bridle(&dirs, &run_args("delegate the work", "auto", "deny", &base)).await;
    assert_eq!(out.status.code(), Some(0), "{}\n{}", stderr(&out), stdout(&out));
    let events = json_lines(&out);
    let parent = parent_of(&events);
    assert_eq!(std::fs::read_to_string(dirs.workspace.join("target.txt")).unwrap(), "new\n");

    // Both children were followed in the parent's stream, each under its own id.
    let agents = agents_by_task(&events);
    assert_eq!(agents.len(), 2, "{agents:?}");
    let ids: Vec<String> = agents.values().map(|a| a["id"].as_str().unwrap().to_string()).collect();
    for agent in agents.values() {
        assert_eq!(agent["state"], "idle", "{agent}");
        assert_eq!(agent["parentId"], parent.as_str());
        let id = agent["id"].as_str().unwrap();
        assert!(events.iter().any(|e| e["type"] == "turnCompleted" && e["sessionId"] == id), "{id}");
    }
    // The parent's wait returned both answers.
    let waited = result_of(&events, &parent, "wait_agent");
    let text = waited["output"].as_str().unwrap();
    assert!(text.contains("The notes say alpha beta gamma.") && text.contains("target.txt now says new."), "{text}");
    assert!(events.iter().any(|e| e["type"] == "turnCompleted" && e["sessionId"] == parent.as_str()));

    // Each child's rows carry the parent's session and the call that started it.
    for agent in agents.values() {
        let id = agent["id"].as_str().unwrap();
        let rows = json_lines(&bridle(&dirs, &["audit", "--session", id, "--kind", "tool_call", "--json"]).await);
        assert!(!rows.is_empty(), "no tool rows for {id}");
        for row in &rows {
            assert_eq!(row["payload"]["parent"]["sessionId"], parent.as_str(), "{row}");
            assert_eq!(row["payload"]["parent"]["callId"], agent["callId"], "{row}");
        }
    }
    let out = bridle(&dirs, &["audit", "verify"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));

    // The children's tokens count in the parent's totals.
    let sessions = listed(&dirs, &["sessions", "list", "--json"]).await;
    let total = |id: &str| sessions.iter().find(|s| s["id"] == id).unwrap()["totalTokens"].as_u64().unwrap();
    let children: u64 = ids.iter().map(|id| total(id)).sum();
    assert!(children > 0);
    assert!(total(&parent) > children, "parent {} vs children {children}", total(&parent));
    for id in &ids {
        let child = sessions.iter().find(|s| s["id"] == id.as_str()).unwrap();
        assert_eq!(child["agent"]["parentId"], parent.as_str(), "{child}");
    }

    // The parent's undo puts back what its child wrote.
    let out = bridle(&dirs, &["sessions", "undo", &parent]).await;
    assert_eq!(out.status.code(), Some(0), "{}\n{}", stderr(&out), stdout(&out));
    assert_eq!(std::fs::read_to_string(dirs.workspace.join("target.txt")).unwrap(), "old\n");
}

#[tokio::test]
async fn a_childs_question_is_in_the_inbox_with_its_label_and_an_answer_from_elsewhere_resumes_it() {
    let spawn_one = vec![call("s1", "spawn_agent", json!({"task": "Write hello.txt please"}))];
    let mut fixtures = waiting_parent("ask through a child", spawn_one, "s1", "the child is done");
    fixtures.extend(script(
        "Write hello.txt",
        vec![call("e1", "write_file", json!({"path": "hello.txt", "content": "hello\n"}))],
        "e1",
        "hello.txt is written.",
    ));
    let (mock, _f) = model(fixtures).await;
    let dirs = dirs_with("");
    let base = format!("{}/v1", mock.url);
    let run = spawn(&dirs, &run_args("ask through a child", "ask", "defer", &base));

    let requests = pending(&dirs, 1).await;
    let request = &requests[0];
    let label = request["agent"]["label"].as_str().unwrap_or_else(|| panic!("no agent label: {request}"));
    assert!(label.starts_with("agent "), "{label}");
    assert_eq!(request["agent"]["task"], "Write hello.txt please");
    let text = stdout(&bridle(&dirs, &["approvals", "list"]).await);
    assert!(text.contains(label) && text.contains(request["agent"]["parentId"].as_str().unwrap()), "{text}");
    assert!(!dirs.workspace.join("hello.txt").exists());
    // The child waits for a person: `needs-you`, like any session.
    let sessions = listed(&dirs, &["sessions", "list", "--json"]).await;
    let child = sessions.iter().find(|s| s["id"] == request["sessionId"]).unwrap();
    assert_eq!(child["state"], "needs-you", "{child}");

    let out = bridle(&dirs, &["approvals", "approve", request["id"].as_str().unwrap()]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let run =
        tokio::time::timeout(Duration::from_secs(60), run.wait_with_output()).await.expect("the run ended").unwrap();
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    assert_eq!(std::fs::read_to_string(dirs.workspace.join("hello.txt")).unwrap(), "hello\n");
    let events = json_lines(&run);
    let parent = parent_of(&events);
    let waited = result_of(&events, &parent, "wait_agent");
    assert!(waited["output"].as_str().unwrap().contains("hello.txt is written."), "{waited}");
}

#[tokio::test]
async fn a_childs_question_that_nobody_answers_expires_and_the_parent_hears_so() {
    let spawn_one = vec![call("s1", "spawn_agent", json!({"task": "Write late.txt please"}))];
    let mut fixtures = waiting_parent("let it expire", spawn_one, "s1", "noted");
    fixtures.extend(script(
        "Write late.txt",
        vec![call("e1", "write_file", json!({"path": "late.txt", "content": "late\n"}))],
        "e1",
        "I could not write late.txt.",
    ));
    let (mock, _f) = model(fixtures).await;
    let dirs = dirs_with("[limits]\napproval_timeout_secs = 2\n");
    let base = format!("{}/v1", mock.url);
    let out = bridle(&dirs, &run_args("let it expire", "ask", "defer", &base)).await;
    assert_eq!(out.status.code(), Some(0), "{}\n{}", stderr(&out), stdout(&out));
    let events = json_lines(&out);
    let parent = parent_of(&events);
    assert!(!dirs.workspace.join("late.txt").exists());
    let waited = result_of(&events, &parent, "wait_agent");
    let text = waited["output"].as_str().unwrap();
    assert!(text.contains("expired unanswered") && text.contains("write_file"), "{text}");
    assert!(text.contains("no person denied it"), "{text}");
    let agent = &waited["details"]["agents"][0];
    assert_eq!(agent["expired"].as_array().unwrap().len(), 1, "{agent}");
    // The child's record says the clock answered, not a person.
    let child = agent["id"].as_str().unwrap();
    let rows =
        json_lines(&bridle(&dirs, &["audit", "--session", child, "--kind", "approval_resolved", "--json"]).await);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["source"], "timeout", "{}", rows[0]);
}

#[tokio::test]
async fn a_fifth_child_and_a_grandchild_are_refused_at_once() {
    let tasks = ["Job one", "Job two", "Job three", "Job four", "Job five"];
    let calls: Vec<Value> =
        tasks.iter().enumerate().map(|(i, t)| call(&format!("s{i}"), "spawn_agent", json!({"task": t}))).collect();
    let mut fixtures = waiting_parent("start five", calls, "s4", "started what I could");
    // Each child answers at once; the first also tries to start one of its own.
    fixtures.extend(script(
        "Job one",
        vec![call("g1", "spawn_agent", json!({"task": "Grandchild work"}))],
        "g1",
        "no luck",
    ));
    for task in &tasks[1..] {
        fixtures.push(json!({"match": {"userMessage": task}, "response": {"content": "done"}}));
    }
    let (mock, _f) = model(fixtures).await;
    let dirs = dirs_with("[agents]\nmax_children = 4\n");
    let base = format!("{}/v1", mock.url);
    let out = bridle(&dirs, &run_args("start five", "auto", "deny", &base)).await;
    assert_eq!(out.status.code(), Some(0), "{}\n{}", stderr(&out), stdout(&out));
    let events = json_lines(&out);
    let parent = parent_of(&events);
    let ends: Vec<&Value> = events
        .iter()
        .filter(|e| {
            e["type"] == "toolCallEnd"
                && e["sessionId"] == parent.as_str()
                && e["result"]["output"].as_str().is_some_and(|o| !o.starts_with("Agent "))
        })
        .collect();
    assert_eq!(ends.len(), 5, "the five spawns: {ends:?}");
    let refused: Vec<&&Value> = ends.iter().filter(|e| e["status"] == "error").collect();
    assert_eq!(refused.len(), 1, "{ends:?}");
    let why = refused[0]["result"]["output"].as_str().unwrap();
    assert!(why.contains("max_children = 4"), "{why}");
    assert_eq!(agents_by_task(&events).len(), 4);
    // The grandchild: the child is offered no agent tools, and its call says why.
    let nested = events
        .iter()
        .find(|e| {
            e["type"] == "toolCallEnd"
                && e["sessionId"] != parent.as_str()
                && e["result"]["output"].as_str().is_some_and(|o| o.contains("spawn_agent"))
        })
        .unwrap_or_else(|| panic!("no refused grandchild in {events:?}"));
    assert_eq!(nested["status"], "error", "{nested}");
    assert!(nested["result"]["output"].as_str().unwrap().contains("max_depth = 1"), "{nested}");
    let sessions = listed(&dirs, &["sessions", "list", "--json"]).await;
    assert_eq!(sessions.len(), 5, "a parent and four children: {sessions:?}");
}

#[tokio::test]
async fn a_role_narrows_the_tools_and_never_loosens_the_mode() {
    let spawn_one = vec![call("s1", "spawn_agent", json!({"task": "Look around as a reader", "role": "reader"}))];
    let mut fixtures = waiting_parent("use the reader", spawn_one, "s1", "the reader is done");
    fixtures.extend(script(
        "Look around as a reader",
        vec![
            call("b1", "bash", json!({"command": "touch made-by-reader.txt"})),
            call("w1", "write_file", json!({"path": "made-by-reader.txt", "content": "x"})),
        ],
        "w1",
        "I may not change anything.",
    ));
    let (mock, _f) = model(fixtures).await;
    // The role asks for `auto`; the parent runs in `ask`, and the child gets `ask`.
    let config = "[agents.roles.reader]\ninstructions = \"Only read.\"\ntools = [\"read_file\", \"write_file\"]\nmode = \"auto\"\n";
    let dirs = dirs_with(config);
    let base = format!("{}/v1", mock.url);
    let out = bridle(&dirs, &run_args("use the reader", "ask", "deny", &base)).await;
    assert_eq!(out.status.code(), Some(0), "{}\n{}", stderr(&out), stdout(&out));
    let events = json_lines(&out);
    let parent = parent_of(&events);
    let child = agents_by_task(&events)["Look around as a reader"]["id"].as_str().unwrap().to_string();
    let child_ends: Vec<&Value> =
        events.iter().filter(|e| e["type"] == "toolCallEnd" && e["sessionId"] == child.as_str()).collect();
    let bash = child_ends.iter().find(|e| e["result"]["output"].as_str().unwrap().contains("bash")).unwrap();
    assert_eq!(bash["status"], "error");
    assert!(bash["result"]["output"].as_str().unwrap().contains("the role `reader` allows only these"), "{bash}");
    // `write_file` is the role's, but the child is in `ask` like its parent: asked, and denied.
    let write = child_ends.iter().find(|e| e["result"]["toolCallId"] != bash["result"]["toolCallId"]).unwrap();
    assert_eq!(write["status"], "denied", "{write}");
    assert!(!dirs.workspace.join("made-by-reader.txt").exists());
    let rows = json_lines(&bridle(&dirs, &["audit", "--session", &child, "--kind", "session_started", "--json"]).await);
    assert_eq!(rows[0]["payload"]["mode"], "ask", "{}", rows[0]);
    assert_ne!(child, parent);
}

#[tokio::test]
async fn an_interrupt_ends_the_children_and_the_process_one_started() {
    let marker = format!("bridle-agent-marker-{}", std::process::id());
    let mut fixtures = vec![json!({"match": {"userMessage": "run two long jobs", "toolCallId": "s2"},
        "response": {"toolCalls": [call("w1", "wait_agent", json!({"timeout_secs": 600}))]}})];
    fixtures.extend(script(
        "run two long jobs",
        vec![
            call("s1", "spawn_agent", json!({"task": "Start the server job"})),
            call("s2", "spawn_agent", json!({"task": "Run the slow job"})),
        ],
        "w1",
        "interrupted",
    ));
    fixtures.extend(script(
        "Start the server job",
        vec![call("b1", "bash", json!({"command": format!("exec -a {marker} sleep 300"), "background": true}))],
        "b1",
        "the server runs",
    ));
    fixtures.extend(script(
        "Run the slow job",
        vec![call("b2", "bash", json!({"command": "sleep 50", "timeout_secs": 120}))],
        "b2",
        "slow job done",
    ));
    let (mock, _f) = model(fixtures).await;
    let dirs = dirs_with("");
    let base = format!("{}/v1", mock.url);
    let run = spawn(&dirs, &run_args("run two long jobs", "auto", "deny", &base));
    let pid = run.id().unwrap();
    // Both children are at work: the server is up, the slow job runs.
    let running = |pattern: &str| {
        std::process::Command::new("pgrep").args(["-f", pattern]).output().map(|o| o.status.success()).unwrap_or(false)
    };
    let started = Instant::now();
    while !(running(&marker) && running("^sleep 50")) {
        assert!(started.elapsed() < Duration::from_secs(60), "the children's processes never started");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let sent = Instant::now();
    let sigint = std::process::Command::new("kill").args(["-INT", &pid.to_string()]).status().unwrap();
    assert!(sigint.success());
    while running(&marker) || running("^sleep 50") {
        assert!(sent.elapsed() < Duration::from_secs(10), "the children's processes outlived the interrupt");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let gone = sent.elapsed();
    eprintln!("FIGURE: interrupt to both children's processes gone: {} ms", gone.as_millis());
    let run =
        tokio::time::timeout(Duration::from_secs(30), run.wait_with_output()).await.expect("the run ended").unwrap();
    assert_eq!(run.status.code(), Some(130), "{}", stderr(&run));
    // Both children are recorded as closed by the interrupt.
    let sessions = listed(&dirs, &["sessions", "list", "--json"]).await;
    let children: Vec<&Value> = sessions.iter().filter(|s| s["agent"].is_object()).collect();
    assert_eq!(children.len(), 2, "{sessions:?}");
    for child in children {
        assert_eq!(child["agent"]["state"], "closed", "{child}");
    }
}

#[tokio::test]
async fn an_acp_client_sees_a_child_as_a_think_call_that_moves_and_answers_its_question() {
    let spawn_one = vec![call("s1", "spawn_agent", json!({"task": "Write acp.txt please"}))];
    let mut fixtures = waiting_parent("delegate over acp", spawn_one, "s1", "The child wrote it.");
    fixtures.extend(script(
        "Write acp.txt",
        vec![call("e1", "write_file", json!({"path": "acp.txt", "content": "from a child\n"}))],
        "e1",
        "acp.txt is written.",
    ));
    let (mock, _f) = model(fixtures).await;
    let config =
        format!("mode = \"ask\"\n[provider]\nkind = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"m\"\n", mock.url);
    let dirs = dirs_with(&config);

    let messages = super::acp::acpx(&dirs, "--approve-all", "delegate over acp").await;
    assert_eq!(std::fs::read_to_string(dirs.workspace.join("acp.txt")).unwrap(), "from a child\n");
    // The spawn is a `think` call of the parent's.
    let announced = super::acp::updates(&messages, "tool_call");
    let spawn =
        announced.iter().find(|u| u["title"].as_str().is_some_and(|t| t.starts_with("Start an agent"))).unwrap();
    assert_eq!(spawn["kind"], "think", "{spawn}");
    let id = spawn["toolCallId"].as_str().unwrap();
    // The child's question reached the editor, and its progress updated that call to its answer.
    let asked: Vec<&Value> = messages.iter().filter(|m| m["method"] == "session/request_permission").collect();
    assert_eq!(asked.len(), 1, "{messages:?}");
    assert_eq!(asked[0]["params"]["toolCall"]["kind"], "edit");
    let progress: Vec<String> = super::acp::updates(&messages, "tool_call_update")
        .iter()
        .filter(|u| u["toolCallId"] == id)
        .filter_map(|u| u["content"][0]["content"]["text"].as_str().map(str::to_string))
        .collect();
    assert!(progress.iter().any(|t| t.contains("needs-you")), "{progress:?}");
    assert!(progress.iter().any(|t| t.contains("idle") && t.contains("acp.txt is written.")), "{progress:?}");
    let text: String = super::acp::updates(&messages, "agent_message_chunk")
        .iter()
        .map(|u| u["content"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(text, "The child wrote it.");
}

#[tokio::test]
async fn a_child_left_waiting_by_a_killed_process_resumes_with_its_parent() {
    let spawn_one = vec![call("s1", "spawn_agent", json!({"task": "Write kept.txt please"}))];
    let mut fixtures = vec![
        // Opened again, the parent waits for its child, which finishes what it was asked.
        json!({"match": {"userMessage": "how is the child", "toolCallId": "w2"}, "response": {"content": "It finished."}}),
        json!({"match": {"userMessage": "how is the child", "hasToolResult": false},
            "response": {"toolCalls": [call("w2", "wait_agent", json!({"timeout_secs": 60}))]}}),
    ];
    fixtures.extend(waiting_parent("start a child that asks", spawn_one, "s1", "unreachable"));
    fixtures.extend(script(
        "Write kept.txt",
        vec![call("e1", "write_file", json!({"path": "kept.txt", "content": "kept\n"}))],
        "e1",
        "kept.txt is written.",
    ));
    let (mock, _f) = model(fixtures).await;
    let dirs = dirs_with("");
    let base = format!("{}/v1", mock.url);
    let mut run = spawn(&dirs, &run_args("start a child that asks", "ask", "defer", &base));
    let request = pending(&dirs, 1).await.remove(0);
    let parent = request["agent"]["parentId"].as_str().unwrap().to_string();
    run.start_kill().unwrap();
    run.wait().await.unwrap();

    // Answered while no process has it: the child runs when its parent is next opened.
    let out = bridle(&dirs, &["approvals", "approve", request["id"].as_str().unwrap()]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("when its parent session"), "{}", stdout(&out));
    assert!(!dirs.workspace.join("kept.txt").exists());

    let mut args = run_args("how is the child", "ask", "defer", &base);
    args.extend(["--session", parent.as_str()]);
    let out = bridle(&dirs, &args).await;
    assert_eq!(out.status.code(), Some(0), "{}\n{}", stderr(&out), stdout(&out));
    assert_eq!(std::fs::read_to_string(dirs.workspace.join("kept.txt")).unwrap(), "kept\n");
    let events = json_lines(&out);
    let waited = result_of(&events, &parent, "wait_agent");
    assert!(waited["output"].as_str().unwrap().contains("kept.txt is written."), "{waited}");
}

#[tokio::test]
async fn a_role_that_asks_for_isolation_puts_the_child_in_a_worktree_of_its_own() {
    let spawn_one = vec![call("s1", "spawn_agent", json!({"task": "Change shared.txt alone", "role": "isolated"}))];
    let mut fixtures = waiting_parent("isolate a child", spawn_one, "s1", "done");
    fixtures.extend(script(
        "Change shared.txt alone",
        vec![call("e1", "write_file", json!({"path": "shared.txt", "content": "the child's\n"}))],
        "e1",
        "changed in my worktree",
    ));
    let (mock, _f) = model(fixtures).await;
    let dirs = dirs_with("[agents.roles.isolated]\ninstructions = \"Work alone.\"\nisolation = \"worktree\"\n");
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git").args(args).current_dir(&dirs.workspace).output().unwrap();
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    };
    git(&["init", "-q", "-b", "main"]);
    git(&["config", "user.name", "Tester"]);
    git(&["config", "user.email", "tester@example.com"]);
    std::fs::write(dirs.workspace.join("shared.txt"), "base\n").unwrap();
    git(&["add", "-A"]);
    git(&["commit", "-qm", "base"]);
    let base = format!("{}/v1", mock.url);
    let out = bridle(&dirs, &run_args("isolate a child", "auto", "deny", &base)).await;
    assert_eq!(out.status.code(), Some(0), "{}\n{}", stderr(&out), stdout(&out));
    // The main checkout is untouched; the child's edit is in its own worktree, on its branch.
    assert_eq!(std::fs::read_to_string(dirs.workspace.join("shared.txt")).unwrap(), "base\n");
    let sessions = listed(&dirs, &["sessions", "list", "--json"]).await;
    let child = sessions.iter().find(|s| s["agent"].is_object()).unwrap_or_else(|| panic!("{sessions:?}"));
    let tree = std::path::PathBuf::from(child["worktree"]["path"].as_str().unwrap());
    assert_eq!(std::fs::read_to_string(tree.join("shared.txt")).unwrap(), "the child's\n");
    assert!(child["worktree"]["branch"].as_str().unwrap().starts_with("bridle/"), "{child}");
}

#[tokio::test]
async fn a_child_that_fails_fails_only_its_own_result() {
    let spawns = vec![
        call("s1", "spawn_agent", json!({"task": "Fail loudly please"})),
        call("s2", "spawn_agent", json!({"task": "Answer calmly please"})),
    ];
    let mut fixtures = waiting_parent("one fails", spawns, "s2", "one of two answered");
    fixtures.push(json!({"match": {"userMessage": "Fail loudly"},
        "response": {"error": {"message": "the model is overloaded", "type": "server_error"}, "status": 500}}));
    fixtures.push(json!({"match": {"userMessage": "Answer calmly"}, "response": {"content": "calm answer"}}));
    let (mock, _f) = model(fixtures).await;
    let dirs = dirs_with("[limits]\nmax_retries = 0\n");
    let base = format!("{}/v1", mock.url);
    let out = bridle(&dirs, &run_args("one fails", "auto", "deny", &base)).await;
    assert_eq!(out.status.code(), Some(0), "{}\n{}", stderr(&out), stdout(&out));
    let events = json_lines(&out);
    let parent = parent_of(&events);
    let waited = result_of(&events, &parent, "wait_agent");
    let agents = waited["details"]["agents"].as_array().unwrap();
    let failed = agents.iter().find(|a| a["task"] == "Fail loudly please").unwrap();
    let calm = agents.iter().find(|a| a["task"] == "Answer calmly please").unwrap();
    assert_eq!(failed["state"], "failed", "{failed}");
    assert!(failed["error"].as_str().unwrap().contains("overloaded"), "{failed}");
    assert_eq!((calm["state"].as_str(), calm["lastMessage"].as_str()), (Some("idle"), Some("calm answer")), "{calm}");
    assert!(events.iter().any(|e| e["type"] == "turnCompleted" && e["sessionId"] == parent.as_str()));
}
