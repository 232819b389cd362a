//! The managed policy (DESIGN §17) as each front end meets it: a managed file that forbids
//! `bypass` and denies `bash(git push*)` refuses `bridle run --mode bypass`, wins over the
//! user's allow rule, refuses a user config that loosens it (naming the file), is what
//! `bridle config explain` names as the source, and refuses ACP's `session/set_mode` to `bypass`.

use std::ffi::OsStr;

use serde_json::{json, Value};

use super::acp::{raw_acp, RawClient};
use super::bridle::*;

const POLICY: &str = "allowed_modes = [\"read-only\", \"plan\", \"ask\", \"review\", \"auto-edit\", \"auto\"]\n\
                      [rules]\ndeny = [\"bash(git push*)\"]\n";

/// A managed file beside the test's dirs, and the environment naming it.
fn managed(dirs: &Dirs) -> String {
    let file = dirs.data.parent().unwrap().join("managed.toml");
    std::fs::write(&file, POLICY).unwrap();
    file.display().to_string()
}

fn user_config(dirs: &Dirs, text: &str) {
    std::fs::create_dir_all(&dirs.data).unwrap();
    std::fs::write(dirs.data.join("config.toml"), text).unwrap();
}

#[tokio::test]
async fn bypass_is_refused_and_a_user_allow_does_not_open_a_managed_deny() {
    let dirs = Dirs::new();
    let file = managed(&dirs);
    let env = [("BRIDLE_MANAGED_CONFIG", file.as_str())];
    user_config(&dirs, "mode = \"auto\"\n[rules]\nallow = [\"bash(git push*)\"]\n");

    let out = bridle_with_env(&dirs.data, &dirs.workspace, &["run", "hello", "--mode", "bypass"], &env).await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("bypass") && stderr(&out).contains(&file), "{}", stderr(&out));

    let args = json!({"command": "git push origin main"}).to_string();
    let out = bridle_with_env(&dirs.data, &dirs.workspace, &["guard", "bash", "--args", &args], &env).await;
    assert_eq!(out.status.code(), Some(4), "denied despite the user's allow: {}", stdout(&out));
    // Without the policy the user's rule would allow it.
    let out = bridle(&dirs, &["guard", "bash", "--args", &args]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));

    let out = bridle_with_env(&dirs.data, &dirs.workspace, &["config", "explain"], &env).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    println!("{text}");
    let line = |key: &str| text.lines().find(|l| l.starts_with(&format!("{key} = "))).unwrap_or_default().to_string();
    assert!(line("rules.deny").contains(&format!("# managed {file}")), "{text}");
    assert!(line("allowed_modes").contains(&format!("# managed {file}")), "{text}");
    assert!(line("rules.allow").contains("# user "), "{text}");
    assert!(line("limits.max_steps").ends_with("# default"), "{text}");

    // `[sandbox] required`: no escalation, in any mode; `enabled = false` is refused at load.
    std::fs::write(&file, format!("{POLICY}[sandbox]\nrequired = true\n")).unwrap();
    let escalate = json!({"command": "npm test", "escalate": true, "justification": "needs the network"}).to_string();
    let out = bridle_with_env(&dirs.data, &dirs.workspace, &["guard", "bash", "--args", &escalate], &env).await;
    assert_eq!(out.status.code(), Some(4), "an escalation is denied: {}", stdout(&out));
    assert!(stdout(&out).contains(&file), "{}", stdout(&out));
    let out = bridle(&dirs, &["guard", "bash", "--args", &escalate]).await;
    assert_eq!(out.status.code(), Some(3), "without the policy it asks: {}", stdout(&out));
    user_config(&dirs, "[sandbox]\nenabled = false\n");
    let out = bridle_with_env(&dirs.data, &dirs.workspace, &["config", "explain"], &env).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("sandbox is required") && stderr(&out).contains(&file), "{}", stderr(&out));

    user_config(&dirs, "mode = \"bypass\"\n");
    let out = bridle_with_env(&dirs.data, &dirs.workspace, &["config", "explain"], &env).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("not an allowed mode") && stderr(&out).contains(&file), "{}", stderr(&out));
}

#[tokio::test]
async fn acp_offers_no_bypass_and_refuses_set_mode_to_it() {
    let dirs = Dirs::new();
    let file = managed(&dirs);
    user_config(
        &dirs,
        "mode = \"ask\"\n[provider]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\n",
    );
    let mut client = RawClient::of(raw_acp(&dirs.data, &[("BRIDLE_MANAGED_CONFIG", OsStr::new(&file))]));
    let mut ask = async |message: Value| client.ask(message).await;
    ask(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}})).await;
    let new = ask(json!({"jsonrpc": "2.0", "id": 2, "method": "session/new",
        "params": {"cwd": dirs.workspace.canonicalize().unwrap(), "mcpServers": []}}))
    .await;
    let offered: Vec<&str> = new["result"]["modes"]["availableModes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(offered, ["read-only", "plan", "ask", "review", "auto-edit", "auto"], "{new}");
    let session = new["result"]["sessionId"].clone();
    let refused = ask(json!({"jsonrpc": "2.0", "id": 3, "method": "session/set_mode",
        "params": {"sessionId": session, "modeId": "bypass"}}))
    .await;
    let message = refused["error"].to_string();
    assert!(message.contains("bypass") && message.contains(&file), "{refused}");
    let allowed = ask(json!({"jsonrpc": "2.0", "id": 4, "method": "session/set_mode",
        "params": {"sessionId": session, "modeId": "plan"}}))
    .await;
    assert!(allowed["error"].is_null(), "{allowed}");
}
