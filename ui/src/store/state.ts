// The session's UI state: what the engine's events have told us so far, plus the user's own
// messages (the engine does not echo them back). Pure data; reduce.ts and local.ts change it.
import type {
  AbortReason,
  AgentInfo,
  ApprovalRequest,
  ErrorInfo,
  Mode,
  PlanItem,
  ProcessInfo,
  TokenUsage,
  ToolCall,
  ToolResult,
  ToolStatus,
} from "../api/types";

/** A tool card's status: the engine's end status, or where the call is before it ends. */
export type ToolCardStatus = "running" | "pending" | ToolStatus;

/** One entry of the chat transcript, in the order it happened. */
export type ChatItem =
  | { kind: "user"; key: string; text: string }
  | {
      kind: "assistant";
      key: string;
      turnId: string;
      text: string;
      streaming: boolean;
      /** The stream broke and no retry got through: this is what arrived before it stopped. */
      cutOff?: boolean;
    }
  | {
      kind: "tool";
      key: string;
      turnId: string;
      call: ToolCall;
      status: ToolCardStatus;
      durationMs: number | null;
      result: ToolResult | null;
    }
  | { kind: "notice"; key: string; text: string; tone: "info" | "warn" };

/** Where the current turn is: nothing running, sent but not started yet, or running. */
export type TurnPhase =
  | { phase: "idle" }
  | { phase: "starting" }
  | { phase: "running"; turnId: string };

/** One file change the engine reported, kept for the Changes view. */
export interface FileChange {
  turnId: string;
  callId: string;
  path: string;
  diff: string;
}

export interface UsageState {
  /** Tokens of the whole session, as the engine last summed them. */
  total: TokenUsage | null;
  /** Each turn's tokens (its model requests added up), in the order the turns ran. */
  turns: { turnId: string; usage: TokenUsage }[];
  /** Tokens of the last model request. */
  last: TokenUsage | null;
  /** Tokens the last request put in the context window. */
  contextUsed: number | null;
  /** The model's context window, when known. */
  contextWindow: number | null;
}

/** The mode in force and how `bash` runs under it (the summary at start, then `modeChanged`). */
export interface RunMode {
  mode: Mode;
  /** `bwrap`, `landlock` or `none`. */
  sandbox: string;
  unsandboxedBecause: string | null;
  /** What of the home folder shell commands see when the sandbox hides it; null when it does not. */
  sandboxHome: string | null;
}

export interface ErrorEntry {
  key: string;
  info: ErrorInfo;
}

export interface SessionState {
  sessionId: string | null;
  items: ChatItem[];
  turn: TurnPhase;
  /** Approval requests still waiting for an answer, oldest first. */
  approvals: ApprovalRequest[];
  /** Requests answered from this window whose resolution has not arrived yet (buttons disabled). */
  answering: string[];
  /** Ids of requests seen resolved, so a late `pending_approvals` answer cannot bring one back. */
  resolvedApprovals: string[];
  changes: FileChange[];
  usage: UsageState;
  /** Errors not yet dismissed, oldest first. */
  errors: ErrorEntry[];
  lastAbort: AbortReason | null;
  /** Null until the session summary arrives. */
  runMode: RunMode | null;
  /** The model's stream broke and the step starts over: shown until text flows again. */
  reconnecting: { turnId: string; attempt: number; maxAttempts: number; reason: string } | null;
  /** The model's plan as it last set it (`update_plan`); empty when none. */
  plan: PlanItem[];
  /** The session's background processes (`bash` with `background`), oldest first. */
  processes: ProcessInfo[];
  /** The children its calls started, by the `spawn_agent` call that started each (DESIGN §16.1). */
  agents: Record<string, AgentInfo>;
  /** Counter for item keys, so the reducer stays pure. */
  seq: number;
  /** Engine events received so far; views that poll the engine refresh when it moves. */
  eventCount: number;
}

export const initialState: SessionState = {
  sessionId: null,
  items: [],
  turn: { phase: "idle" },
  approvals: [],
  answering: [],
  resolvedApprovals: [],
  changes: [],
  usage: { total: null, turns: [], last: null, contextUsed: null, contextWindow: null },
  errors: [],
  lastAbort: null,
  runMode: null,
  reconnecting: null,
  plan: [],
  processes: [],
  agents: {},
  seq: 0,
  eventCount: 0,
};

/** Returns a fresh key and the state with its counter advanced. */
export function nextKey(state: SessionState, prefix: string): [string, SessionState] {
  const seq = state.seq + 1;
  return [`${prefix}-${seq}`, { ...state, seq }];
}

/** Errors kept on screen at once; older ones drop off first. */
export const MAX_ERRORS = 5;

export function pushError(state: SessionState, info: ErrorInfo): SessionState {
  const [key, next] = nextKey(state, "error");
  return { ...next, errors: [...next.errors, { key, info }].slice(-MAX_ERRORS) };
}
