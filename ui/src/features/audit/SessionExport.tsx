// Export this window's session with proof: its audit rows (redacted as the log is) with their
// hashes and the chain head, as Markdown or JSON, written into the data dir's `exports` folder;
// `bridle audit verify --export FILE` checks it against the log later.
import { useState } from "react";
import { sessionExport } from "../../api/engine";
import { describeError } from "../../api/errors";

type ExportState = { phase: "idle" } | { phase: "busy" } | { phase: "done"; path: string } | { phase: "failed"; message: string };

export function SessionExport({ sessionId }: { sessionId: string | null }) {
  const [state, setState] = useState<ExportState>({ phase: "idle" });
  const run = (format: "md" | "json") => {
    if (!sessionId) return;
    setState({ phase: "busy" });
    sessionExport(sessionId, format).then(
      (path) => setState({ phase: "done", path }),
      (err: unknown) => setState({ phase: "failed", message: describeError(err) }),
    );
  };
  const disabled = !sessionId || state.phase === "busy";
  return (
    <div className="audit-export">
      <button type="button" className="button" data-testid="session-export-md" disabled={disabled} onClick={() => run("md")}>
        Export session (Markdown)
      </button>
      <button type="button" className="button" data-testid="session-export-json" disabled={disabled} onClick={() => run("json")}>
        Export session (JSON)
      </button>
      {state.phase === "done" && (
        <span className="muted">
          Written with its proof to <code data-testid="session-export-path">{state.path}</code>
        </span>
      )}
      {state.phase === "failed" && <span className="field-error">Export failed: {state.message}</span>}
    </div>
  );
}
