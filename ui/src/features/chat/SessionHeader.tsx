// One line above the transcript: which workspace and model this session runs with, its mode (a
// picker: the engine switches between turns and confirms), how `bash` runs under it, and whether
// a turn is working — or reconnecting after its stream broke, or the engine is still starting;
// which project instruction files (`AGENTS.md`, `CLAUDE.md`) the model was given, with what they
// cost in every request; and how many background processes run.
import type { Mode, SessionSummary } from "../../api/types";
import type { RunMode, SessionState } from "../../store/state";
import type { Connection } from "../../store/useSession";
import { formatTokens } from "../usage/format";
import { ModePicker } from "./ModePicker";
import { SandboxStatus } from "./SandboxStatus";

interface Props {
  info: SessionSummary | null;
  runMode: RunMode | null;
  connection: Connection;
  busy: boolean;
  reconnecting: SessionState["reconnecting"];
  /** Background processes of the session still running. */
  runningProcesses: number;
  onMode: (mode: Mode) => void;
}

export function SessionHeader({ info, runMode, connection, busy, reconnecting, runningProcesses, onMode }: Props) {
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
      {info && info.instructions.length > 0 && (
        <span
          className="chip"
          data-testid="instruction-files"
          title={info.instructions.map((f) => `${f.path} (${f.tokens} tokens)`).join("\n")}
        >
          {info.instructions.map((f) => f.path.split("/").pop()).join(" + ")} ·{" "}
          {formatTokens(info.instructions.reduce((sum, f) => sum + f.tokens, 0))} tokens
        </span>
      )}
      {runMode && (
        <>
          <ModePicker mode={runMode.mode} allowed={info?.allowedModes} busy={busy} onMode={onMode} />
          <SandboxStatus sandbox={runMode.sandbox} why={runMode.unsandboxedBecause} home={runMode.sandboxHome} />
        </>
      )}
      {runningProcesses > 0 && (
        <span className="chip processes-count" data-testid="processes-count" title="Background processes running">
          {runningProcesses} running
        </span>
      )}
      {reconnecting ? (
        <span className="turn-state reconnecting" role="status" data-testid="reconnecting" title={reconnecting.reason}>
          reconnecting ({reconnecting.attempt}/{reconnecting.maxAttempts})
        </span>
      ) : connection === "connecting" ? (
        // The window opens before the engine has started (the store, the sandbox probe, the
        // keychain): what is typed meanwhile is sent once it has.
        <span className="turn-state busy" role="status" data-testid="engine-starting">
          Starting the engine…
        </span>
      ) : (
        <span className={busy ? "turn-state busy" : "turn-state"} role="status">
          {busy ? "Working…" : "Idle"}
        </span>
      )}
    </header>
  );
}
