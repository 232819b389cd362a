// The one store of the window: subscribes to engine events, loads the open session (summary,
// stored snapshot, requests still waiting, background processes) and offers the user's commands
// (send, stop, answer an approval, list and stop background processes). When the shell opens another session (Sessions, Settings saved), `reload` starts
// over: events of any other session are ignored, and events the snapshot already holds (their
// `seq` is not above the snapshot's) are skipped; those that arrive while it loads wait for it.
import { useCallback, useEffect, useReducer, useState } from "react";
import {
  onEngineEvent,
  pendingApprovals,
  processStop,
  processesList,
  slashCommands,
  sessionInfo,
  sessionSnapshot,
  submit,
} from "../api/engine";
import { describeError, isErrorInfo } from "../api/errors";
import type {
  ApprovalAnswer,
  ApprovalRequest,
  Mode,
  Op,
  SequencedEvent,
  SessionSummary,
  SlashCommandInfo,
} from "../api/types";
import { type Action, apply } from "./local";
import { type SessionState, initialState } from "./state";

/** What an answer may carry besides the decision. */
export interface AnswerDetails {
  /** Words for the model when denying. */
  feedback?: string | null;
  /** Replacement arguments (JSON text) when approving. */
  editedArguments?: string | null;
}

export interface SessionCommands {
  send: (text: string) => void;
  stop: () => void;
  /** Answers `request`, naming its call hash so the answer can only ever run that call. */
  answer: (request: ApprovalRequest, decision: ApprovalAnswer, details?: AnswerDetails) => void;
  dismissError: (key: string) => void;
  /** Switches the session's mode (between turns; the engine confirms with `modeChanged`). */
  setMode: (mode: Mode) => void;
  /** Undoes the file changes of a turn, or only `paths` of it (the engine answers `undone`). */
  undo: (turnId: string, paths?: string[]) => void;
  /** Loads the session the shell has open now, from scratch (after it switched sessions). */
  reload: () => void;
  /** Asks the engine for the background processes again (their output and state move on their
   * own); rejects with the engine's error, for the caller to show. */
  refreshProcesses: () => Promise<void>;
  /** Stops a background process; resolves once it has ended, rejects with the engine's error. */
  stopProcess: (processId: string) => Promise<void>;
}

/** Whether the window is attached to the engine (listening and has the session summary). */
export type Connection = "connecting" | "connected" | "unreachable";

export interface Session {
  state: SessionState;
  info: SessionSummary | null;
  connection: Connection;
  commands: SessionCommands;
  /** The slash commands the open session offers, for the composer's completion. */
  slashCommands: SlashCommandInfo[];
  /** Counts the events of other live sessions that change their state (a turn started or
   *  ended, a question asked or answered): the desk refreshes its list and inbox on it. */
  elsewhere: number;
}

/** The events of a session not shown that change what the sidebar and the inbox say. */
const DESK_EVENTS = new Set(["turnStarted", "turnCompleted", "turnAborted", "turnSuspended", "approvalRequested", "approvalResolved", "error"]);

