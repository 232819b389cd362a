//! The adversarial path suite: every way out of the workspace, through every file tool of the
//! real CLI. For each: nothing outside is read, written or created (bytes, mtimes and the list of
//! files outside are compared), and the model gets a clear error.

use std::collections::BTreeMap;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use pretty_assertions::assert_eq;
use serde_json::{json, Value};

use super::bridle::*;

/// `<tmp>/home/project` is the workspace; beside it `project-evil`, a home with `.ssh`, and a
/// file outside home. Symlinks inside the workspace point out.
struct World {
    _tmp: tempfile::TempDir,
    top: PathBuf,
    home: PathBuf,
    ws: PathBuf,
    data: PathBuf,
}

fn world() -> World {
    let tmp = tempfile::tempdir().unwrap();
    let top = tmp.path().canonicalize().unwrap();
    let home = top.join("home");
    let ws = home.join("project");
    for dir in [ws.join("src"), home.join("project-evil"), home.join(".ssh")] {
        std::fs::create_dir_all(dir).unwrap();
    }
    std::fs::write(ws.join("src/ok.txt"), "inside\n").unwrap();
    std::fs::write(home.join("project-evil/secret.txt"), "evil secret\n").unwrap();
    std::fs::write(home.join(".ssh/id_rsa"), "-----BEGIN KEY-----\n").unwrap();
    std::fs::write(home.join("notes.txt"), "home notes\n").unwrap();
    std::fs::write(top.join("outside.txt"), "outside\n").unwrap();
    symlink(home.join("project-evil/secret.txt"), ws.join("link-file")).unwrap();
    symlink(home.join("project-evil"), ws.join("link-dir")).unwrap();
    let data = top.join("data");
    World { _tmp: tmp, top, home, ws, data }
}

