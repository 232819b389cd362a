//! API keys in the real OS keychain: a private D-Bus session with an unlocked gnome-keyring
//! (`scripts/with-keyring.sh`), `bridle auth set|clear` as a user types them, and `bridle run`
//! against a model server that answers only with the key (aimock with `AIMOCK_API_KEYS`).

use std::process::Stdio;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};

use super::aimock::{fixtures, repo_root, Aimock};
use super::bridle::*;

/// A private session bus with a keychain, alive while this value is.
struct Keychain {
    address: String,
    child: Child,
}

impl Keychain {
    async fn start() -> Keychain {
        let script = repo_root().join("scripts/with-keyring.sh");
        let mut child = Command::new("bash")
            .arg(script)
            .args(["bash", "-c", "echo \"$DBUS_SESSION_BUS_ADDRESS\"; exec sleep 600"])
            .process_group(0)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("scripts/with-keyring.sh runs");
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let address = tokio::time::timeout(std::time::Duration::from_secs(30), lines.next_line())
            .await
            .expect("the keychain did not start within 30 s")
            .unwrap()
            .expect("with-keyring.sh exited early");
        assert!(address.starts_with("unix:"), "{address}");
        Keychain { address, child }
    }

    fn env(&self) -> [(&str, &str); 1] {
        [("DBUS_SESSION_BUS_ADDRESS", self.address.as_str())]
    }

    /// What the keychain holds for `account` under service `bridle` (as `secret-tool` reads it).
    async fn lookup(&self, account: &str) -> Option<String> {
        let out = Command::new("secret-tool")
            .args(["lookup", "service", "bridle", "username", account])
            .env("DBUS_SESSION_BUS_ADDRESS", &self.address)
            .output()
            .await
            .unwrap();
        out.status.success().then(|| String::from_utf8(out.stdout).unwrap())
    }
}

impl Drop for Keychain {
    fn drop(&mut self) {
        // The bus and the daemon are in the script's process group: end them all.
        bridle_core::processes::kill_group(self.child.id());
    }
}

/// `bridle auth set` with the key on stdin.
async fn auth_set(dirs: &Dirs, keychain: &Keychain, base_url: &str, key: &str) -> std::process::Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_bridle"))
        .args(["auth", "set", "--provider", "openai", "--base-url", base_url, "--data-dir"])
        .arg(&dirs.data)
        .arg("--workspace")
        .arg(&dirs.workspace)
        .env_remove("OPENAI_API_KEY")
        .envs(keychain.env())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(format!("{key}\n").as_bytes()).await.unwrap();
    drop(stdin);
    child.wait_with_output().await.unwrap()
}

fn run_args(base_url: &str) -> Vec<&str> {
    vec!["run", "remember the word apple", "--provider", "openai", "--base-url", base_url, "--model", "m", "--json"]
}

fn answered(output: &std::process::Output) -> bool {
    json_lines(output).iter().any(|e| e["type"] == "assistantMessage" && e["text"] == "Noted: apple.")
}

#[tokio::test]
async fn a_key_set_with_bridle_auth_is_in_the_keychain_and_reaches_the_model() {
    let key = format!("sk-keychain-test-{}", "Qm7Vx2Lr9Tz4");
    let aimock = Aimock::start_keyed(&fixtures(), &[&key]).await;
    let keychain = Keychain::start().await;
    let dirs = Dirs::new();
    let base_url = format!("{}/v1", aimock.url);

    // Without a key the server refuses, and the run says so.
    let refused = bridle_with_env(&dirs.data, &dirs.workspace, &run_args(&base_url), &keychain.env()).await;
    assert_eq!(refused.status.code(), Some(1), "{}", stderr(&refused));
    assert!(!answered(&refused));

    let set = auth_set(&dirs, &keychain, &base_url, &key).await;
    assert_eq!(set.status.code(), Some(0), "{}", stderr(&set));
    assert!(stderr(&set).contains("stored the key"), "{}", stderr(&set));
    assert!(!stderr(&set).contains(&key) && !stdout(&set).contains(&key), "the key is never printed");
    assert_eq!(keychain.lookup(&format!("openai@{base_url}")).await.as_deref(), Some(key.as_str()));

    let ran = bridle_with_env(&dirs.data, &dirs.workspace, &run_args(&base_url), &keychain.env()).await;
    assert_eq!(ran.status.code(), Some(0), "{}", stderr(&ran));
    assert!(answered(&ran), "{}", stdout(&ran));
    // A key for one server is not sent to another of the same kind.
    let other = format!("{}/v1/", aimock.url.replace("127.0.0.1", "localhost"));
    let elsewhere = bridle_with_env(&dirs.data, &dirs.workspace, &run_args(&other), &keychain.env()).await;
    assert!(!answered(&elsewhere), "{}", stdout(&elsewhere));

    // The key is in no file Bridle wrote.
    let mut holding = Vec::new();
    for entry in walk(&dirs.data).into_iter().chain(walk(&dirs.workspace)) {
        if std::fs::read(&entry).unwrap_or_default().windows(key.len()).any(|w| w == key.as_bytes()) {
            holding.push(entry);
        }
    }
    assert!(holding.is_empty(), "{holding:?}");

    let clear = bridle_with_env(
        &dirs.data,
        &dirs.workspace,
        &["auth", "clear", "--provider", "openai", "--base-url", &base_url],
        &keychain.env(),
    )
    .await;
    assert_eq!(clear.status.code(), Some(0), "{}", stderr(&clear));
    assert_eq!(keychain.lookup(&format!("openai@{base_url}")).await, None);
    let after = bridle_with_env(&dirs.data, &dirs.workspace, &run_args(&base_url), &keychain.env()).await;
    assert!(!answered(&after));
    // The environment still works when the keychain has nothing.
    let env = [keychain.env()[0], ("OPENAI_API_KEY", key.as_str())];
    let from_env = bridle_with_env(&dirs.data, &dirs.workspace, &run_args(&base_url), &env).await;
    assert!(answered(&from_env), "{}", stderr(&from_env));
}

