//! What identifies a call for an approval: its hash, its preview and its session grant keys.
//!
//! Rule: the call hash covers the tool name, the canonical repaired arguments and, for file
//! changes, the plan (each file's content before and after); so an answer binds exactly the
//! change the human saw, and a file changed meanwhile is noticed before anything runs.

use sha2::{Digest, Sha256};

use super::Calls;
use crate::changes::ChangePlan;
use crate::tools::{Covers, PreparedCall, ToolError};

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

impl Calls {
    /// What an "approve for this session" of `call` remembers, as its tool says it covers: the
    /// exact command, the tool on each path (as it resolves in the workspace), the tool itself,
    /// or nothing.
    pub fn grant_keys(&self, call: &PreparedCall, session_id: &str) -> Vec<String> {
        match call.call.covers() {
            Covers::Nothing => Vec::new(),
            Covers::Command(command) => vec![format!("{COMMAND_GRANT}{}\u{0}{command}", call.name)],
            Covers::Tool => vec![format!("tool:{}", call.name)],
            Covers::Paths => call
                .call
                .paths()
                .iter()
                .map(|(path, access)| {
                    let place = self.workspace.sandbox.resolve(path, *access, session_id).map(|r| r.display());
                    format!("path:{}\u{0}{}", call.name, place.unwrap_or_else(|_| path.clone()))
                })
                .collect(),
        }
    }
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

    fn setup() -> (tempfile::TempDir, Calls) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("ws")).unwrap();
        let ctx = crate::tools::testing::context(&dir.path().join("ws"));
        let calls = Calls::for_tests(ctx.workspace.clone());
        (dir, calls)
    }

    #[tokio::test]
    async fn the_hash_follows_the_plan_and_the_arguments() {
        let (dir, _calls) = setup();
        let reg = builtin_registry().unwrap();
        let ctx = crate::tools::testing::context(&dir.path().join("ws"));
        let hash = |call: &PreparedCall| {
            let ctx = ctx.clone();
            let call = call.clone();
            async move { call_hash(&call, call.call.plan(&ctx).await.as_ref()) }
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
        assert!(bash.call.plan(&ctx).await.is_none());
        assert_eq!(hash(&bash).await, hash(&bash).await);
    }

    #[tokio::test]
    async fn a_preview_writes_nothing() {
        let (dir, _calls) = setup();
        std::fs::write(dir.path().join("ws/a.txt"), "one\n").unwrap();
        let reg = builtin_registry().unwrap();
        let ctx = crate::tools::testing::context(&dir.path().join("ws"));
        let call = reg.prepare("edit_file", r#"{"path":"a.txt","old_string":"one","new_string":"two"}"#).unwrap();
        let diff = preview(call.call.plan(&ctx).await.as_ref()).unwrap();
        assert!(diff.contains("-one\n+two\n"), "{diff}");
        let patch = "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+hi\n";
        let call = reg.prepare("apply_patch", &serde_json::json!({ "patch": patch }).to_string()).unwrap();
        assert!(preview(call.call.plan(&ctx).await.as_ref()).unwrap().contains("+hi"));
        assert_eq!(std::fs::read_to_string(dir.path().join("ws/a.txt")).unwrap(), "one\n");
        assert!(!dir.path().join("ws/new.txt").exists());
    }

    #[test]
    fn grant_keys_name_the_command_or_the_path() {
        let (_dir, calls) = setup();
        let reg = builtin_registry().unwrap();
        let bash = reg.prepare("bash", r#"{"command":"npm test"}"#).unwrap();
        assert_eq!(calls.grant_keys(&bash, "s"), vec!["command:bash\u{0}npm test".to_string()]);
        let edit = reg.prepare("write_file", r#"{"path":"src/../b.txt","content":""}"#).unwrap();
        assert_eq!(calls.grant_keys(&edit, "s"), vec!["path:write_file\u{0}b.txt".to_string()]);
        let time = reg.prepare("get_current_time", "{}").unwrap();
        assert_eq!(calls.grant_keys(&time, "s"), vec!["tool:get_current_time".to_string()]);
        let escalated = reg.prepare("bash", r#"{"command":"npm test","escalate":true}"#).unwrap();
        assert!(calls.grant_keys(&escalated, "s").is_empty(), "an escalation is never remembered");
    }
}
