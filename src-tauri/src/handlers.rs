//! The shell's handlers: one function per command of `bridle_protocol::ipc`'s list, named as the
//! command, taking its arguments and answering its type. The Tauri commands are expanded from
//! that list (see `lib.rs`) and call these, so a command without a handler here, or one whose
//! arguments or answer differ, does not compile.
//!
//! Rule: a handler only finds the session host (waiting while it starts) and asks it; what the
//! answer is, core decides.

use bridle_core::session_host::{self, Starting};
use bridle_protocol::{
    ApprovalRequest, AuditEvent, AuditQuery, ErrorInfo, McpServerList, McpServerSettings, ModelInfo, Op, ProcessInfo,
    ProviderSettings, ReviewDecision, RuleList, RuleMeaning, SessionInfo, SessionSnapshot, SessionSummary, Settings,
    SettingsUpdate, SkillInfo, SlashCommandInfo, TurnReview,
};

type Answer<T> = Result<T, ErrorInfo>;

pub async fn submit(start: &Starting, op: Op) -> Answer<()> {
    start.get().await?.submit(op).await
}

pub async fn session_info(start: &Starting) -> Answer<SessionSummary> {
    start.get().await?.summary().await
}

pub async fn pending_approvals(start: &Starting) -> Answer<Vec<ApprovalRequest>> {
    start.get().await?.pending_approvals().await
}

pub async fn session_snapshot(start: &Starting) -> Answer<SessionSnapshot> {
    start.get().await?.session_snapshot().await
}

pub async fn sessions_list(start: &Starting) -> Answer<Vec<SessionInfo>> {
    start.get().await?.sessions_list().await
}

pub async fn session_open(start: &Starting, session_id: String) -> Answer<SessionSummary> {
    start.get().await?.session_open(session_id).await
}

pub async fn session_new(start: &Starting) -> Answer<SessionSummary> {
    start.get().await?.session_new().await
}

pub async fn session_delete(start: &Starting, session_id: String) -> Answer<SessionSummary> {
    start.get().await?.session_delete(session_id).await
}

pub async fn audit_query(start: &Starting, query: AuditQuery) -> Answer<Vec<AuditEvent>> {
    start.get().await?.audit_query(query).await
}

pub async fn audit_export(start: &Starting) -> Answer<String> {
    start.get().await?.audit_export().await
}

pub async fn session_export(start: &Starting, session_id: String, format: String) -> Answer<String> {
    start.get().await?.session_export(session_id, format).await
}

pub async fn settings_get(start: &Starting) -> Answer<Settings> {
    start.get().await?.settings_get().await
}

pub async fn settings_save(start: &Starting, update: SettingsUpdate) -> Answer<Settings> {
    start.get().await?.settings_save(update).await
}

pub async fn models_list(
    start: &Starting,
    provider: ProviderSettings,
    api_key: Option<String>,
) -> Answer<Vec<ModelInfo>> {
    start.get().await?.models_list(provider, api_key).await
}

/// Needs no session: the rule editor works while the host is still starting, or failed to.
pub async fn rules_explain(_start: &Starting, list: RuleList, patterns: Vec<String>) -> Answer<Vec<RuleMeaning>> {
    session_host::rules_explain(list, &patterns)
}

pub async fn mcp_status(start: &Starting) -> Answer<McpServerList> {
    start.get().await?.mcp_status().await
}

pub async fn mcp_restart(start: &Starting, name: String) -> Answer<McpServerList> {
    start.get().await?.mcp_restart(name).await
}

pub async fn mcp_save(start: &Starting, server: McpServerSettings, previous: Option<String>) -> Answer<Settings> {
    start.get().await?.mcp_save(server, previous).await
}

pub async fn mcp_remove(start: &Starting, name: String) -> Answer<Settings> {
    start.get().await?.mcp_remove(name).await
}

pub async fn processes_list(start: &Starting) -> Answer<Vec<ProcessInfo>> {
    start.get().await?.processes_list().await
}

pub async fn process_stop(start: &Starting, process_id: String) -> Answer<ProcessInfo> {
    start.get().await?.process_stop(process_id).await
}

pub async fn skills_list(start: &Starting) -> Answer<Vec<SkillInfo>> {
    start.get().await?.skills_list().await
}

pub async fn skills_trust(start: &Starting) -> Answer<Vec<SkillInfo>> {
    start.get().await?.skills_trust().await
}

pub async fn slash_commands(start: &Starting) -> Answer<Vec<SlashCommandInfo>> {
    start.get().await?.slash_commands().await
}

pub async fn review_turn(start: &Starting, turn_id: Option<String>) -> Answer<TurnReview> {
    start.get().await?.review_turn(turn_id).await
}

pub async fn review_decide(start: &Starting, decision: ReviewDecision, hunk_ids: Vec<String>) -> Answer<TurnReview> {
    start.get().await?.review_decide(decision, hunk_ids).await
}

pub async fn inbox(start: &Starting) -> Answer<Vec<ApprovalRequest>> {
    start.get().await?.inbox().await
}

pub async fn session_new_worktree(start: &Starting, name: Option<String>) -> Answer<SessionSummary> {
    start.get().await?.session_new_worktree(name).await
}

pub async fn session_archive(start: &Starting, session_id: String) -> Answer<()> {
    start.get().await?.session_archive(session_id).await
}

pub async fn session_restore(start: &Starting, session_id: String) -> Answer<()> {
    start.get().await?.session_restore(session_id).await
}

pub async fn session_apply(start: &Starting, session_id: String, dry_run: bool) -> Answer<String> {
    start.get().await?.session_apply(session_id, dry_run).await
}

pub async fn session_merge(start: &Starting, session_id: String) -> Answer<String> {
    start.get().await?.session_merge(session_id).await
}
