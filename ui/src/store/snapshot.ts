// A stored session as the window shows it: the transcript, the file changes and the token totals
// rebuilt from `session_snapshot`, so a session reopened after a restart shows everything, not
// only what the window saw happen.
import type { SessionSnapshot } from "../api/types";
import type { ChatItem, FileChange, SessionState } from "./state";

/** A unified diff of several files cut into one diff per file, by its `+++ b/PATH` header. */
export function splitDiff(diff: string): { path: string; diff: string }[] {
  const parts: { path: string; diff: string }[] = [];
  const lines = diff.split("\n");
  let start = -1;
  for (let i = 0; i <= lines.length; i++) {
    const isHeader = i < lines.length && lines[i]!.startsWith("--- ") && lines[i + 1]?.startsWith("+++ ");
    if (isHeader || i === lines.length) {
      if (start >= 0) {
        const body = lines.slice(start, i).join("\n");
        const plus = lines[start + 1]!.slice(4);
        const minus = lines[start]!.slice(4);
        const path = (plus === "/dev/null" ? minus : plus).replace(/^[ab]\//, "");
        parts.push({ path, diff: body.endsWith("\n") || i === lines.length ? body : `${body}\n` });
      }
      start = isHeader ? i : start;
    }
  }
  return parts;
}

/** The state with the snapshot's transcript, changes and totals, if the window has none yet. */
export function loadSnapshot(state: SessionState, snapshot: SessionSnapshot): SessionState {
  if (state.items.length > 0) return state;
  const items: ChatItem[] = [];
  const changes: FileChange[] = [];
  // A call without a result waits for its approval, or was cut short when the session ended.
  const waiting = new Set(snapshot.pendingApprovals.map((r) => r.callId));
  const undone = new Set(snapshot.changes.filter((c) => c.undone).map((c) => `${c.turnId}\u0000${c.path}`));
  let seq = state.seq;
  const key = (prefix: string) => `${prefix}-${++seq}`;
  for (const { turnId, item } of snapshot.items) {
    switch (item.type) {
      case "user":
        items.push({ kind: "user", key: key("user"), text: item.text });
        break;
      case "assistant":
        if (item.text) {
          items.push({ kind: "assistant", key: key("assistant"), turnId, text: item.text, streaming: false, cutOff: item.cutOff ?? false });
        }
        for (const call of item.toolCalls) {
          const status = waiting.has(call.id) ? "pending" : "interrupted";
          items.push({ kind: "tool", key: key("tool"), turnId, call, status, durationMs: null, result: null });
        }
        break;
      case "toolResult": {
        const result = item.result;
        const at = items.findIndex((i) => i.kind === "tool" && i.call.id === result.toolCallId);
        const card = items[at];
        if (card?.kind === "tool") items[at] = { ...card, status: result.isError ? "error" : "ok", result };
        if (!result.isError && result.diff) {
          for (const part of splitDiff(result.diff)) {
            if (!undone.has(`${turnId}\u0000${part.path}`)) {
              changes.push({ turnId, callId: result.toolCallId, path: part.path, diff: part.diff });
            }
          }
        }
        break;
      }
    }
  }
  return {
    ...state,
    seq,
    items,
    changes,
    plan: snapshot.plan,
    agents: Object.fromEntries((snapshot.agents ?? []).map((a) => [a.callId, a])),
    usage: { ...state.usage, total: snapshot.usage, turns: snapshot.turnUsage, contextUsed: snapshot.contextUsed },
  };
}