/// Every file outside the workspace with its bytes and mtime.
fn outside_snapshot(w: &World) -> BTreeMap<PathBuf, (Vec<u8>, SystemTime)> {
    fn walk(dir: &Path, skip: &[&Path], out: &mut BTreeMap<PathBuf, (Vec<u8>, SystemTime)>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if skip.iter().any(|s| path.starts_with(s)) {
                continue;
            }
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                walk(&path, skip, out);
            } else {
                out.insert(path.clone(), (std::fs::read(&path).unwrap_or_default(), meta.modified().unwrap()));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(&w.top, &[&w.ws, &w.data], &mut out);
    out
}

async fn call(w: &World, tool: &str, args: Value) -> (Option<i32>, Value) {
    let args = args.to_string();
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_bridle"))
        .args(["tool", tool, "--args", &args, "--mode", "bypass", "--data-dir"])
        .arg(&w.data)
        .arg("--workspace")
        .arg(&w.ws)
        .env("HOME", &w.home)
        .env_remove("BRIDLE_DATA_DIR")
        .env_remove("BRIDLE_CONFIG")
        .env_remove("BRIDLE_WORKSPACE")
        .output()
        .await
        .unwrap();
    let lines = json_lines(&out);
    assert_eq!(lines.len(), 1, "{tool} {args}: {}", stderr(&out));
    (out.status.code(), lines.into_iter().next().unwrap())
}

/// The calls each hostile path is tried with.
fn attempts(path: &str) -> Vec<(&'static str, Value)> {
    let patch = format!("--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-evil secret\n+pwned\n");
    vec![
        ("read_file", json!({"path": path})),
        ("write_file", json!({"path": path, "content": "pwned\n"})),
        ("append_file", json!({"path": path, "content": "pwned\n"})),
        ("edit_file", json!({"path": path, "old_text": "evil secret", "new_text": "pwned"})),
        ("apply_patch", json!({"patch": patch})),
        ("list_files", json!({"path": path})),
        ("glob_search", json!({"pattern": "**/*", "path": path})),
        ("grep_search", json!({"pattern": "secret|KEY", "path": path})),
    ]
}

#[tokio::test]
async fn no_way_out_of_the_workspace() {
    let w = world();
    let before = outside_snapshot(&w);
    let hostile: Vec<(String, &str)> = vec![
        ("../project-evil/secret.txt".into(), "outside-workspace"),
        ("src/../../project-evil/secret.txt".into(), "outside-workspace"),
        ("../../../../../../../../outside.txt".into(), "outside-workspace"),
        ("new/../../outside-new.txt".into(), "outside-workspace"),
        (w.top.join("outside.txt").display().to_string(), "outside-workspace"),
        (w.home.join("project-evil/secret.txt").display().to_string(), "outside-workspace"),
        ("link-file".into(), "outside-workspace"),
        ("link-dir/secret.txt".into(), "outside-workspace"),
        ("link-dir/created-through-link.txt".into(), "outside-workspace"),
        ("~/notes.txt".into(), "outside-workspace"),
        ("$HOME/notes.txt".into(), "outside-workspace"),
        ("~/.ssh/id_rsa".into(), "sensitive-path"),
        ("${HOME}/.ssh/id_rsa".into(), "sensitive-path"),
        ("~/.ssh/authorized_keys".into(), "sensitive-path"),
        ("src/\u{0}../../outside.txt".into(), "invalid-path"),
    ];
    for (path, rule) in &hostile {
        for (tool, args) in attempts(path) {
            let (code, report) = call(&w, tool, args).await;
            assert_eq!(code, Some(4), "{tool} {path:?} must be denied: {report}");
            assert_eq!(
                (report["decision"].as_str(), report["source"].as_str()),
                (Some("deny"), Some("sandbox")),
                "{tool} {path:?}"
            );
            assert_eq!(report["executed"], false);
            assert_eq!(report["findings"][0]["rule"], *rule, "{tool} {path:?}: {report}");
            let message = report["result"]["output"].as_str().unwrap();
            assert!(message.starts_with("Denied: "), "{message}");
            assert_eq!(report["result"]["isError"], true);
        }
    }
    assert_eq!(outside_snapshot(&w), before, "something outside the workspace changed");
    assert!(!w.top.join("outside-new.txt").exists());
    assert!(!w.home.join("project-evil/created-through-link.txt").exists());
}

#[tokio::test]
async fn inside_paths_in_every_form_still_work() {
    let w = world();
    let absolute = w.ws.join("src/ok.txt").display().to_string();
    for path in ["src/ok.txt", "./src/../src/ok.txt", absolute.as_str(), "~/project/src/ok.txt"] {
        let (code, report) = call(&w, "read_file", json!({"path": path})).await;
        assert_eq!(code, Some(0), "{path}: {report}");
        assert_eq!(report["result"]["output"], "inside\n");
    }
}

#[tokio::test]
async fn over_long_and_odd_names_get_clear_errors() {
    let w = world();
    let before = outside_snapshot(&w);
    let long = "a/".repeat(3000) + "b.txt";
    let (code, report) = call(&w, "write_file", json!({"path": long, "content": "x"})).await;
    assert_eq!(code, Some(1), "{report}");
    assert!(report["result"]["output"].as_str().unwrap().contains("too long"), "{report}");
    // A single name past NAME_MAX is refused while resolving it, before anything runs.
    let long_name = "n".repeat(300);
    let (code, report) = call(&w, "write_file", json!({"path": long_name, "content": "x"})).await;
    assert_eq!(code, Some(4), "{report}");
    assert_eq!(report["findings"][0]["rule"], "invalid-path");
    assert!(report["result"]["output"].as_str().unwrap().contains("too long"), "{report}");
    // A name that is not UTF-8 on disk cannot be named exactly in JSON; the lossy form is not it.
    std::fs::write(w.ws.join(std::ffi::OsStr::from_bytes_compat(b"caf\xe9.txt")), "bytes").unwrap();
    let (code, report) = call(&w, "read_file", json!({"path": "caf\u{FFFD}.txt"})).await;
    assert_eq!(code, Some(1), "{report}");
    assert!(report["result"]["output"].as_str().unwrap().contains("No such file"), "{report}");
    assert_eq!(outside_snapshot(&w), before);
}

trait FromBytesCompat {
    fn from_bytes_compat(bytes: &[u8]) -> &std::ffi::OsStr;
}

impl FromBytesCompat for std::ffi::OsStr {
    fn from_bytes_compat(bytes: &[u8]) -> &std::ffi::OsStr {
        std::os::unix::ffi::OsStrExt::from_bytes(bytes)
    }
}