#[tokio::test]
async fn without_a_keychain_auth_fails_clearly_and_run_falls_back_to_the_environment() {
    let key = "sk-env-only-Ab3Cd5Ef7";
    let aimock = Aimock::start_keyed(&fixtures(), &[key]).await;
    let dirs = Dirs::new();
    let base_url = format!("{}/v1", aimock.url);
    let nowhere = [("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/bridle-bus")];
    let mut child = Command::new(env!("CARGO_BIN_EXE_bridle"))
        .args(["auth", "set", "--provider", "openai", "--base-url", &base_url, "--data-dir"])
        .arg(&dirs.data)
        .envs(nowhere)
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(key.as_bytes()).await.unwrap();
    let set = child.wait_with_output().await.unwrap();
    assert_eq!(set.status.code(), Some(1));
    assert!(stderr(&set).contains("keychain"), "{}", stderr(&set));
    let empty = bridle_with_env(&dirs.data, &dirs.workspace, &["auth", "set", "--provider", "openai"], &nowhere).await;
    assert_eq!(empty.status.code(), Some(2), "an empty stdin is a usage error: {}", stderr(&empty));

    let env = [nowhere[0], ("OPENAI_API_KEY", key)];
    let ran = bridle_with_env(&dirs.data, &dirs.workspace, &run_args(&base_url), &env).await;
    assert_eq!(ran.status.code(), Some(0), "{}", stderr(&ran));
    assert!(answered(&ran));
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else { return out };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// A `[telemetry] headers` entry: its value stored with `bridle auth header` goes into the
/// keychain only (not the config), and every export request carries it.
#[tokio::test]
async fn a_telemetry_header_from_the_keychain_reaches_the_collector() {
    let token = "team-token-Hd83kQ0zPw";
    let aimock = Aimock::start_with(&fixtures()).await;
    let receiver = super::telemetry::Receiver::start(0.0).await;
    let keychain = Keychain::start().await;
    let dirs = Dirs::new();
    std::fs::create_dir_all(&dirs.data).unwrap();
    let config = format!("[telemetry]\nendpoint = \"{}\"\nheaders = [\"x-team-token\"]\n", receiver.url);
    std::fs::write(dirs.data.join("config.toml"), &config).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_bridle"))
        .args(["auth", "header", "x-team-token", "--data-dir"])
        .arg(&dirs.data)
        .arg("--workspace")
        .arg(&dirs.workspace)
        .envs(keychain.env())
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(token.as_bytes()).await.unwrap();
    let out = child.wait_with_output().await.unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(dirs.data.join("config.toml")).unwrap(), config, "the config is untouched");
    let account = bridle_core::secrets::header_account("x-team-token", &receiver.url);
    assert_eq!(keychain.lookup(&account).await.as_deref(), Some(token));

    let base_url = format!("{}/v1", aimock.url);
    let mut env = keychain.env().to_vec();
    env.push(("OPENAI_API_KEY", "sk-test"));
    let run = bridle_with_env(&dirs.data, &dirs.workspace, &run_args(&base_url), &env).await;
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    let logs = receiver.requests("/v1/logs");
    assert!(!logs.is_empty(), "records reached the collector");
    for request in &logs {
        assert_eq!(request["headers"]["x-team-token"], token, "{}", request["headers"]);
    }
}
