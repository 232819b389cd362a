// The bridge to the Rust shell: the only module that talks to Tauri. Commands `submit` and
// `session_info`, and engine events on the `engine-event` channel, exactly as src-tauri defines them.
import { invoke } from "@tauri-apps/api/core";
import { listen } from "@tauri-apps/api/event";
import type { Event, Op, SessionSummary } from "./types";

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

/** Calls `cb` for every engine event; resolves to a function that stops listening. */
export function onEngineEvent(cb: (event: Event) => void): Promise<() => void> {
  return listen<Event>(ENGINE_EVENT, (msg) => cb(msg.payload));
}
