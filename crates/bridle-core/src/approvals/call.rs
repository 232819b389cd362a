//! What identifies a call for an approval: its hash, its preview and its session grant keys.
//!
//! Rule: the call hash covers the tool name, the canonical repaired arguments and, for file
//! changes, the hash of each target file's current content; so an answer binds exactly the call
//! the human saw, and a file changed meanwhile is noticed before anything runs.

use sha2::{Digest, Sha256};

use crate::sandbox::{Access, Place};
use crate::tools::{PreparedCall, ToolContext, ToolKind};
use crate::workspace::Workspace;

/// The call hash of `call` as `session_id` would run it now (hex SHA-256).
pub fn call_hash(call: &PreparedCall, workspace: &Workspace, session_id: &str) -> String {
    let mut hasher = Sha256::new();
    field(&mut hasher, call.name.as_bytes());
    field(&mut hasher, call.canonical_args.as_bytes());
    if call.kind == ToolKind::Write {
        for (path, access) in call.tool.paths(&call.args) {
            if access != Access::Write {
                continue;
            }
            field(&mut hasher, path.as_bytes());
            let content = match workspace.sandbox.resolve(&path, access, session_id) {
                Ok(resolved) => match resolved.place {
                    Place::Workspace(rel) => match workspace.fs.read_if_exists(&rel) {
                        Ok(Some(bytes)) => format!("sha256:{}", hex(&Sha256::digest(&bytes))),
                        Ok(None) => "absent".to_string(),
                        Err(e) => format!("unreadable:{e}"),
                    },
                    Place::ToolOutput(_) => "tool-output".to_string(),
                },
                Err(e) => format!("refused:{e}"),
            };
            field(&mut hasher, content.as_bytes());
        }
    }
    hex(&hasher.finalize())
}

/// The diff a file change would make, computed by running the tool dry; `None` for tools that
/// change no files, or when the change cannot be computed (the error shows when it runs).
pub async fn preview(call: &PreparedCall, ctx: ToolContext) -> Option<String> {
    if call.kind != ToolKind::Write {
        return None;
    }
    let ctx = ToolContext { dry_run: true, ..ctx };
    match call.tool.call(call.args.clone(), ctx).await {
        Ok(out) => Some(out.diff.unwrap_or_default()),
        Err(e) => Some(format!("(no preview: {e})")),
    }
}

/// Prefix of grant keys for shell commands: forgotten when an exec-config file changes.
pub const COMMAND_GRANT: &str = "command:";

/// What an "approve for this session" remembers: the exact command for `bash`, the tool on each
/// path for file tools, the tool itself otherwise. Nothing for a command that escalates out of
/// the shell sandbox: each escalation is approved once, and a session approval of the confined
/// command never lets it out.
pub fn grant_keys(call: &PreparedCall, workspace: &Workspace, session_id: &str) -> Vec<String> {
    if call.kind == ToolKind::Exec {
        if call.args.get("escalate").and_then(|e| e.as_bool()).unwrap_or(false) {
            return Vec::new();
        }
        let command = call.args.get("command").and_then(|c| c.as_str()).unwrap_or_default();
        return vec![format!("{COMMAND_GRANT}{}\u{0}{command}", call.name)];
    }
    let paths = call.tool.paths(&call.args);
    if paths.is_empty() {
        return vec![format!("tool:{}", call.name)];
    }
    paths
        .iter()
        .map(|(path, access)| {
            let place = workspace.sandbox.resolve(path, *access, session_id).map(|r| r.display());
            format!("path:{}\u{0}{}", call.name, place.unwrap_or_else(|_| path.clone()))
        })
        .collect()
}

fn field(hasher: &mut Sha256, bytes: &[u8]) {
    hasher.update((bytes.len() as u64).to_le_bytes());
    hasher.update(bytes);
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::tools::builtin_registry;

    fn setup() -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("ws")).unwrap();
        let ws = Workspace::open(&dir.path().join("ws"), None, &dir.path().join("data"), &[]).unwrap();
        (dir, ws)
    }

    #[test]
    fn the_hash_follows_the_target_file_and_the_arguments() {
        let (dir, ws) = setup();
        let reg = builtin_registry().unwrap();
        let call = reg.prepare("write_file", r#"{"path":"a.txt","content":"x"}"#).unwrap();
        let absent = call_hash(&call, &ws, "s");
        std::fs::write(dir.path().join("ws/a.txt"), "one").unwrap();
        let one = call_hash(&call, &ws, "s");
        assert_ne!(absent, one);
        assert_eq!(one, call_hash(&call, &ws, "s"));
        std::fs::write(dir.path().join("ws/a.txt"), "two").unwrap();
        assert_ne!(one, call_hash(&call, &ws, "s"));
        let other = reg.prepare("write_file", r#"{"path":"a.txt","content":"y"}"#).unwrap();
        assert_ne!(call_hash(&other, &ws, "s"), call_hash(&call, &ws, "s"));
        // A command's hash does not depend on files.
        let bash = reg.prepare("bash", r#"{"command":"ls"}"#).unwrap();
        assert_eq!(call_hash(&bash, &ws, "s"), call_hash(&bash, &ws, "s"));
    }

    #[tokio::test]
    async fn a_preview_writes_nothing() {
        let (dir, _ws) = setup();
        std::fs::write(dir.path().join("ws/a.txt"), "one\n").unwrap();
        let reg = builtin_registry().unwrap();
        let ctx = crate::tools::testing::context(&dir.path().join("ws"));
        let call = reg.prepare("edit_file", r#"{"path":"a.txt","old_string":"one","new_string":"two"}"#).unwrap();
        let diff = preview(&call, ctx.clone()).await.unwrap();
        assert!(diff.contains("-one\n+two\n"), "{diff}");
        let patch = "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+hi\n";
        let call = reg.prepare("apply_patch", &serde_json::json!({ "patch": patch }).to_string()).unwrap();
        assert!(preview(&call, ctx).await.unwrap().contains("+hi"));
        assert_eq!(std::fs::read_to_string(dir.path().join("ws/a.txt")).unwrap(), "one\n");
        assert!(!dir.path().join("ws/new.txt").exists());
    }

    #[test]
    fn grant_keys_name_the_command_or_the_path() {
        let (_dir, ws) = setup();
        let reg = builtin_registry().unwrap();
        let bash = reg.prepare("bash", r#"{"command":"npm test"}"#).unwrap();
        assert_eq!(grant_keys(&bash, &ws, "s"), vec!["command:bash\u{0}npm test".to_string()]);
        let edit = reg.prepare("write_file", r#"{"path":"src/../b.txt","content":""}"#).unwrap();
        assert_eq!(grant_keys(&edit, &ws, "s"), vec!["path:write_file\u{0}b.txt".to_string()]);
        let time = reg.prepare("get_current_time", "{}").unwrap();
        assert_eq!(grant_keys(&time, &ws, "s"), vec!["tool:get_current_time".to_string()]);
        let escalated = reg.prepare("bash", r#"{"command":"npm test","escalate":true}"#).unwrap();
        assert!(grant_keys(&escalated, &ws, "s").is_empty(), "an escalation is never remembered");
    }
}
