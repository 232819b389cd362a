// The engine-event reducer: folds one protocol Event into SessionState. Pure, and exhaustive over
// `event.type` (a new event kind fails to compile here until it is handled).
import type { AbortReason, Event, TokenUsage } from "../api/types";
import { type ChatItem, type SessionState, type UsageState, nextKey, pushError } from "./state";
import { addApprovals, resolveApproval } from "./approvals";
import { closeTurn, dropPartialText, setAssistantText, updateTool } from "./items";
import { freesAnswers } from "./errorCodes";
import { mergeProcesses } from "./processes";

const ABORT_TEXT: Record<AbortReason, string> = {
  interrupted: "Turn stopped by you.",
  maxSteps: "Turn stopped: it reached the step limit.",
  loopGuard: "Turn stopped: the model kept repeating the same call.",
  error: "Turn stopped by an error.",
};

function pushItem(state: SessionState, prefix: string, make: (key: string) => ChatItem): SessionState {
  const [key, next] = nextKey(state, prefix);
  return { ...next, items: [...next.items, make(key)] };
}

export function reduce(state: SessionState, event: Event): SessionState {
  const s: SessionState = state.sessionId === event.sessionId ? state : { ...state, sessionId: event.sessionId };
  // Text flowing again, or the turn over, ends a "reconnecting".
  const flowing = ["assistantDelta", "assistantMessage", "turnCompleted", "turnAborted", "toolCallBegin"];
  if (s.reconnecting && flowing.includes(event.type)) return reduce({ ...s, reconnecting: null }, event);
  switch (event.type) {
    case "turnStarted":
      return { ...s, turn: { phase: "running", turnId: event.turnId }, lastAbort: null };
    case "assistantDelta":
      return setAssistantText(s, event.turnId, (old) => old + event.text, true);
    case "assistantMessage":
      return setAssistantText(s, event.turnId, () => event.text, false);
    case "toolCallBegin":
      return pushItem(s, "tool", (key) => ({
        kind: "tool",
        key,
        turnId: event.turnId,
        call: event.call,
        status: "running",
        durationMs: null,
        result: null,
      }));
    case "toolCallEnd":
      return updateTool(s, event.result.toolCallId, (item) => ({
        ...item,
        status: event.status,
        durationMs: event.durationMs,
        result: event.result,
      }));
    case "approvalRequested":
      return addApprovals(s, [event.request]);
    case "approvalResolved":
      return resolveApproval(s, event.approvalId);
    case "fileChanged":
      return {
        ...s,
        changes: [
          ...s.changes,
          { turnId: event.turnId, callId: event.callId, path: event.path, diff: event.diff },
        ],
      };
    case "tokenUsage":
      return {
        ...s,
        usage: {
          total: event.total,
          turns: addTurnUsage(s.usage.turns, event.turnId, event.usage),
          last: event.usage,
          contextUsed: event.contextUsed,
          contextWindow: event.contextWindow ?? s.usage.contextWindow,
        },
      };
    case "compacted":
      return pushItem({ ...s, usage: { ...s.usage, contextUsed: event.tokensAfter } }, "notice", (key) => ({
        kind: "notice",
        key,
        tone: "info",
        text: `Context compacted: about ${event.tokensBefore} tokens down to ${event.tokensAfter}.`,
      }));
    case "turnCompleted":
      return { ...closeTurn(s, event.turnId, false), turn: { phase: "idle" } };
    case "planUpdated":
      return { ...s, plan: event.items };
    case "agentUpdated":
      return { ...s, agents: { ...s.agents, [event.agent.callId]: event.agent } };
    case "warning":
      return pushItem(s, "notice", (key) => ({ kind: "notice", key, tone: "warn", text: event.message }));
    case "streamRestarted":
      return {
        ...dropPartialText(s, event.turnId),
        reconnecting: { turnId: event.turnId, attempt: event.attempt, maxAttempts: event.maxAttempts, reason: event.reason },
      };
    case "turnAborted": {
      // An error ends a stream for good: the text it left is what the session keeps, cut off.
      const closed = closeTurn(s, event.turnId, true, event.reason === "error");
      const noted = pushItem(closed, "notice", (key) => ({
        kind: "notice",
        key,
        tone: event.reason === "interrupted" ? "info" : "warn",
        text: ABORT_TEXT[event.reason],
      }));
      return { ...noted, turn: { phase: "idle" }, lastAbort: event.reason };
    }
    case "turnSuspended": {
      // The turn is parked until its requests are answered; its calls stay pending and an
      // answer resumes it (a new turnStarted), possibly after an app restart.
      const closed = closeTurn(s, event.turnId, false);
      const count = event.approvalIds.length;
      const noted = pushItem(closed, "notice", (key) => ({
        kind: "notice",
        key,
        tone: "info",
        text: `Turn paused: waiting for your answer to ${count === 1 ? "1 approval request" : `${count} approval requests`}.`,
      }));
      return { ...noted, turn: { phase: "idle" } };
    }
    case "filesChangedOnDisk":
      return pushItem(s, "notice", (key) => ({
        kind: "notice",
        key,
        tone: "info",
        text: `Changed on disk since the agent last saw ${event.paths.length === 1 ? "it" : "them"} (by you, a program or an undo): ${event.paths.join(", ")}. The agent will read ${event.paths.length === 1 ? "it" : "them"} again before editing.`,
      }));
    case "undone": {
      // The undone files' changes of that turn are no longer in the tree: they leave the list.
      const gone = new Set([...event.restored, ...event.removed]);
      const changes = s.changes.filter((c) => c.turnId !== event.turnId || !gone.has(c.path));
      const parts = [
        event.restored.length ? `restored ${event.restored.join(", ")}` : "",
        event.removed.length ? `removed ${event.removed.join(", ")}` : "",
        ...event.refused.map((r) => `left ${r.path} (${r.reason})`),
      ].filter(Boolean);
      return pushItem({ ...s, changes }, "notice", (key) => ({
        kind: "notice",
        key,
        tone: event.refused.length ? "warn" : "info",
        text: `Undo: ${parts.join("; ") || "nothing to change"}.`,
      }));
    }
    case "modeChanged":
      return {
        ...s,
        runMode: {
          mode: event.mode,
          sandbox: event.sandbox,
          unsandboxedBecause: event.unsandboxedBecause,
          sandboxHome: event.sandboxHome,
        },
      };
    case "processChanged":
      return mergeProcesses(s, [event.process]);
    case "commandDone": {
      // A built-in slash command ran instead of a turn: what it says, and the composer is free.
      const idle = s.turn.phase === "starting" ? { ...s, turn: { phase: "idle" as const } } : s;
      return pushItem(idle, "notice", (key) => ({
        kind: "notice",
        key,
        tone: event.ok ? "info" : "warn",
        text: event.output,
      }));
    }
    case "error": {
      // A refused answer leaves its request pending: let its buttons be used again.
      const refused = freesAnswers(event.info.code) ? { ...s, answering: [] } : s;
      const withError = pushError(refused, event.info);
      // An error before the turn started means it never will; let the user try again.
      return withError.turn.phase === "starting" ? { ...withError, turn: { phase: "idle" } } : withError;
    }
    default:
      return assertNever(event);
  }
}

/** `turns` with `step` added to turn `turnId` (a new turn goes last). */
function addTurnUsage(turns: UsageState["turns"], turnId: string, step: TokenUsage): UsageState["turns"] {
  const at = turns.findIndex((t) => t.turnId === turnId);
  if (at < 0) return [...turns, { turnId, usage: step }];
  return turns.map((t, i) =>
    i === at
      ? {
          turnId,
          usage: {
            inputTokens: t.usage.inputTokens + step.inputTokens,
            cachedInputTokens: t.usage.cachedInputTokens + step.cachedInputTokens,
            outputTokens: t.usage.outputTokens + step.outputTokens,
          },
        }
      : t,
  );
}

function assertNever(event: never): never {
  throw new Error(`unhandled engine event: ${JSON.stringify(event)}`);
}
