//! Running the real `bridle` binary with its own data dir and workspace.

use std::path::{Path, PathBuf};
use std::process::Output;

pub struct Dirs {
    _root: tempfile::TempDir,
    pub data: PathBuf,
    pub workspace: PathBuf,
}

impl Dirs {
    pub fn new() -> Dirs {
        Dirs::made(tempfile::tempdir().unwrap())
    }

    /// Folders outside `/tmp` (in the build's own scratch folder, under the user's home in CI),
    /// as a user's projects are: under Landlock a command may write anywhere in `/tmp`.
    pub fn outside_tmp() -> Dirs {
        Dirs::made(tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap())
    }

    fn made(root: tempfile::TempDir) -> Dirs {
        let data = root.path().join("data");
        let workspace = root.path().join("project");
        std::fs::create_dir_all(&workspace).unwrap();
        Dirs { _root: root, data, workspace }
    }
}

/// Runs `bridle ARGS --data-dir D --workspace W` with a scrubbed environment.
pub async fn bridle(dirs: &Dirs, args: &[&str]) -> Output {
    bridle_in(&dirs.data, &dirs.workspace, args).await
}

pub async fn bridle_in(data: &Path, workspace: &Path, args: &[&str]) -> Output {
    bridle_with_env(data, workspace, args, &[]).await
}

/// [`bridle_in`] with extra environment variables, as a user's shell would have them.
pub async fn bridle_with_env(data: &Path, workspace: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    command(data, workspace, args).envs(env.iter().copied()).stdin(std::process::Stdio::null()).output().await.unwrap()
}

/// `bridle ARGS --data-dir D --workspace W` with a scrubbed environment, not started yet.
pub fn command(data: &Path, workspace: &Path, args: &[&str]) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_bridle"));
    command
        .args(args)
        .arg("--data-dir")
        .arg(data)
        .arg("--workspace")
        .arg(workspace)
        .env_remove("BRIDLE_DATA_DIR")
        .env_remove("BRIDLE_CONFIG")
        .env_remove("BRIDLE_WORKSPACE")
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        // The developer's own keychain stays out of the tests; keychain tests bring their own.
        .env_remove("DBUS_SESSION_BUS_ADDRESS");
    command
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

pub fn json_lines(output: &Output) -> Vec<serde_json::Value> {
    stdout(output)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not a JSON line ({e}): {l}")))
        .collect()
}
