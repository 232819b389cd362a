//! What identifies a call for an approval: its hash, its preview and its session grant keys.
//!
//! Rule: the call hash covers the tool name, the canonical repaired arguments and, for file
//! changes, the plan (each file's content before and after); so an answer binds exactly the
//! change the human saw, and a file changed meanwhile is noticed before anything runs.

use sha2::{Digest, Sha256};

use crate::changes::ChangePlan;
use crate::tools::{PreparedCall, ToolContext, ToolError, ToolKind};
use crate::workspace::Workspace;

/// The plan of a file change as `ctx` would make it now, or `None` for a call that changes no
/// files through a plan (the error of a plan that cannot be made shows when the call runs).
pub async fn plan(call: &PreparedCall, ctx: &ToolContext) -> Option<Result<ChangePlan, ToolError>> {
    call.tool.plan(&call.args, ctx).await
}

/// The call hash of `call` with the plan it would commit (hex SHA-256).
pub fn call_hash(call: &PreparedCall, plan: Option<&Result<ChangePlan, ToolError>>) -> String {
    let mut hasher = Sha256::new();
    field(&mut hasher, call.name.as_bytes());
    field(&mut hasher, call.canonical_args.as_bytes());
    match plan {
        Some(Ok(plan)) => {
            for line in plan.fingerprint() {
                field(&mut hasher, line.as_bytes());
            }
        }
        Some(Err(e)) => field(&mut hasher, format!("unplannable:{e}").as_bytes()),
        None => {}
    }
    hex(&hasher.finalize())
}

/// What the human sees of a file change before approving it: the plan's diff.
pub fn preview(plan: Option<&Result<ChangePlan, ToolError>>) -> Option<String> {
    match plan? {
        Ok(plan) => Some(plan.diff()),
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

    #[tokio::test]
    async fn the_hash_follows_the_plan_and_the_arguments() {
        let (dir, _ws) = setup();
        let reg = builtin_registry().unwrap();
        let ctx = crate::tools::testing::context(&dir.path().join("ws"));
        let hash = |call: &PreparedCall| {
            let ctx = ctx.clone();
            let call = call.clone();
            async move { call_hash(&call, plan(&call, &ctx).await.as_ref()) }
        };
        let call = reg.prepare("write_file", r#"{"path":"a.txt","content":"x"}"#).unwrap();
        let absent = hash(&call).await;
        std::fs::write(dir.path().join("ws/a.txt"), "one").unwrap();
        let one = hash(&call).await;
        assert_ne!(absent, one);
        assert_eq!(one, hash(&call).await);
        std::fs::write(dir.path().join("ws/a.txt"), "two").unwrap();
        assert_ne!(one, hash(&call).await);
        let other = reg.prepare("write_file", r#"{"path":"a.txt","content":"y"}"#).unwrap();
        assert_ne!(hash(&other).await, hash(&call).await);
        // A command's hash does not depend on files.
        let bash = reg.prepare("bash", r#"{"command":"ls"}"#).unwrap();
        assert!(plan(&bash, &ctx).await.is_none());
        assert_eq!(hash(&bash).await, hash(&bash).await);
    }

    #[tokio::test]
    async fn a_preview_writes_nothing() {
        let (dir, _ws) = setup();
        std::fs::write(dir.path().join("ws/a.txt"), "one\n").unwrap();
        let reg = builtin_registry().unwrap();
        let ctx = crate::tools::testing::context(&dir.path().join("ws"));
        let call = reg.prepare("edit_file", r#"{"path":"a.txt","old_string":"one","new_string":"two"}"#).unwrap();
        let diff = preview(plan(&call, &ctx).await.as_ref()).unwrap();
        assert!(diff.contains("-one\n+two\n"), "{diff}");
        let patch = "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+hi\n";
        let call = reg.prepare("apply_patch", &serde_json::json!({ "patch": patch }).to_string()).unwrap();
        assert!(preview(plan(&call, &ctx).await.as_ref()).unwrap().contains("+hi"));
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
