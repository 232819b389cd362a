// The Export button: writes the whole log as JSONL in the data dir and says where.
import { useState } from "react";
import { auditExport } from "../../api/engine";
import { describeError } from "../../api/errors";

type ExportState = { phase: "idle" } | { phase: "busy" } | { phase: "done"; path: string } | { phase: "failed"; message: string };

export function AuditExport() {
  const [state, setState] = useState<ExportState>({ phase: "idle" });
  const run = () => {
    setState({ phase: "busy" });
    auditExport().then(
      (path) => setState({ phase: "done", path }),
      (err: unknown) => setState({ phase: "failed", message: describeError(err) }),
    );
  };
  return (
    <div className="audit-export">
      <button type="button" className="button" data-testid="audit-export" disabled={state.phase === "busy"} onClick={run}>
        {state.phase === "busy" ? "Exporting…" : "Export JSONL"}
      </button>
      {state.phase === "done" && (
        <span className="muted">
          Written to <code data-testid="audit-export-path">{state.path}</code>
        </span>
      )}
      {state.phase === "failed" && <span className="field-error">Export failed: {state.message}</span>}
    </div>
  );
}
