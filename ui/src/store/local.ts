// What the UI itself adds to SessionState: the user's messages (the engine does not echo them),
// failures to reach the engine, dismissed errors and the session summary.
import type { Event, SessionSummary } from "../api/types";
import { type SessionState, nextKey, pushError } from "./state";
import { reduce } from "./reduce";

export type Action =
  | { type: "engine"; event: Event }
  | { type: "userSubmitted"; text: string }
  | { type: "bridgeFailed"; code: string; message: string; retryable: boolean }
  | { type: "dismissError"; key: string }
  | { type: "sessionLoaded"; info: SessionSummary };

export function apply(state: SessionState, action: Action): SessionState {
  switch (action.type) {
    case "engine":
      return reduce(state, action.event);
    case "userSubmitted": {
      const [key, next] = nextKey(state, "user");
      const turn = next.turn.phase === "idle" ? { phase: "starting" as const } : next.turn;
      return { ...next, turn, items: [...next.items, { kind: "user", key, text: action.text }] };
    }
    case "bridgeFailed": {
      const withError = pushError(state, { code: action.code, message: action.message, retryable: action.retryable });
      return withError.turn.phase === "starting" ? { ...withError, turn: { phase: "idle" } } : withError;
    }
    case "dismissError":
      return { ...state, errors: state.errors.filter((e) => e.key !== action.key) };
    case "sessionLoaded":
      return {
        ...state,
        sessionId: state.sessionId ?? action.info.sessionId,
        usage: { ...state.usage, contextWindow: state.usage.contextWindow ?? action.info.contextWindow },
      };
    default:
      return assertNever(action);
  }
}

function assertNever(action: never): never {
  throw new Error(`unhandled action: ${JSON.stringify(action)}`);
}
