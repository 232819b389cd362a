// Generated from bridle-protocol's ipc.rs (the shell's command list and channels); do not edit.
// Every function rejects with an ErrorInfo.
import { invoke } from "@tauri-apps/api/core";
import { listen } from "@tauri-apps/api/event";
import type { ApprovalRequest } from "./ApprovalRequest";
import type { AuditEvent } from "./AuditEvent";
import type { AuditQuery } from "./AuditQuery";
import type { McpServerList } from "./McpServerList";
import type { McpServerSettings } from "./McpServerSettings";
import type { ModelInfo } from "./ModelInfo";
import type { Op } from "./Op";
import type { ProcessInfo } from "./ProcessInfo";
import type { ProviderSettings } from "./ProviderSettings";
import type { ReviewDecision } from "./ReviewDecision";
import type { RuleList } from "./RuleList";
import type { RuleMeaning } from "./RuleMeaning";
import type { SequencedEvent } from "./SequencedEvent";
import type { SessionInfo } from "./SessionInfo";
import type { SessionSnapshot } from "./SessionSnapshot";
import type { SessionSummary } from "./SessionSummary";
import type { Settings } from "./Settings";
import type { SettingsUpdate } from "./SettingsUpdate";
import type { SkillInfo } from "./SkillInfo";
import type { SlashCommandInfo } from "./SlashCommandInfo";
import type { TurnReview } from "./TurnReview";

/** Queues one op: an answer on the engine of the session that asked (opened when no process runs it), any other op on the shown session's; resolves once accepted. */
export function submit(op: Op): Promise<void> {
  return invoke<void>("submit", { op });
}

/** The open session, as the header shows it. */
export function sessionInfo(): Promise<SessionSummary> {
  return invoke<SessionSummary>("session_info");
}

/** The open session's approval requests still waiting for an answer. */
export function pendingApprovals(): Promise<Array<ApprovalRequest>> {
  return invoke<Array<ApprovalRequest>>("pending_approvals");
}

/** The open session as stored, with the `seq` of the last event it already holds. */
export function sessionSnapshot(): Promise<SessionSnapshot> {
  return invoke<SessionSnapshot>("session_snapshot");
}

/** Every stored session, most recently updated first. */
export function sessionsList(): Promise<Array<SessionInfo>> {
  return invoke<Array<SessionInfo>>("sessions_list");
}

/** Shows a stored session in the window, starting it when it is not live (the sessions live already go on). */
export function sessionOpen(sessionId: string): Promise<SessionSummary> {
  return invoke<SessionSummary>("session_open", { sessionId });
}

/** Starts a new session in the window's workspace. */
export function sessionNew(): Promise<SessionSummary> {
  return invoke<SessionSummary>("session_new");
}

/** Deletes a stored session (closing it when live); answers the session shown after. */
export function sessionDelete(sessionId: string): Promise<SessionSummary> {
  return invoke<SessionSummary>("session_delete", { sessionId });
}

/** Every question waiting in the data dir, of every session, oldest first (DESIGN §16). */
export function inbox(): Promise<Array<ApprovalRequest>> {
  return invoke<Array<ApprovalRequest>>("inbox");
}

/** Starts a new session in a worktree of the window's workspace, on `bridle/<name>`. */
export function sessionNewWorktree(name: string | null): Promise<SessionSummary> {
  return invoke<SessionSummary>("session_new_worktree", { name });
}

/** Archives a session's worktree (closing the session; refused while it works or waits). */
export function sessionArchive(sessionId: string): Promise<void> {
  return invoke<void>("session_archive", { sessionId });
}

/** Brings an archived (or removed) session worktree back. */
export function sessionRestore(sessionId: string): Promise<void> {
  return invoke<void>("session_restore", { sessionId });
}

/** Brings a worktree session's changes into the main checkout, uncommitted (a dry run writes nothing); answers the change as a patch. */
export function sessionApply(sessionId: string, dryRun: boolean): Promise<string> {
  return invoke<string>("session_apply", { sessionId, dryRun });
}

/** Merges a worktree session's branch into the clean main checkout; answers the commit. */
export function sessionMerge(sessionId: string): Promise<string> {
  return invoke<string>("session_merge", { sessionId });
}

/** Audit rows matching the query, newest first. */
export function auditQuery(query: AuditQuery): Promise<Array<AuditEvent>> {
  return invoke<Array<AuditEvent>>("audit_query", { query });
}

