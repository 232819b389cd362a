// One audit row in full: every field, the hash chain link, and the sanitised payload as JSON.
import type { AuditEvent } from "../../api/types";
import { fullTime, latency, prettyPayload } from "./format";

interface Props {
  row: AuditEvent;
  onClose: () => void;
}

export function AuditDetails({ row, onClose }: Props) {
  const fields: [string, string][] = [
    ["id", String(row.id)],
    ["at", fullTime(row.at)],
    ["kind", row.kind],
    ["session", row.sessionId ?? ""],
    ["turn", row.turnId ?? ""],
    ["call", row.callId ?? ""],
    ["tool", row.tool ?? ""],
    ["decision", row.decision ?? ""],
    ["source", row.source ?? ""],
    ["status", row.status ?? ""],
    ["latency", latency(row.latencyMs)],
    ["hash", row.hash],
    ["prevHash", row.prevHash],
  ];
  return (
    <aside className="audit-details" data-testid="audit-details" aria-label="Audit row details">
      <div className="audit-details-head">
        <span>Row {row.id}</span>
        <button type="button" className="link-button" aria-label="Close details" onClick={onClose}>
          ×
        </button>
      </div>
      <dl>
        {fields
          .filter(([, value]) => value !== "")
          .map(([name, value]) => (
            <div key={name} className="audit-field">
              <dt>{name}</dt>
              <dd className={name.endsWith("ash") ? "mono hash" : undefined}>{value}</dd>
            </div>
          ))}
      </dl>
      <div className="approval-label">payload</div>
      <pre className="code" data-testid="audit-payload">
        {prettyPayload(row.payload)}
      </pre>
    </aside>
  );
}
