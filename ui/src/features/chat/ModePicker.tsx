// The session's mode, as a picker. The select always shows the mode the engine reports in force
// (its summary, then `modeChanged`), never the one merely asked for: a switch asked for during a
// turn waits for the turn to end, and meanwhile a hint says so, instead of the select snapping
// back without a word.
import { useState } from "react";
import type { Mode } from "../../api/types";

interface Props {
  mode: Mode;
  /** The modes the managed policy allows; absent, every mode. */
  allowed?: Mode[];
  busy: boolean;
  onMode: (mode: Mode) => void;
}

/** Every mode, strictest first, with what it lets the agent do. */
export const MODES: { mode: Mode; hint: string }[] = [
  { mode: "read-only", hint: "reads only" },
  { mode: "plan", hint: "reads, and commands that cannot write" },
  { mode: "ask", hint: "asks before every change or command" },
  { mode: "review", hint: "runs sandboxed commands; their file changes wait for you as a diff" },
  { mode: "auto-edit", hint: "edits files, asks before commands" },
  { mode: "auto", hint: "runs sandboxed commands; asks when the guard finds something" },
  { mode: "bypass", hint: "runs everything unsandboxed but hard denials" },
];

/** The modes to offer: every mode, or only those a managed policy allows. */
export function allowedModes(allowed?: Mode[]): typeof MODES {
  return allowed ? MODES.filter((m) => allowed.includes(m.mode)) : MODES;
}

export function ModePicker({ mode, allowed, busy, onMode }: Props) {
  const [requested, setRequested] = useState<Mode | null>(null);
  // Only while a turn runs: when idle the engine switches at once, and a request that failed
  // (reported by the error banner) must not leave a stale hint behind.
  const waiting = busy && requested !== null && requested !== mode;
  return (
    <>
      <label className="mode-picker" title="Mode: how much the agent may do without asking">
        <span className="visually-hidden">Mode</span>
        <select
          data-testid="session-mode"
          value={mode}
          onChange={(e) => {
            const next = e.target.value as Mode;
            setRequested(next);
            onMode(next);
          }}
        >
          {allowedModes(allowed).map((m) => (
            <option key={m.mode} value={m.mode} title={m.hint}>
              {m.mode}
            </option>
          ))}
        </select>
      </label>
      {waiting && (
        <span className="chip mode-pending" data-testid="session-mode-pending" data-mode={requested}>
          {requested} after this turn
        </span>
      )}
    </>
  );
}
