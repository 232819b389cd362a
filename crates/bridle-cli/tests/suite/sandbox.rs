//! The shell sandbox from the user's side: real escape attempts, run for real through `bridle
//! tool bash` in `auto` (approved where the guard asks: an approved call is still confined), each
//! aimed only at things the test made, so nothing is harmed if the sandbox is missing. Run with
//! bubblewrap, with Landlock forced, and with the sandbox off. Each target is read from a file
//! at run time (`$(cat .t/NAME)`), a disguise no reader of text can see through, so what is
//! tested is the kernel, not the guard.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::bridle::*;

/// Canaries, a fake home with a secret, and the data dir's config — outside `/tmp`, so a private
/// `/tmp` cannot make an attempt fail for the wrong reason.
struct Targets {
    _root: tempfile::TempDir,
    canaries: PathBuf,
    home: PathBuf,
}

impl Targets {
    fn new() -> Targets {
        let root = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
        let canaries = root.path().join("canaries");
        let home = root.path().join("home");
        std::fs::create_dir_all(&canaries).unwrap();
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        std::fs::write(canaries.join("canary"), "untouched\n").unwrap();
        std::fs::write(home.join(".ssh/id_rsa"), "SECRET-KEY-MATERIAL\n").unwrap();
        Targets { canaries, home, _root: root }
    }
}

async fn run_bash(dirs: &Dirs, home: &Path, command: &str) -> Value {
    let args = json!({ "command": command }).to_string();
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_bridle"))
        .args(["tool", "bash", "--mode", "auto", "--approve", "--args", &args])
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
    let report: Value = serde_json::from_str(&stdout(&out))
        .unwrap_or_else(|e| panic!("not JSON ({e}): {} {}", stdout(&out), stderr(&out)));
    assert_eq!(report["executed"], true, "`{command}` did not run: {report}");
    report["result"].clone()
}

fn output(result: &Value) -> &str {
    result["output"].as_str().unwrap()
}

/// Every attempt, then ordinary work; `expected` is the sandbox the results must name.
async fn escapes_fail_and_work_goes_on(config: &str, expected: &str) {
    let mut dirs = Dirs::new();
    let t = Targets::new();
    // Where a user's data dir is: not under /tmp (a masked folder inside a writable one keeps
    // Landlock from granting new files at that folder's top).
    dirs.data = t.canaries.with_file_name("data");
    std::fs::create_dir_all(&dirs.data).unwrap();
    let config_file = dirs.data.join("config.toml");
    std::fs::write(&config_file, config).unwrap();
    let canary = t.canaries.join("canary");
    let hide = |name: &str, value: &str| {
        std::fs::create_dir_all(dirs.workspace.join(".t")).unwrap();
        std::fs::write(dirs.workspace.join(".t").join(name), value).unwrap();
    };
    hide("canaries", &t.canaries.display().to_string());
    hide("data", &dirs.data.display().to_string());

    // Writes outside the workspace, through a variable and through brace expansion.
    let r = run_bash(&dirs, &t.home, "D=$(cat .t/canaries); echo pwned > $D/canary").await;
    assert_eq!(r["data"]["sandbox"], expected, "{r}");
    let r2 = run_bash(&dirs, &t.home, "{cp,/etc/hostname,$(cat .t/canaries)/brace}").await;
    assert_eq!(std::fs::read_to_string(&canary).unwrap(), "untouched\n", "{r}");
    assert!(!t.canaries.join("brace").exists(), "{r2}");

    // A secret under the (fake) home, read through a variable.
    hide("home", &t.home.display().to_string());
    let r = run_bash(&dirs, &t.home, "H=$(cat .t/home); cat $H/.ssh/id_rsa").await;
    assert!(!output(&r).contains("SECRET-KEY-MATERIAL"), "{r}");

    // A connection to a listener the test runs on loopback.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    hide("port", &port.to_string());
    let r = run_bash(&dirs, &t.home, "P=$(cat .t/port); exec 3<>/dev/tcp/127.0.0.1/$P && echo connected").await;
    assert!(listener.accept().is_err(), "the command connected: {r}");
    assert!(!output(&r).contains("connected\n"), "{r}");

    // A signal to a process the test started.
    let mut victim = std::process::Command::new("sleep").arg("300").spawn().unwrap();
    hide("victim", &victim.id().to_string());
    let r = run_bash(&dirs, &t.home, "V=$(cat .t/victim); kill -9 $V").await;
    std::thread::sleep(std::time::Duration::from_millis(100));
    assert!(victim.try_wait().unwrap().is_none(), "the test's process was killed: {r}");
    victim.kill().unwrap();
    let _ = victim.wait();

    // Bridle's own config, rewritten to turn the guard off.
    let r = run_bash(&dirs, &t.home, "C=$(cat .t/data); echo 'mode = \"bypass\"' > $C/config.toml").await;
    assert_eq!(std::fs::read_to_string(&config_file).unwrap(), config, "{r}");

    // Persistence through git (bubblewrap only: see shell_sandbox/landlock.rs for why).
    let git = std::process::Command::new("git").args(["init", "-q"]).current_dir(&dirs.workspace).status().unwrap();
    assert!(git.success());
    let git_config = std::fs::read_to_string(dirs.workspace.join(".git/config")).unwrap();
    if expected == "bwrap" {
        let r = run_bash(
            &dirs,
            &t.home,
            "G=.git; printf '[core]\\n\\thooksPath = /x\\n' >> $G/config; touch $G/hooks/pre-commit",
        )
        .await;
        assert_eq!(std::fs::read_to_string(dirs.workspace.join(".git/config")).unwrap(), git_config, "{r}");
        assert!(!dirs.workspace.join(".git/hooks/pre-commit").exists(), "{r}");
        // Swapping in a writable copy of .git.
        let r =
            run_bash(&dirs, &t.home, "mv .git .git2 && mkdir .git && cp -r .git2/. .git/; echo x >> .git/config").await;
        assert!(!dirs.workspace.join(".git.2").exists(), "{r}");
        assert_eq!(std::fs::read_to_string(dirs.workspace.join(".git/config")).unwrap(), git_config, "{r}");
    }

    // Ordinary work still works: a build, a test, writes inside the workspace and in /tmp.
    std::fs::write(
        dirs.workspace.join("Makefile"),
        "all:\n\techo built > out.txt\ntest: all\n\tgrep -q built out.txt\n",
    )
    .unwrap();
    let r = run_bash(&dirs, &t.home, "make -s && make -s test && echo scratch > /tmp/bridle-scratch && cat /tmp/bridle-scratch && git status --short | wc -l").await;
    assert_eq!(r["data"]["exitCode"], 0, "{r}");
    assert!(output(&r).contains("scratch"), "{r}");
    assert_eq!(std::fs::read_to_string(dirs.workspace.join("out.txt")).unwrap(), "built\n");

    // How each command ran is on the record.
    let audit = bridle(&dirs, &["audit", "--kind", "tool_completed", "--json"]).await;
    let rows = json_lines(&audit);
    assert!(rows.len() >= 7, "{}", stdout(&audit));
    assert!(rows.iter().all(|r| r["payload"]["sandbox"] == expected), "{}", stdout(&audit));
}