export function useSession(): Session {
  const [state, dispatch] = useReducer(apply, initialState);
  const [info, setInfo] = useState<SessionSummary | null>(null);
  const [connection, setConnection] = useState<Connection>("connecting");
  const [slash, setSlash] = useState<SlashCommandInfo[]>([]);
  const [generation, setGeneration] = useState(0);
  const [elsewhere, setElsewhere] = useState(0);

  useEffect(() => {
    let cancelled = false;
    let unlisten: (() => void) | null = null;
    // Until the snapshot is in, events wait here; then only those after it apply.
    let sessionId: string | null = null;
    let held: SequencedEvent[] | null = [];
    let after = 0;
    const deliver = (event: SequencedEvent) => {
      if (sessionId !== null && event.sessionId !== sessionId) {
        if (DESK_EVENTS.has(event.type)) setElsewhere((n) => n + 1);
        return;
      }
      if (event.seq !== undefined && event.seq <= after) return;
      dispatch({ type: "engine", event });
    };
    const release = (seq: number) => {
      after = seq;
      const waiting = held ?? [];
      held = null;
      waiting.forEach(deliver);
    };
    if (generation > 0) {
      setInfo(null);
      dispatch({ type: "reset" });
    }
    // Listen first, then ask for the summary, so no event falls between the two.
    void (async () => {
      try {
        const stop = await onEngineEvent((event) => (held ? held.push(event) : deliver(event)));
        if (cancelled) return stop();
        unlisten = stop;
        const summary = await sessionInfo();
        if (cancelled) return;
        sessionId = summary.sessionId;
        setInfo(summary);
        setConnection("connected");
        dispatch({ type: "sessionLoaded", info: summary });
      } catch (err) {
        if (cancelled) return;
        const message = `Cannot reach the Bridle engine: ${describeError(err)}`;
        setConnection("unreachable");
        dispatch({ type: "bridgeFailed", code: "engine_unreachable", message, retryable: false });
        return;
      }
      // The stored session first (a reopened one shows its whole history), then the requests
      // waiting — after the listener is up, so a request is in the list or arrives as an event.
      try {
        const snapshot = await sessionSnapshot();
        if (cancelled) return;
        dispatch({ type: "snapshotLoaded", snapshot });
        performance.mark?.("bridle: session snapshot loaded");
        release(snapshot.seq ?? 0);
      } catch (err) {
        if (cancelled) return;
        release(0);
        const message = `Could not load the stored session: ${describeError(err)}`;
        dispatch({ type: "bridgeFailed", code: "session_snapshot_failed", message, retryable: true });
      }
      try {
        const pending = await pendingApprovals();
        if (!cancelled) dispatch({ type: "pendingLoaded", requests: pending });
      } catch (err) {
        if (cancelled) return;
        const message = `Could not load the approval requests waiting from before: ${describeError(err)}`;
        dispatch({ type: "bridgeFailed", code: "pending_approvals_failed", message, retryable: true });
      }
      // Processes started before the window (re)loaded; later ones arrive as events.
      try {
        const processes = await processesList();
        if (!cancelled) dispatch({ type: "processesSeen", processes });
      } catch (err) {
        if (cancelled) return;
        const message = `Could not list the background processes: ${describeError(err)}`;
        // No code of the window's own says this: the engine's says why.
        const code = isErrorInfo(err) ? err.code : "engine_unreachable";
        dispatch({ type: "bridgeFailed", code, message, retryable: true });
      }
      // The commands the composer completes: the session's own (its skills).
      try {
        const offered = await slashCommands();
        if (!cancelled) setSlash(offered);
      } catch (err) {
        if (cancelled) return;
        const message = `Could not list the slash commands: ${describeError(err)}`;
        const code = isErrorInfo(err) ? err.code : "engine_unreachable";
        dispatch({ type: "bridgeFailed", code, message, retryable: true });
      }
    })();
    return () => {
      cancelled = true;
      unlisten?.();
    };
  }, [generation]);

  const send = useCallback((text: string) => {
    dispatch({ type: "userSubmitted", text });
    submitOrReport({ type: "userMessage", text }, dispatch);
  }, []);
  const stop = useCallback(() => submitOrReport({ type: "interrupt" }, dispatch), []);
  const answer = useCallback((request: ApprovalRequest, decision: ApprovalAnswer, details: AnswerDetails = {}) => {
    dispatch({ type: "answerSent", approvalId: request.id });
    submitOrReport(
      {
        type: "resolveApproval",
        approvalId: request.id,
        decision,
        feedback: details.feedback ?? null,
        editedArguments: details.editedArguments ?? null,
        callHash: request.callHash,
      },
      dispatch,
    );
  }, []);
  const dismissError = useCallback((key: string) => dispatch({ type: "dismissError", key }), []);
  const setMode = useCallback((mode: Mode) => submitOrReport({ type: "setMode", mode }, dispatch), []);
  const undo = useCallback(
    (turnId: string, paths?: string[]) =>
      submitOrReport({ type: "undo", checkpointId: turnId, paths: paths ?? null }, dispatch),
    [],
  );

  const reload = useCallback(() => setGeneration((g) => g + 1), []);
  const refreshProcesses = useCallback(async () => {
    const processes = await processesList();
    dispatch({ type: "processesSeen", processes });
  }, []);
  const stopProcess = useCallback(async (processId: string) => {
    const process = await processStop(processId);
    dispatch({ type: "processesSeen", processes: [process] });
  }, []);

  return {
    state,
    info,
    connection,
    commands: { send, stop, answer, dismissError, setMode, undo, reload, refreshProcesses, stopProcess },
    slashCommands: slash,
    elsewhere,
  };
}

function submitOrReport(op: Op, dispatch: (action: Action) => void): void {
  submit(op).catch((err: unknown) =>
    dispatch({
      type: "bridgeFailed",
      code: "submit_failed",
      message: `Could not send to the engine: ${describeError(err)}`,
      retryable: true,
    }),
  );
}
