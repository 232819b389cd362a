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
