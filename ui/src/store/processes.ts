// The session's background processes as the window knows them: what `processes_list` answered,
// a stop's answer and every `processChanged` event, merged by id, oldest first. A finished
// process never turns back into a running one: a list asked for before a stop may be answered
// after it. A process of another session (an answer that arrives after a switch) is dropped.
import type { ProcessInfo } from "../api/types";
import type { SessionState } from "./state";

/** The state with `seen` merged into its processes. */
export function mergeProcesses(state: SessionState, seen: ProcessInfo[]): SessionState {
  const ours = seen.filter((p) => p.sessionId === state.sessionId);
  if (ours.length === 0) return state;
  const byId = new Map(state.processes.map((p) => [p.id, p]));
  for (const p of ours) {
    const known = byId.get(p.id);
    byId.set(p.id, known && known.state !== "running" && p.state === "running" ? known : p);
  }
  const processes = [...byId.values()].sort((a, b) => a.startedAt - b.startedAt);
  return { ...state, processes };
}

/** How many of the session's processes are running. */
export function runningCount(processes: ProcessInfo[]): number {
  return processes.filter((p) => p.state === "running").length;
}
