//! One wiring for every front end: the config's rules, disabled tools and "always" answers in
//! `bridle run` and `bridle approvals`, as a user would write them, against a real aimock.

use serde_json::{json, Value};

use super::aimock::Aimock;
use super::bridle::*;

/// The model runs `echo hi > greeting.txt` with bash, then says it is done.
async fn greeting_model() -> (Aimock, tempfile::TempDir) {
    let fixtures = tempfile::tempdir().unwrap();
    let file = json!({"fixtures": [
        {"match": {"userMessage": "greet the repo", "hasToolResult": false},
         "response": {"toolCalls": [{"id": "call_greet", "name": "bash",
                                      "arguments": {"command": "echo hi > greeting.txt"}}]}},
        {"match": {"userMessage": "greet the repo", "hasToolResult": true},
         "response": {"content": "Done greeting."}}
    ]});
    std::fs::write(fixtures.path().join("greet.json"), file.to_string()).unwrap();
    (Aimock::start_with(fixtures.path()).await, fixtures)
}

/// A config file in the data dir: `body` plus the aimock provider.
fn write_config(dirs: &Dirs, mock: &Aimock, body: &str) -> std::path::PathBuf {
    std::fs::create_dir_all(&dirs.data).unwrap();
    let file = dirs.data.join("config.toml");
    let provider = format!("[provider]\nkind = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"mock-model\"\n", mock.url);
    std::fs::write(&file, format!("{body}\n{provider}")).unwrap();
    file
}

fn ends(events: &[Value]) -> Vec<&Value> {
    events.iter().filter(|e| e["type"] == "toolCallEnd").collect()
}

