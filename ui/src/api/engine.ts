// The bridge to the Rust shell: the only module that talks to Tauri. Commands `submit`,
// `session_info`, `pending_approvals`, `session_snapshot`, `audit_query` and `audit_export`, and
// engine events on the `engine-event` channel, exactly as src-tauri defines them.
import { invoke } from "@tauri-apps/api/core";
import { listen } from "@tauri-apps/api/event";
import type { ApprovalRequest, AuditEvent, AuditQuery, Event, Op, SessionSnapshot, SessionSummary } from "./types";

/** The Tauri event name the shell forwards every engine event on. */
export const ENGINE_EVENT = "engine-event";

/** Queues one op on the engine; resolves once the shell accepted it, not when it is done. */
export async function submit(op: Op): Promise<void> {
  await invoke<void>("submit", { op });
}

/** Describes the session this window is attached to. */
export function sessionInfo(): Promise<SessionSummary> {
  return invoke<SessionSummary>("session_info");
}

/**
 * The session's approval requests still waiting for an answer, including those announced before
 * this window listened (a session reopened after a restart).
 */
export function pendingApprovals(): Promise<ApprovalRequest[]> {
  return invoke<ApprovalRequest[]>("pending_approvals");
}

/**
 * The session as stored: its whole history (compacted items marked), pending approvals, token
 * totals and file changes — what a window reopened after a restart shows again.
 */
export function sessionSnapshot(): Promise<SessionSnapshot> {
  return invoke<SessionSnapshot>("session_snapshot");
}

/** Audit rows matching `query`, newest first. */
export function auditQuery(query: AuditQuery): Promise<AuditEvent[]> {
  return invoke<AuditEvent[]>("audit_query", { query });
}

/** Writes the whole audit log as JSON lines into the data dir; resolves to the file's path. */
export function auditExport(): Promise<string> {
  return invoke<string>("audit_export");
}

/** Calls `cb` for every engine event; resolves to a function that stops listening. */
export function onEngineEvent(cb: (event: Event) => void): Promise<() => void> {
  return listen<Event>(ENGINE_EVENT, (msg) => cb(msg.payload));
}
