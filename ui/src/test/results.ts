// Tool results as the engine sends them, for component tests: a bash run's typed details with
// every field filled in, so a test names only the fields it is about.
import type { ShellDetails, ShellEffects, ToolResult } from "../api/types";

/** A bash command that exited 0 in bubblewrap, outside a session (no effects followed). */
export function shellDetails(over: Partial<ShellDetails> = {}): ShellDetails {
  return {
    exitCode: 0,
    timedOut: false,
    outputTooLarge: false,
    durationMs: 20,
    outputFile: null,
    stoppedBackground: 0,
    sandbox: "bwrap",
    sandboxGaps: null,
    sandboxHome: null,
    escalated: false,
    network: false,
    hosts: [],
    checkpointed: false,
    effects: null,
    ...over,
  };
}

/** A captured command's effects that changed nothing. */
export function shellEffects(over: Partial<ShellEffects> = {}): ShellEffects {
  return {
    captured: true,
    undoable: true,
    reason: null,
    changes: [],
    listed: [],
    partial: false,
    ignored: null,
    git: [],
    refused: [],
    discarded: [],
    discardedBecause: null,
    error: null,
    ...over,
  };
}

/** The result of bash call `id` that ran as `over` says, with `diff`. */
export function bashResult(over: Partial<ShellDetails> = {}, diff: string | null = null, id = "b1"): ToolResult {
  const details = { type: "shell" as const, ...shellDetails(over) };
  return { toolCallId: id, output: "exit code 0\n", isError: false, details, data: null, diff };
}
