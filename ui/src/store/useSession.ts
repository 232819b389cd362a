// The one store of the window: subscribes to engine events, loads the session summary and the
// requests still waiting, and offers the user's commands (send, stop, answer an approval).
import { useCallback, useEffect, useReducer, useState } from "react";
import { onEngineEvent, pendingApprovals, sessionInfo, sessionSnapshot, submit } from "../api/engine";
import type { ApprovalAnswer, ApprovalRequest, Mode, Op, SessionSummary } from "../api/types";
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
}

/** Whether the window is attached to the engine (listening and has the session summary). */
export type Connection = "connecting" | "connected" | "unreachable";

export interface Session {
  state: SessionState;
  info: SessionSummary | null;
  connection: Connection;
  commands: SessionCommands;
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export function useSession(): Session {
  const [state, dispatch] = useReducer(apply, initialState);
  const [info, setInfo] = useState<SessionSummary | null>(null);
  const [connection, setConnection] = useState<Connection>("connecting");

  useEffect(() => {
    let cancelled = false;
    let unlisten: (() => void) | null = null;
    // Listen first, then ask for the summary, so no event falls between the two.
    void (async () => {
      try {
        const stop = await onEngineEvent((event) => dispatch({ type: "engine", event }));
        if (cancelled) return stop();
        unlisten = stop;
        const summary = await sessionInfo();
        if (cancelled) return;
        setInfo(summary);
        setConnection("connected");
        dispatch({ type: "sessionLoaded", info: summary });
      } catch (err) {
        if (cancelled) return;
        const message = `Cannot reach the Bridle engine: ${describe(err)}`;
        setConnection("unreachable");
        dispatch({ type: "bridgeFailed", code: "engine_unreachable", message, retryable: false });
        return;
      }
      // The stored session first (a reopened one shows its whole history), then the requests
      // waiting — after the listener is up, so a request is in the list or arrives as an event.
      try {
        const snapshot = await sessionSnapshot();
        if (!cancelled) dispatch({ type: "snapshotLoaded", snapshot });
      } catch (err) {
        if (cancelled) return;
        const message = `Could not load the stored session: ${describe(err)}`;
        dispatch({ type: "bridgeFailed", code: "session_snapshot_failed", message, retryable: true });
      }
      try {
        const pending = await pendingApprovals();
        if (!cancelled) dispatch({ type: "pendingLoaded", requests: pending });
      } catch (err) {
        if (cancelled) return;
        const message = `Could not load the approval requests waiting from before: ${describe(err)}`;
        dispatch({ type: "bridgeFailed", code: "pending_approvals_failed", message, retryable: true });
      }
    })();
    return () => {
      cancelled = true;
      unlisten?.();
    };
  }, []);

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

  return { state, info, connection, commands: { send, stop, answer, dismissError, setMode, undo } };
}

function submitOrReport(op: Op, dispatch: (action: Action) => void): void {
  submit(op).catch((err: unknown) =>
    dispatch({
      type: "bridgeFailed",
      code: "submit_failed",
      message: `Could not send to the engine: ${describe(err)}`,
      retryable: true,
    }),
  );
}