#[tokio::test]
async fn bubblewrap_contains_every_escape_class() {
    escapes_fail_and_work_goes_on("mode = \"auto\"\n", "bwrap").await;
}

#[tokio::test]
async fn landlock_contains_them_when_bubblewrap_is_not_used() {
    escapes_fail_and_work_goes_on("mode = \"auto\"\n[sandbox]\nbackend = \"landlock\"\n", "landlock").await;
}

#[tokio::test]
async fn without_a_sandbox_auto_asks_for_every_command_and_results_say_so() {
    let dirs = Dirs::new();
    std::fs::create_dir_all(&dirs.data).unwrap();
    std::fs::write(dirs.data.join("config.toml"), "mode = \"auto\"\n[sandbox]\nenabled = false\n").unwrap();
    let out = bridle(&dirs, &["guard", "bash", "--args", r#"{"command":"ls"}"#]).await;
    assert_eq!(out.status.code(), Some(3), "{}", stdout(&out));
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert!(report["findings"].to_string().contains("without an OS sandbox"), "{report}");

    let out = bridle(&dirs, &["tool", "bash", "--approve", "--args", r#"{"command":"echo ran"}"#]).await;
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(report["result"]["data"]["sandbox"], "none");
    assert!(output(&report["result"]).contains("[note: ran without an OS sandbox"), "{report}");

    // An allow rule lifts the ask, as for any command the mode asks about.
    std::fs::write(
        dirs.data.join("config.toml"),
        "mode = \"auto\"\n[sandbox]\nenabled = false\n[rules]\nallow = [\"bash(ls*)\"]\n",
    )
    .unwrap();
    let out = bridle(&dirs, &["guard", "bash", "--args", r#"{"command":"ls"}"#]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
}

#[tokio::test]
async fn an_escalation_asks_even_in_auto_and_runs_unconfined_once_approved() {
    let dirs = Dirs::new();
    let t = Targets::new();
    let target = t.canaries.join("escalated");
    let command = format!("echo out > {}", target.display());
    let args = json!({"command": command, "escalate": true, "justification": "write the build cache"}).to_string();
    let out = bridle(&dirs, &["tool", "bash", "--mode", "auto", "--args", &args]).await;
    assert_eq!(out.status.code(), Some(3), "{}", stdout(&out));
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert!(report["findings"].to_string().contains("write the build cache"), "{report}");
    assert!(!target.exists());

    // The same call without escalating is confined; escalated and approved, it runs outside once.
    let confined = json!({ "command": command }).to_string();
    let out = bridle(&dirs, &["tool", "bash", "--mode", "auto", "--approve", "--args", &confined]).await;
    assert!(!target.exists(), "{}", stdout(&out));
    let out = bridle(&dirs, &["tool", "bash", "--mode", "auto", "--approve", "--args", &args]).await;
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(report["result"]["data"]["sandbox"], "none", "{report}");
    assert_eq!(report["result"]["data"]["escalated"], true);
    assert!(target.exists());
}

#[tokio::test]
async fn git_works_in_a_workspace_that_is_a_sub_folder_of_a_repository() {
    // Outside /tmp, as a user's repository is (the private /tmp hides what is around it).
    let t = Targets::new();
    let repo = t.canaries.with_file_name("repo");
    let mut dirs = Dirs::new();
    dirs.workspace = repo.join("project");
    std::fs::create_dir_all(&dirs.workspace).unwrap();
    let git = |args: &[&str]| std::process::Command::new("git").args(args).current_dir(&repo).status().unwrap();
    assert!(git(&["init", "-q"]).success());
    std::fs::write(dirs.workspace.join("a.txt"), "a").unwrap();
    let r = run_bash(&dirs, &t.home, "git status --short").await;
    assert_eq!(r["data"]["exitCode"], 0, "{r}");
    assert!(output(&r).contains("?? ./"), "{r}");
}
