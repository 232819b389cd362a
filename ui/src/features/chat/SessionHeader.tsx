// One line above the transcript: which workspace and model this session runs with, its mode (a
// picker: the engine switches between turns and confirms), and how `bash` runs under it.
import type { Mode, SessionSummary } from "../../api/types";
import type { RunMode } from "../../store/state";
import type { Connection } from "../../store/useSession";
import { SandboxStatus } from "./SandboxStatus";

interface Props {
  info: SessionSummary | null;
  runMode: RunMode | null;
  connection: Connection;
  busy: boolean;
  onMode: (mode: Mode) => void;
}

/** Every mode, strictest first, with what it lets the agent do. */
const MODES: { mode: Mode; hint: string }[] = [
  { mode: "read-only", hint: "reads only" },
  { mode: "plan", hint: "reads, and commands that cannot write" },
  { mode: "ask", hint: "asks before every change or command" },
  { mode: "auto-edit", hint: "edits files, asks before commands" },
  { mode: "auto", hint: "runs sandboxed commands; asks when the guard finds something" },
  { mode: "bypass", hint: "runs everything unsandboxed but hard denials" },
];

export function SessionHeader({ info, runMode, connection, busy, onMode }: Props) {
  return (
    <header className="session-header">
      <span className="session-workspace" data-testid="session-workspace" title={info?.workspace}>
        {info ? info.workspace : connection === "unreachable" ? "Not connected to the engine" : "Connecting…"}
      </span>
      {info && (
        <span className="chip" title="Model">
          {info.model ?? "no model configured"}
        </span>
      )}
      {runMode && (
        <>
          <label className="mode-picker" title="Mode: how much the agent may do without asking">
            <span className="visually-hidden">Mode</span>
            <select
              data-testid="session-mode"
              value={runMode.mode}
              onChange={(e) => onMode(e.target.value as Mode)}
            >
              {MODES.map(({ mode, hint }) => (
                <option key={mode} value={mode} title={hint}>
                  {mode}
                </option>
              ))}
            </select>
          </label>
          <SandboxStatus sandbox={runMode.sandbox} why={runMode.unsandboxedBecause} />
        </>
      )}
      <span className={busy ? "turn-state busy" : "turn-state"} role="status">
        {busy ? "Working…" : "Idle"}
      </span>
    </header>
  );
}
