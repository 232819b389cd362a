// The bridge to the Rust shell: the only module that talks to Tauri. The commands are the
// generated bindings of the shell's one command list (bridle-protocol's ipc.rs), re-exported
// here, with the typed listeners of the channels the shell pushes on (declared in the same list):
// engine events arrive numbered (`seq`) on `engine-event`, the MCP servers' list after every
// change on `mcp-status`.
export {
  ENGINE_EVENT,
  MCP_STATUS,
  onEngineEvent,
  onMcpStatus,
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
  reviewDecide,
  reviewTurn,
  rulesExplain,
  sessionDelete,
  sessionExport,
  sessionInfo,
  sessionNew,
  sessionOpen,
  sessionSnapshot,
  sessionsList,
  skillsList,
  skillsTrust,
  slashCommands,
  settingsGet,
  settingsSave,
  submit,
} from "./bindings/commands";
