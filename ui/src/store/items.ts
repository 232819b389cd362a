// Transcript edits shared by the reducers: streaming assistant text, tool-card updates, and
// closing what a finished turn left open.
import type { ChatItem, SessionState } from "./state";
import { nextKey } from "./state";

type ToolItem = Extract<ChatItem, { kind: "tool" }>;

/** Index of the assistant item of `turnId` still streaming (the current step's), or -1. */
function openAssistantIndex(items: ChatItem[], turnId: string): number {
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i];
    if (item?.kind === "assistant" && item.turnId === turnId && item.streaming) return i;
  }
  return -1;
}

/**
 * Sets the current step's assistant text. Deltas (`streaming`) extend the open item or open one;
 * the step's full message replaces the open item's text and closes it. A step with no text
 * (it only called tools) leaves no empty bubble.
 */
export function setAssistantText(
  state: SessionState,
  turnId: string,
  text: (old: string) => string,
  streaming: boolean,
): SessionState {
  const at = openAssistantIndex(state.items, turnId);
  if (at >= 0) {
    const old = state.items[at] as Extract<ChatItem, { kind: "assistant" }>;
    const newText = text(old.text);
    const items =
      newText === "" && !streaming
        ? state.items.filter((_, i) => i !== at)
        : state.items.map((item, i) => (i === at ? { ...old, text: newText, streaming } : item));
    return { ...state, items };
  }
  const newText = text("");
  if (newText === "") return state;
  const [key, next] = nextKey(state, "assistant");
  return { ...next, items: [...next.items, { kind: "assistant", key, turnId, text: newText, streaming }] };
}

/** Applies `change` to the tool card of call `callId`, if there is one. */
export function updateTool(state: SessionState, callId: string, change: (item: ToolItem) => ToolItem): SessionState {
  let found = false;
  const items = state.items.map((item) => {
    if (item.kind !== "tool" || item.call.id !== callId) return item;
    found = true;
    return change(item);
  });
  return found ? { ...state, items } : state;
}

/** Drops the current step's partial text of `turnId` (its stream is starting over). */
export function dropPartialText(state: SessionState, turnId: string): SessionState {
  const at = openAssistantIndex(state.items, turnId);
  return at < 0 ? state : { ...state, items: state.items.filter((_, i) => i !== at) };
}

/**
 * Ends a turn's open items: streaming text stops streaming (marked cut off when the stream
 * broke for good), and when the turn was aborted, calls that never reported an end are marked
 * interrupted.
 */
export function closeTurn(state: SessionState, turnId: string, aborted: boolean, cutOff = false): SessionState {
  const items = state.items.map((item): ChatItem => {
    if (item.kind === "assistant" && item.turnId === turnId && item.streaming) {
      return cutOff ? { ...item, streaming: false, cutOff: true } : { ...item, streaming: false };
    }
    if (aborted && item.kind === "tool" && item.turnId === turnId && (item.status === "running" || item.status === "pending")) {
      return { ...item, status: "interrupted" };
    }
    return item;
  });
  return { ...state, items };
}
