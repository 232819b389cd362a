// The bridge to the Rust shell: the only module that talks to Tauri. The commands are the
// generated bindings of the shell's one command list (bridle-protocol's ipc.rs), re-exported
// here; engine events arrive numbered (`seq`) on the `engine-event` channel, the MCP servers'
// list after every change on `mcp-status`.
import { listen } from "@tauri-apps/api/event";
import type { McpServerStatus, SequencedEvent } from "./types";

export {
  auditExport,
  auditQuery,
  mcpRemove,
  mcpRestart,
  mcpSave,
  mcpStatus,
  modelsList,
  pendingApprovals,
  processStop,
  processesList,
  rulesExplain,
  sessionDelete,
  sessionInfo,
  sessionNew,
  sessionOpen,
  sessionSnapshot,
  sessionsList,
  settingsGet,
  settingsSave,
  submit,
} from "./bindings/commands";

/** The Tauri event name the shell forwards every engine event on. */
export const ENGINE_EVENT = "engine-event";

/** Calls `cb` for every engine event; resolves to a function that stops listening. */
export function onEngineEvent(cb: (event: SequencedEvent) => void): Promise<() => void> {
  return listen<SequencedEvent>(ENGINE_EVENT, (msg) => cb(msg.payload));
}

/** The Tauri event name the shell sends the MCP servers' list on, after every change. */
export const MCP_STATUS = "mcp-status";

/** Calls `cb` with the MCP servers' list after every change; resolves to a function that stops listening. */
export function onMcpStatus(cb: (servers: McpServerStatus[]) => void): Promise<() => void> {
  return listen<McpServerStatus[]>(MCP_STATUS, (msg) => cb(msg.payload));
}
