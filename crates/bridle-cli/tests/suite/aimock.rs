//! A real aimock server (npm `@copilotkit/aimock`) on a free port, ended with the test.

use std::path::PathBuf;
use std::process::Stdio;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

pub struct Aimock {
    pub url: String,
    child: Child,
}

pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The shared fixture folder.
pub fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/llm")
}

impl Aimock {
    pub async fn start() -> Aimock {
        Self::start_with(&fixtures()).await
    }

    /// aimock on another fixture folder (e.g. one a test wrote).
    pub async fn start_with(fixtures: &std::path::Path) -> Aimock {
        Self::start_keyed(fixtures, &[]).await
    }

    /// aimock that answers only requests carrying one of `keys` (401 otherwise).
    pub async fn start_keyed(fixtures: &std::path::Path, keys: &[&str]) -> Aimock {
        let cli = repo_root().join("node_modules/@copilotkit/aimock/dist/cli.js");
        assert!(cli.exists(), "aimock is not installed at {}: run `npm install` at the repo root", cli.display());
        let mut command = Command::new("node");
        // An empty AIMOCK_API_KEYS is an error to aimock: set it only when keys are required.
        if !keys.is_empty() {
            command.env("AIMOCK_API_KEYS", keys.join(","));
        }
        let mut child = command
            .arg(cli)
            .args(["-p", "0", "-h", "127.0.0.1", "-f"])
            .arg(fixtures)
            .arg("--validate-on-load")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("node runs aimock");
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let url = loop {
            let line = tokio::time::timeout(std::time::Duration::from_secs(30), lines.next_line())
                .await
                .expect("aimock did not start within 30 s")
                .unwrap()
                .expect("aimock exited before listening");
            if let Some(rest) = line.split("listening on ").nth(1) {
                break rest.trim().to_string();
            }
        };
        // Keep draining its log so it never blocks on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Aimock { url, child }
    }

    /// Every request body aimock received, in order.
    pub async fn journal(&self) -> Vec<serde_json::Value> {
        let journal: serde_json::Value =
            reqwest::get(format!("{}/__aimock/journal", self.url)).await.unwrap().json().await.unwrap();
        journal.as_array().expect("the journal is an array").iter().map(|entry| entry["body"].clone()).collect()
    }
}

impl Drop for Aimock {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}
