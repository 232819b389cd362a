// One line above the transcript: which workspace, model and mode this session runs with.
import type { SessionSummary } from "../../api/types";
import type { Connection } from "../../store/useSession";

interface Props {
  info: SessionSummary | null;
  connection: Connection;
  busy: boolean;
}

export function SessionHeader({ info, connection, busy }: Props) {
  return (
    <header className="session-header">
      <span className="session-workspace" data-testid="session-workspace" title={info?.workspace}>
        {info ? info.workspace : connection === "unreachable" ? "Not connected to the engine" : "Connecting…"}
      </span>
      {info && (
        <>
          <span className="chip" title="Model">
            {info.model ?? "no model configured"}
          </span>
          <span className="chip" title="Mode: how much the agent may do without asking">
            {info.mode}
          </span>
        </>
      )}
      <span className={busy ? "turn-state busy" : "turn-state"} role="status">
        {busy ? "Working…" : "Idle"}
      </span>
    </header>
  );
}
