// The bridge to the Rust shell: the only module that talks to Tauri. The commands are the
// generated bindings of the shell's one command list (bridle-protocol's ipc.rs), re-exported
// here; engine events arrive numbered (`seq`) on the `engine-event` channel.
import { listen } from "@tauri-apps/api/event";
import type { SequencedEvent } from "./types";

export {
  auditExport,
  auditQuery,
  modelsList,
  pendingApprovals,
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
