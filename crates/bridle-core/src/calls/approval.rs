//! What identifies a question for an approval: its hash, its preview and its session grant keys.
//!
//! Rule: one hash for every question, of its length-prefixed parts; the call hash covers the tool name, the canonical repaired arguments and, for file
//! changes, the plan (each file's content before and after); so an answer binds exactly the
//! change the human saw, and a file changed meanwhile is noticed before anything runs.

use sha2::{Digest, Sha256};

use super::Calls;
use crate::changes::ChangePlan;
use crate::tools::{Covers, PreparedCall, ToolError};

/// The call hash of `call` with the plan it would commit (hex SHA-256).
pub fn call_hash(call: &PreparedCall, plan: Option<&Result<ChangePlan, ToolError>>) -> String {
    let mut parts = vec![call.name.clone(), call.canonical_args.clone()];
    match plan {
        Some(Ok(plan)) => parts.extend(plan.fingerprint()),
        Some(Err(e)) => parts.push(format!("unplannable:{e}")),
        None => {}
    }
    hash(&parts)
}

/// The hash every question's answer binds: of its parts, each length-prefixed (hex SHA-256).
pub fn hash(parts: &[impl AsRef<[u8]>]) -> String {
    let mut hasher = Sha256::new();
    for part in parts {
        let bytes = part.as_ref();
        hasher.update((bytes.len() as u64).to_le_bytes());
        hasher.update(bytes);
    }
    hasher.finalize().iter().map(|b| format!("{b:02x}")).collect()
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

/// Prefix of a host's grant key (`network:host:port`): a later process of the session lets the
/// host through again.
pub const HOST_GRANT: &str = "network:";

impl Calls {
    /// What an "approve for this session" of `call` remembers, as its tool says it covers: the
    /// exact command, the tool on each path (as it resolves in the workspace), the tool itself,
    /// or nothing.
    pub fn grant_keys(&self, call: &PreparedCall, session_id: &str) -> Vec<String> {
        let places = || {
            let paths = call.call.paths();
            let place = |(path, access): &(String, crate::sandbox::Access)| {
                let resolved = self.workspace.sandbox.resolve(path, *access, session_id).map(|r| r.display());
                resolved.unwrap_or_else(|_| path.clone())
            };
            paths.iter().map(place).collect()
        };
        grant_keys(&call.call.covers(), &call.name, places)
    }
}

/// The grant keys of what an approval `covers`, for `tool` (whose paths, as they resolve, are
/// `places`): the exact command, the tool on each path, the tool itself, a host, or nothing.
pub(super) fn grant_keys(covers: &Covers, tool: &str, places: impl FnOnce() -> Vec<String>) -> Vec<String> {
    match covers {
        Covers::Nothing => Vec::new(),
        Covers::Command(command) => vec![format!("{COMMAND_GRANT}{tool}\u{0}{command}")],
        Covers::Tool => vec![format!("tool:{tool}")],
        Covers::Paths => places().into_iter().map(|place| format!("path:{tool}\u{0}{place}")).collect(),
        Covers::Host(entry) => vec![format!("{HOST_GRANT}{entry}")],
    }
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
