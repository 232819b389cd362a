//! Crash safety: a `bridle tool write_file` process killed with SIGKILL at any moment leaves the
//! old content or the new one, never a torn file.

use std::process::Stdio;
use std::time::Duration;

use tokio::io::AsyncWriteExt;

use super::bridle::*;

#[tokio::test]
async fn a_write_killed_mid_way_leaves_the_old_or_the_new_file() {
    let dirs = Dirs::new();
    let target = dirs.workspace.join("big.txt");
    let old = "o".repeat(8 * 1024 * 1024);
    std::fs::write(&target, &old).unwrap();
    // One uninterrupted write first, to spread the kills over its duration on this machine.
    let calibration = std::time::Instant::now();
    let args = serde_json::json!({"path": "big.txt", "content": "c".repeat(8 * 1024 * 1024)}).to_string();
    write(&dirs, &args, None).await;
    let full = calibration.elapsed();
    std::fs::write(&target, &old).unwrap();

    let rounds = 30u32;
    let mut outcomes = (0, 0);
    for round in 0..rounds {
        let new = format!("{round:02}").repeat(4 * 1024 * 1024);
        let args = serde_json::json!({"path": "big.txt", "content": new}).to_string();
        // Kill at a different moment each round, from before the write starts to after it ends.
        write(&dirs, &args, Some(full.mul_f64(1.5 * f64::from(round) / f64::from(rounds)))).await;

        let now = std::fs::read_to_string(&target).unwrap();
        if now == new {
            outcomes.1 += 1;
        } else {
            assert!(
                now.len() == old.len() && now.bytes().all(|b| b == now.as_bytes()[0]),
                "round {round}: torn file of {} bytes",
                now.len()
            );
            outcomes.0 += 1;
        }
        std::fs::write(&target, &old).unwrap();
    }
    // Both outcomes happened, so the kills really landed before and after the rename.
    assert!(outcomes.0 > 0 && outcomes.1 > 0, "old {} / new {}", outcomes.0, outcomes.1);
}

/// Runs `bridle tool write_file` with `args` on stdin, killed with SIGKILL after `kill_after`.
async fn write(dirs: &Dirs, args: &str, kill_after: Option<Duration>) {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_bridle"))
        .args(["tool", "write_file", "--args", "-", "--mode", "auto", "--data-dir"])
        .arg(&dirs.data)
        .arg("--workspace")
        .arg(&dirs.workspace)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    let mut stdin = child.stdin.take().unwrap();
    // The child may already be dead when it is killed early; a broken pipe is expected then.
    let _ = stdin.write_all(args.as_bytes()).await;
    drop(stdin);
    if let Some(after) = kill_after {
        tokio::time::sleep(after.saturating_sub(started.elapsed())).await;
        let _ = child.start_kill();
    }
    let _ = child.wait().await;
}

/// `bridle run` killed (SIGKILL) in the middle of a batch: the call that had finished keeps its
/// real result after the restart, the one cut off gets an error result, and the file change
/// that happened can still be undone.
#[tokio::test]
async fn a_run_killed_mid_batch_keeps_every_result_that_ended() {
    use tokio::io::AsyncBufReadExt;
    let dirs = Dirs::new();
    let fixtures = tempfile::tempdir().unwrap();
    let script = serde_json::json!({"fixtures": [
        {"match": {"userMessage": "two things", "hasToolResult": false},
         "response": {"toolCalls": [
            {"id": "quick", "name": "write_file", "arguments": {"path": "quick.txt", "content": "done\n"}},
            {"id": "slow", "name": "bash", "arguments": {"command": "sleep 30", "timeout_secs": 60}}
         ]}},
        {"match": {"userMessage": "two things", "hasToolResult": true}, "response": {"content": "both"}}
    ]});
    std::fs::write(fixtures.path().join("batch.json"), script.to_string()).unwrap();
    let mock = super::aimock::Aimock::start_with(fixtures.path()).await;
    let base = format!("{}/v1", mock.url);
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_bridle"))
        .args(["run", "two things", "--mode", "bypass", "--json", "--provider", "openai", "--base-url", &base])
        .args(["--model", "m", "--data-dir"])
        .arg(&dirs.data)
        .arg("--workspace")
        .arg(&dirs.workspace)
        .env_remove("OPENAI_API_KEY")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let mut session = String::new();
    // Killed once the quick call has ended and the slow one is running.
    let mut ended_quick = false;
    let mut slow_started = false;
    while let Ok(Some(line)) = tokio::time::timeout(Duration::from_secs(20), lines.next_line()).await.unwrap() {
        let event: serde_json::Value = serde_json::from_str(&line).unwrap();
        if session.is_empty() {
            session = event["sessionId"].as_str().unwrap_or_default().to_string();
        }
        ended_quick |=
            event["type"] == "toolCallEnd" && event["result"]["output"].as_str().unwrap_or("").contains("quick.txt");
        slow_started |= event["type"] == "toolCallBegin" && event["call"]["name"] == "bash";
        if ended_quick && slow_started {
            break;
        }
    }
    assert!(ended_quick && slow_started, "the batch never reached the kill point");
    // The bash call runs alone, after the write; give it a moment to start, then kill.
    tokio::time::sleep(Duration::from_millis(300)).await;
    child.start_kill().unwrap();
    let _ = child.wait().await;

    let shown = bridle(&dirs, &["sessions", "show", &session]).await;
    assert_eq!(shown.status.code(), Some(0), "{}", stderr(&shown));
    let results: Vec<serde_json::Value> =
        json_lines(&shown).into_iter().filter(|i| i["type"] == "toolResult").map(|i| i["result"].clone()).collect();
    assert_eq!(results.len(), 2, "{results:?}");
    assert!(results[0]["output"].as_str().unwrap().starts_with("Created quick.txt"), "{results:?}");
    assert_eq!(results[0]["isError"], false);
    assert!(results[1]["output"].as_str().unwrap().contains("session ended before this call finished"), "{results:?}");
    let undo = bridle(&dirs, &["sessions", "undo", &session]).await;
    assert_eq!(undo.status.code(), Some(0), "{}", stderr(&undo));
    assert!(!dirs.workspace.join("quick.txt").exists());
}
