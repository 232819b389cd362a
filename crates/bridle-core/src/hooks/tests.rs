//! Hooks as real `bash -c` processes: what they receive, and what each answer does to a verdict.
#![allow(clippy::unwrap_used)]

use std::ffi::OsString;

use bridle_protocol::{Decision, DecisionSource, Finding, Severity};
use serde_json::json;

use super::*;

fn hooks(pre: &[(&str, &str, u64)], post: &[(&str, &str, u64)]) -> Hooks {
    let list = |l: &[(&str, &str, u64)]| {
        l.iter()
            .map(|(m, c, t)| HookConfig {
                matcher: m.to_string(),
                command: c.to_string(),
                timeout_secs: *t,
                sandbox: true,
            })
            .collect()
    };
    let config = HooksConfig { pre_tool_use: list(pre), post_tool_use: list(post) };
    let env = [("PATH", "/usr/bin:/bin"), ("HOME", "/tmp"), ("OPENAI_API_KEY", "sk-must-not-reach-hooks")];
    let shell = ShellSandbox::unsandboxed(&std::env::temp_dir(), "hook tests run unconfined");
    Hooks::new(&config, shell, env.into_iter().map(|(k, v)| (OsString::from(k), OsString::from(v)))).unwrap()
}

fn ask_by_mode() -> Verdict {
    Verdict { decision: Decision::Ask, source: DecisionSource::Mode, findings: vec![] }
}

async fn before(hooks: &Hooks, tool: &str, verdict: &mut Verdict) -> Vec<HookRun> {
    let dir = std::env::temp_dir();
    let args = json!({"command": "rm -rf build"});
    let input = HookInput {
        session_id: "s1",
        cwd: &dir,
        hook_event_name: "PreToolUse",
        tool_name: tool,
        tool_input: &args,
        tool_response: None,
    };
    hooks.before(&input, verdict).await
}

#[tokio::test]
async fn exit_2_blocks_with_stderr_and_the_hook_gets_the_call_on_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let seen = dir.path().join("seen.json");
    let command = format!("cat > {}; env > {}.env; echo 'no rm here' >&2; exit 2", seen.display(), seen.display());
    let h = hooks(&[("bash|edit_file", &command, 10)], &[]);
    let mut verdict = ask_by_mode();
    let runs = before(&h, "bash", &mut verdict).await;
    assert_eq!(verdict.decision, Decision::Deny);
    assert_eq!(verdict.source, DecisionSource::Hook);
    assert_eq!(verdict.findings[0].message, "no rm here");
    assert_eq!(runs[0].exit_code, Some(2));
    let input: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&seen).unwrap()).unwrap();
    assert_eq!(input["tool_name"], "bash");
    assert_eq!(input["hook_event_name"], "PreToolUse");
    assert_eq!(input["tool_input"]["command"], "rm -rf build");
    assert_eq!(input["session_id"], "s1");
    let env = std::fs::read_to_string(format!("{}.env", seen.display())).unwrap();
    assert!(!env.contains("sk-must-not-reach-hooks"), "hooks get the scrubbed environment: {env}");
    // Another tool does not match the anchored matcher.
    let mut other = ask_by_mode();
    assert!(before(&h, "bash_extra", &mut other).await.is_empty());
    assert_eq!(other, ask_by_mode());
}

#[tokio::test]
async fn exit_0_continues_and_a_json_decision_decides() {
    let mut verdict = ask_by_mode();
    assert_eq!(before(&hooks(&[("", "true", 10)], &[]), "bash", &mut verdict).await[0].outcome, HookOutcome::Continue);
    assert_eq!(verdict, ask_by_mode());

    let allow = r#"echo '{"decision": "allow", "reason": "build dirs are fine"}'"#;
    let mut lifted = ask_by_mode();
    before(&hooks(&[("*", allow, 10)], &[]), "bash", &mut lifted).await;
    assert_eq!((lifted.decision, lifted.source), (Decision::Allow, DecisionSource::Hook));

    let deny = r#"echo '{"decision": "deny", "reason": "not on Fridays"}'"#;
    let mut refused = Verdict::allow_by_mode();
    before(&hooks(&[("bash", deny, 10)], &[]), "bash", &mut refused).await;
    assert_eq!(refused.decision, Decision::Deny);
    assert_eq!(refused.findings[0].message, "not on Fridays");

    let ask = r#"echo '{"decision": "ask", "reason": "double-check"}'"#;
    let mut asked = Verdict::allow_by_mode();
    before(&hooks(&[("bash", ask, 10)], &[]), "bash", &mut asked).await;
    assert_eq!((asked.decision, asked.source), (Decision::Ask, DecisionSource::Hook));
}

