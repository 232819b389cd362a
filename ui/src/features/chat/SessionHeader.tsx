// One line above the transcript: which workspace, model and mode this session runs with.
import type { SessionSummary } from "../../api/types";

export function SessionHeader({ info, busy }: { info: SessionSummary | null; busy: boolean }) {
  return (
    <header className="session-header">
      <span className="session-workspace" data-testid="session-workspace" title={info?.workspace}>
        {info ? info.workspace : "Connecting…"}
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