/** Writes the whole audit log as JSON lines into the data dir; answers the file's path. */
export function auditExport(): Promise<string> {
  return invoke<string>("audit_export");
}

/** Writes one session's export with proof (`md` or `json`: its audit rows, their hashes and the chain head) into the data dir's `exports` folder; answers the file's path. */
export function sessionExport(sessionId: string, format: string): Promise<string> {
  return invoke<string>("session_export", { sessionId, format });
}

/** The settings as the config holds them, and where the provider's key is. */
export function settingsGet(): Promise<Settings> {
  return invoke<Settings>("settings_get");
}

/** Saves the settings (the key into the OS keychain) and reopens the session with them. */
export function settingsSave(update: SettingsUpdate): Promise<Settings> {
  return invoke<Settings>("settings_save", { update });
}

/** The models a server offers, with the key given or the stored one: "test connection". */
export function modelsList(provider: ProviderSettings, apiKey: string | null): Promise<Array<ModelInfo>> {
  return invoke<Array<ModelInfo>>("models_list", { provider, apiKey });
}

/** What each rule of one list means, or why it is invalid. */
export function rulesExplain(list: RuleList, patterns: Array<string>): Promise<Array<RuleMeaning>> {
  return invoke<Array<RuleMeaning>>("rules_explain", { list, patterns });
}

/** The open session's MCP servers with their state and tools, numbered like the lists pushed on `mcp-status` (the window keeps the newest). */
export function mcpStatus(): Promise<McpServerList> {
  return invoke<McpServerList>("mcp_status");
}

/** Stops one MCP server and starts it again; answers once it is ready or has failed. */
export function mcpRestart(name: string): Promise<McpServerList> {
  return invoke<McpServerList>("mcp_restart", { name });
}

/** Adds or edits one MCP server in the config (`previous` names the one being renamed or edited) and starts it as it now stands; the others keep running. */
export function mcpSave(server: McpServerSettings, previous: string | null): Promise<Settings> {
  return invoke<Settings>("mcp_save", { server, previous });
}

/** Removes one MCP server from the config and stops it. */
export function mcpRemove(name: string): Promise<Settings> {
  return invoke<Settings>("mcp_remove", { name });
}

/** The open session's background processes, oldest first, each with its output's tail. */
export function processesList(): Promise<Array<ProcessInfo>> {
  return invoke<Array<ProcessInfo>>("processes_list");
}

/** Stops one background process of the open session (SIGTERM, then SIGKILL after 2 s); answers once it has ended. */
export function processStop(processId: string): Promise<ProcessInfo> {
  return invoke<ProcessInfo>("process_stop", { processId });
}

/** The skills the open session found (offered or not), with their source, trust and error. */
export function skillsList(): Promise<Array<SkillInfo>> {
  return invoke<Array<SkillInfo>>("skills_list");
}

/** Trusts the workspace's skills as their files are now and reopens the session. */
export function skillsTrust(): Promise<Array<SkillInfo>> {
  return invoke<Array<SkillInfo>>("skills_trust");
}

/** The slash commands the open session offers, for the composer's completion. */
export function slashCommands(): Promise<Array<SlashCommandInfo>> {
  return invoke<Array<SlashCommandInfo>>("slash_commands");
}

/** The hunks of one turn of the open session (its last turn with changes when none is named), with their states. */
export function reviewTurn(turnId: string | null): Promise<TurnReview> {
  return invoke<TurnReview>("review_turn", { turnId });
}

/** Keeps, rejects or unrejects hunks of the open session, all or none (a conflict changes nothing); answers the turn's hunks as they stand after. */
export function reviewDecide(decision: ReviewDecision, hunkIds: Array<string>): Promise<TurnReview> {
  return invoke<TurnReview>("review_decide", { decision, hunkIds });
}

/** The Tauri event name of every engine event. */
export const ENGINE_EVENT = "engine-event";

/** Calls `cb` with every engine event; resolves to a function that stops listening. */
export function onEngineEvent(cb: (payload: SequencedEvent) => void): Promise<() => void> {
  return listen<SequencedEvent>(ENGINE_EVENT, (msg) => cb(msg.payload));
}

/** The Tauri event name of the MCP servers' list after every change. */
export const MCP_STATUS = "mcp-status";

/** Calls `cb` with the MCP servers' list after every change; resolves to a function that stops listening. */
export function onMcpStatus(cb: (payload: McpServerList) => void): Promise<() => void> {
  return listen<McpServerList>(MCP_STATUS, (msg) => cb(msg.payload));
}
