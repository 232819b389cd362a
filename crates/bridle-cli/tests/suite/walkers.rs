//! The tree walkers keep secrets as read_file does: with the user's home inside the workspace
//! (a workspace is never the home itself, but may hold it), `grep_search`, `glob_search` and
//! `list_files` neither show nor search `.ssh/` or `.aws/`, and a hard link to a file outside
//! the workspace is read by nothing.

use serde_json::Value;

use super::bridle::*;

async fn tool_as(dirs: &Dirs, home: &std::path::Path, name: &str, args: &str) -> Value {
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_bridle"))
        .args(["tool", name, "--mode", "read-only", "--args", args])
        .arg("--data-dir")
        .arg(&dirs.data)
        .arg("--workspace")
        .arg(&dirs.workspace)
        .env("HOME", home)
        .env_remove("BRIDLE_CONFIG")
        .env_remove("BRIDLE_DATA_DIR")
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap();
    serde_json::from_str(&stdout(&out)).unwrap_or_else(|e| panic!("not JSON ({e}): {}", stderr(&out)))
}

fn output(report: &Value) -> String {
    report["result"]["output"].as_str().unwrap_or_default().to_string()
}

#[tokio::test]
async fn secrets_in_a_home_workspace_are_neither_listed_nor_searched() {
    let dirs = Dirs::new();
    // The home itself is no workspace: said clearly, and nothing runs.
    let refused = tokio::process::Command::new(env!("CARGO_BIN_EXE_bridle"))
        .args(["tool", "list_files", "--mode", "read-only", "--args", "{}", "--data-dir"])
        .arg(&dirs.data)
        .arg("--workspace")
        .arg(&dirs.workspace)
        .env("HOME", &dirs.workspace)
        .env_remove("BRIDLE_CONFIG")
        .env_remove("BRIDLE_DATA_DIR")
        .output()
        .await
        .unwrap();
    assert_ne!(refused.status.code(), Some(0));
    assert!(stderr(&refused).contains("is the home folder itself"), "{}", stderr(&refused));
    let home = dirs.workspace.join("home");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::create_dir_all(home.join(".aws")).unwrap();
    std::fs::write(home.join(".ssh/id_rsa"), "PRIVATE-KEY-NEEDLE\n").unwrap();
    std::fs::write(home.join(".aws/credentials"), "aws_secret_access_key = AWS-NEEDLE\n").unwrap();
    std::fs::write(home.join("notes.txt"), "an everyday NEEDLE\n").unwrap();

    let grep = tool_as(&dirs, &home, "grep_search", r#"{"pattern":"NEEDLE"}"#).await;
    let found = output(&grep);
    assert!(found.contains("notes.txt"), "{grep}");
    assert!(!found.contains("PRIVATE-KEY") && !found.contains("AWS-NEEDLE"), "{grep}");
    for (name, args) in [("glob_search", r#"{"pattern":"**/*"}"#), ("list_files", r#"{"depth":3}"#)] {
        let listed = output(&tool_as(&dirs, &home, name, args).await);
        assert!(listed.contains("notes.txt"), "{name}: {listed}");
        assert!(!listed.contains("id_rsa") && !listed.contains("credentials"), "{name}: {listed}");
    }
    // Asked for by path, the search is refused like read_file is.
    let direct = tool_as(&dirs, &home, "grep_search", r#"{"pattern":"NEEDLE","path":"home/.ssh"}"#).await;
    assert_eq!(direct["decision"], "deny", "{direct}");
}

#[tokio::test]
async fn a_hard_link_to_a_file_outside_is_read_by_no_tool() {
    let dirs = Dirs::new();
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret.txt");
    std::fs::write(&secret, "OUTSIDE-NEEDLE\n").unwrap();
    std::fs::hard_link(&secret, dirs.workspace.join("door.txt")).unwrap();
    let home = outside.path();

    let read = tool_as(&dirs, home, "read_file", r#"{"path":"door.txt"}"#).await;
    assert_eq!(read["result"]["isError"], true, "{read}");
    assert!(output(&read).contains("hard links"), "{read}");
    assert!(!output(&read).contains("OUTSIDE-NEEDLE"), "{read}");
    let grep = tool_as(&dirs, home, "grep_search", r#"{"pattern":"OUTSIDE"}"#).await;
    assert!(!output(&grep).contains("OUTSIDE-NEEDLE"), "{grep}");
}
