//! The TypeScript side of the protocol: one file per exported type, as ts-rs renders it.
//!
//! The files live in `ui/src/api/bindings/` and are committed. The test at the bottom fails when
//! they drift from the Rust types; `BRIDLE_UPDATE_BINDINGS=1 cargo test -p bridle-protocol`
//! rewrites them.

use ts_rs::{Config, TS};

use crate::*;

/// `(file name, contents)` for every exported type, in a stable order.
pub fn render() -> Result<Vec<(String, String)>, ts_rs::ExportError> {
    let cfg = Config::default();
    let mut files = Vec::new();
    macro_rules! add {
        ($($t:ty),* $(,)?) => {$(
            files.push((format!("{}.ts", <$t as TS>::name(&cfg)), <$t as TS>::export_to_string(&cfg)?));
        )*};
    }
    add!(
        AbortReason,
        AgentInfo,
        AgentState,
        ApprovalAnswer,
        ApprovalRequest,
        ApprovalSubject,
        AuditEvent,
        AuditQuery,
        BackgroundDetails,
        ChangeKind,
        CheckpointChange,
        ClientKind,
        Decision,
        DecisionSource,
        ErrorCode,
        ErrorInfo,
        Event,
        Finding,
        GlobHits,
        GrepFile,
        GrepHits,
        GrepLine,
        HistoryItem,
        HostUse,
        Hunk,
        HunkCall,
        HunkKind,
        HunkState,
        IgnoredOutput,
        InstructionFileInfo,
        LandedChange,
        LimitSettings,
        LineRange,
        ManagedSetting,
        Listing,
        McpServerList,
        McpServerSettings,
        McpServerStatus,
        McpStatus,
        Mode,
        ModelInfo,
        NetworkMode,
        NetworkSettings,
        ModelPrice,
        Op,
        PlanItem,
        PlanStatus,
        ProcessInfo,
        ProcessState,
        ProviderKindInfo,
        ProviderSettings,
        RefusedPath,
        ReviewDecision,
        RuleMeaning,
        RuleSettings,
        SandboxKind,
        SessionInfo,
        SessionSnapshot,
        SessionState,
        SessionSummary,
        SessionWorktree,
        Settings,
        SettingsUpdate,
        Severity,
        SkillInfo,
        SkillLoad,
        SlashCommandInfo,
        ShellDetails,
        ShellEffects,
        SnapshotItem,
        TextEncoding,
        TokenUsage,
        ToolCall,
        ToolDefinition,
        ToolDetails,
        ToolResult,
        ToolStatus,
        TurnReview,
        TurnUsage,
        RuleList,
        UndoRefusal,
        WaitingFor,
        WarningCode,
    );
    // An event with its number: written by hand so it stays one line, not a copy of `Event`.
    files.push((
        "SequencedEvent.ts".to_string(),
        "import type { Event } from \"./Event\";\n\n/** An engine event as the shell forwards it, numbered in its session's stream. */\nexport type SequencedEvent = Event & { seq: number };\n".to_string(),
    ));
    files.push(("commands.ts".to_string(), crate::ipc::render_ts()));
    Ok(files)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use std::path::PathBuf;

    fn bindings_dir() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../ui/src/api/bindings")
    }

    #[test]
    fn committed_bindings_match_the_rust_types() {
        let dir = bindings_dir();
        let update = std::env::var_os("BRIDLE_UPDATE_BINDINGS").is_some();
        let files = super::render().unwrap();
        let mut drifted = Vec::new();
        for (name, contents) in &files {
            let path = dir.join(name);
            if update {
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(&path, contents).unwrap();
            } else if std::fs::read_to_string(&path).ok().as_deref() != Some(contents.as_str()) {
                drifted.push(name.clone());
            }
        }
        // A committed file for a type that no longer exists is drift too.
        let expected: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
        for entry in std::fs::read_dir(&dir).unwrap() {
            let name = entry.unwrap().file_name().to_string_lossy().into_owned();
            if name.ends_with(".ts") && !expected.contains(&name.as_str()) {
                if update {
                    std::fs::remove_file(dir.join(&name)).unwrap();
                } else {
                    drifted.push(name);
                }
            }
        }
        assert!(
            drifted.is_empty(),
            "TypeScript bindings drifted from the Rust types: {drifted:?}; \
             run `BRIDLE_UPDATE_BINDINGS=1 cargo test -p bridle-protocol` and commit ui/src/api/bindings"
        );
    }
}
