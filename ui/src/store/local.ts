// What the UI itself adds to SessionState: the user's messages (the engine does not echo them),
// failures to reach the engine, dismissed errors, the session summary, the stored session and the
// pending requests loaded at start, the background processes as listed or stopped, and answers
// on their way.
import type { ApprovalRequest, ErrorCode, Event, ProcessInfo, SessionSnapshot, SessionSummary } from "../api/types";
import { addApprovals, markAnswering } from "./approvals";
import { type SessionState, initialState, nextKey, pushError } from "./state";
import { reduce } from "./reduce";
import { loadSnapshot } from "./snapshot";
import { mergeProcesses } from "./processes";

export type Action =
  | { type: "engine"; event: Event }
  | { type: "userSubmitted"; text: string }
  | { type: "bridgeFailed"; code: ErrorCode; message: string; retryable: boolean }
  | { type: "dismissError"; key: string }
  | { type: "sessionLoaded"; info: SessionSummary }
  | { type: "pendingLoaded"; requests: ApprovalRequest[] }
  | { type: "snapshotLoaded"; snapshot: SessionSnapshot }
  | { type: "answerSent"; approvalId: string }
  /** Processes as `processes_list` or `process_stop` answered: merged by id. */
  | { type: "processesSeen"; processes: ProcessInfo[] }
  | { type: "reset" };

export function apply(state: SessionState, action: Action): SessionState {
  switch (action.type) {
    case "engine":
      return { ...reduce(state, action.event), eventCount: state.eventCount + 1 };
    case "userSubmitted": {
      const [key, next] = nextKey(state, "user");
      const turn = next.turn.phase === "idle" ? { phase: "starting" as const } : next.turn;
      return { ...next, turn, items: [...next.items, { kind: "user", key, text: action.text }] };
    }
    case "bridgeFailed": {
      // Whatever failed to reach the engine, no answer is on its way any more.
      const withError = pushError(
        { ...state, answering: [] },
        { code: action.code, message: action.message, retryable: action.retryable },
      );
      return withError.turn.phase === "starting" ? { ...withError, turn: { phase: "idle" } } : withError;
    }
    case "dismissError":
      return { ...state, errors: state.errors.filter((e) => e.key !== action.key) };
    case "sessionLoaded":
      return {
        ...state,
        sessionId: state.sessionId ?? action.info.sessionId,
        // A modeChanged that arrived first is newer than the summary.
        runMode: state.runMode ?? {
          mode: action.info.mode,
          sandbox: action.info.sandbox,
          unsandboxedBecause: action.info.unsandboxedBecause,
          sandboxHome: action.info.sandboxHome,
        },
        usage: { ...state.usage, contextWindow: state.usage.contextWindow ?? action.info.contextWindow },
      };
    case "pendingLoaded":
      return addApprovals(state, action.requests);
    case "snapshotLoaded":
      return loadSnapshot(state, action.snapshot);
    case "answerSent":
      return markAnswering(state, action.approvalId);
    case "processesSeen":
      return mergeProcesses(state, action.processes);
    case "reset":
      // Another session is opening: nothing of this one carries over.
      return initialState;
    default:
      return assertNever(action);
  }
}

function assertNever(action: never): never {
  throw new Error(`unhandled action: ${JSON.stringify(action)}`);
}