#[tokio::test]
async fn a_deny_rule_in_the_config_denies_in_bridle_run_as_in_bridle_guard() {
    let (mock, _f) = greeting_model().await;
    let dirs = Dirs::new();
    write_config(&dirs, &mock, "mode = \"auto\"\n[rules]\ndeny = [\"bash(echo*)\"]");
    let out = bridle(&dirs, &["run", "greet the repo", "--json"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let events = json_lines(&out);
    let end = ends(&events);
    assert_eq!(end.len(), 1);
    assert_eq!(end[0]["status"], "denied", "{}", end[0]);
    assert!(end[0]["result"]["output"].as_str().unwrap().contains("bash(echo*)"), "{}", end[0]);
    assert!(!dirs.workspace.join("greeting.txt").exists(), "the denied command ran");

    let guard = bridle(&dirs, &["guard", "bash", "--args", r#"{"command":"echo hi > greeting.txt"}"#]).await;
    assert_eq!(guard.status.code(), Some(4), "{}", stdout(&guard));
}

#[tokio::test]
async fn a_disabled_tool_is_denied_in_bridle_run() {
    let (mock, _f) = greeting_model().await;
    let dirs = Dirs::new();
    write_config(&dirs, &mock, "mode = \"bypass\"\ndisabled_tools = [\"bash\"]");
    let out = bridle(&dirs, &["run", "greet the repo", "--json"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let events = json_lines(&out);
    assert_eq!(ends(&events)[0]["status"], "denied");
    assert!(ends(&events)[0]["result"]["output"].as_str().unwrap().contains("disabled"));
    assert!(!dirs.workspace.join("greeting.txt").exists());
}

#[tokio::test]
async fn an_always_answer_is_in_force_in_every_later_session() {
    let (mock, _f) = greeting_model().await;
    let dirs = Dirs::new();
    let config = write_config(&dirs, &mock, "mode = \"ask\"");

    // Asked and left pending; answered "always" from another process, which runs it.
    let out = bridle(&dirs, &["run", "greet the repo", "--json", "--on-ask", "defer"]).await;
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let request = json_lines(&out).into_iter().find(|e| e["type"] == "approvalRequested").unwrap();
    let id = request["request"]["id"].as_str().unwrap().to_string();
    let out = bridle(&dirs, &["approvals", "approve", &id, "--scope", "always", "--json"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(dirs.workspace.join("greeting.txt").exists(), "the approved call ran");
    let written = std::fs::read_to_string(&config).unwrap();
    assert!(written.contains("bash(echo hi > greeting.txt)"), "{written}");

    // A new session, where nobody answers: the rule lets the same command run.
    std::fs::remove_file(dirs.workspace.join("greeting.txt")).unwrap();
    let out = bridle(&dirs, &["run", "greet the repo", "--json", "--on-ask", "deny"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let events = json_lines(&out);
    assert!(events.iter().all(|e| e["type"] != "approvalRequested"), "asked again despite the rule");
    assert_eq!(ends(&events)[0]["status"], "ok", "{}", ends(&events)[0]);
    assert!(dirs.workspace.join("greeting.txt").exists());
}

#[tokio::test]
async fn plan_mode_runs_commands_that_look_and_writes_nothing() {
    let dirs = Dirs::new();
    std::fs::write(dirs.workspace.join("README.md"), "hello\n").unwrap();
    let git = |args: &[&str]| {
        let ok = std::process::Command::new("git").args(args).current_dir(&dirs.workspace).output().unwrap();
        assert!(ok.status.success(), "{}", String::from_utf8_lossy(&ok.stderr));
    };
    git(&["init", "-q"]);
    git(&["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "first", "--allow-empty"]);
    git(&["add", "README.md"]);
    git(&["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "add readme"]);

    let look = r#"{"command":"ls; git log --oneline | wc -l"}"#;
    let out = bridle(&dirs, &["tool", "bash", "--mode", "plan", "--args", look]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(report["decision"], "allow");
    assert_eq!(report["result"]["details"]["sandbox"], "bwrap");
    let output = report["result"]["output"].as_str().unwrap();
    assert!(output.contains("README.md") && output.contains("\n2\n"), "{output}");

    for command in ["echo changed > README.md", "rm -f README.md", "touch new.txt", "git commit --allow-empty -qm x"] {
        let args = json!({"command": command}).to_string();
        let out = bridle(&dirs, &["tool", "bash", "--mode", "plan", "--approve", "--args", &args]).await;
        let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
        assert_ne!(report["result"]["details"]["exitCode"], 0, "{command} succeeded in plan mode: {report}");
    }
    assert_eq!(std::fs::read_to_string(dirs.workspace.join("README.md")).unwrap(), "hello\n");
    assert!(!dirs.workspace.join("new.txt").exists());
    let log =
        std::process::Command::new("git").args(["log", "--oneline"]).current_dir(&dirs.workspace).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&log.stdout).lines().count(), 2);

    let write =
        bridle(&dirs, &["tool", "write_file", "--mode", "plan", "--args", r#"{"path":"x.txt","content":"x"}"#]).await;
    assert_eq!(write.status.code(), Some(4), "{}", stdout(&write));
    let escalate = json!({"command": "touch x.txt", "escalate": true, "justification": "need it"}).to_string();
    let out = bridle(&dirs, &["tool", "bash", "--mode", "plan", "--approve", "--args", &escalate]).await;
    assert_eq!(out.status.code(), Some(4), "an escalation in plan mode must be denied: {}", stdout(&out));
    assert!(!dirs.workspace.join("x.txt").exists());
}

#[tokio::test]
async fn escape_sequences_from_the_model_never_reach_the_terminal_raw() {
    let fixtures = tempfile::tempdir().unwrap();
    let sneaky = "echo \u{1b}[2K\u{1b}[1Ahi";
    let file = json!({"fixtures": [
        {"match": {"userMessage": "paint", "hasToolResult": false},
         "response": {"toolCalls": [{"id": "c1", "name": "bash", "arguments": {"command": sneaky}}]}},
        {"match": {"userMessage": "paint", "hasToolResult": true},
         "response": {"content": "done \u{1b}]0;owned\u{7} \u{202e}txt.exe"}}
    ]});
    std::fs::write(fixtures.path().join("paint.json"), file.to_string()).unwrap();
    let mock = Aimock::start_with(fixtures.path()).await;
    let dirs = Dirs::new();
    write_config(&dirs, &mock, "mode = \"ask\"");
    // Human output (not --json), denied at the (non-terminal) prompt.
    let out = bridle(&dirs, &["run", "paint"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let all = format!("{}{}", stdout(&out), stderr(&out));
    assert!(!all.contains('\u{1b}') && !all.contains('\u{7}') && !all.contains('\u{202e}'), "{all:?}");
    assert!(stdout(&out).contains("done \\u{1b}]0;owned\\u{7} \\u{202e}txt.exe"), "{all}");
}