#[tokio::test]
async fn an_allow_never_lifts_a_guardian_finding_nor_a_failed_hook() {
    let allow = r#"echo '{"decision": "allow"}'"#;
    let finding = Finding {
        guardian: "shell".into(),
        rule: "r".into(),
        severity: Severity::High,
        message: "m".into(),
        contained: false,
    };
    let mut guarded = Verdict { decision: Decision::Ask, source: DecisionSource::Guard, findings: vec![finding] };
    before(&hooks(&[("", allow, 10)], &[]), "bash", &mut guarded).await;
    assert_eq!(guarded.decision, Decision::Ask);

    // The first hook fails (exit 1): the call asks, and the second hook's allow cannot undo it.
    let mut verdict = Verdict::allow_by_mode();
    let runs = before(&hooks(&[("", "exit 1", 10), ("", allow, 10)], &[]), "bash", &mut verdict).await;
    assert_eq!(verdict.decision, Decision::Ask);
    assert!(matches!(runs[0].outcome, HookOutcome::Failed(_)));
}

#[tokio::test]
async fn a_hook_that_hangs_is_killed_at_its_timeout_and_the_call_asks() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("child-alive");
    // A background child too: the whole group goes.
    let command = format!("(sleep 3; touch {}) & sleep 30", marker.display());
    let mut verdict = Verdict::allow_by_mode();
    let started = std::time::Instant::now();
    let runs = before(&hooks(&[("", &command, 1)], &[]), "bash", &mut verdict).await;
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    assert_eq!(verdict.decision, Decision::Ask);
    assert!(runs[0].reason().unwrap().contains("did not finish within 1 s"), "{:?}", runs[0]);
    tokio::time::sleep(std::time::Duration::from_secs(3)).await;
    assert!(!marker.exists(), "the hook's background child was killed with it");
}

#[tokio::test]
async fn a_post_hook_gets_the_response_and_exit_2_speaks_to_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let seen = dir.path().join("post.json");
    let command = format!("cat > {}; echo 'lint: 2 warnings' >&2; exit 2", seen.display());
    let h = hooks(&[], &[("edit_file", &command, 10)]);
    let args = json!({"path": "a.rs"});
    let cwd = std::env::temp_dir();
    let input = HookInput {
        session_id: "s1",
        cwd: &cwd,
        hook_event_name: "PostToolUse",
        tool_name: "edit_file",
        tool_input: &args,
        tool_response: Some(json!({"output": "Edited a.rs", "isError": false})),
    };
    let (runs, feedback) = h.after(&input).await;
    assert_eq!(runs.len(), 1);
    assert_eq!(feedback, ["lint: 2 warnings"]);
    let got: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&seen).unwrap()).unwrap();
    assert_eq!(got["tool_response"]["output"], "Edited a.rs");
}

#[test]
fn a_bad_matcher_is_a_clear_error() {
    let config = HooksConfig {
        pre_tool_use: vec![HookConfig {
            matcher: "bash(".into(),
            command: "true".into(),
            timeout_secs: 5,
            sandbox: true,
        }],
        post_tool_use: vec![],
    };
    let shell = ShellSandbox::unsandboxed(&std::env::temp_dir(), "hook tests run unconfined");
    let err = Hooks::new(&config, shell, std::iter::empty()).unwrap_err();
    assert!(err.to_string().contains("bash("), "{err}");
}
