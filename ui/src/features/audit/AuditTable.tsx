// Audit rows, newest first, one line each; a click (or Enter) selects a row for the details pane.
import type { AuditEvent } from "../../api/types";
import { clockTime, latency, shortId } from "./format";

interface Props {
  rows: AuditEvent[];
  selectedId: number | null;
  showSession: boolean;
  onSelect: (row: AuditEvent) => void;
}

export function AuditTable({ rows, selectedId, showSession, onSelect }: Props) {
  return (
    <table className="audit-table">
      <thead>
        <tr>
          <th>Time</th>
          {showSession && <th>Session</th>}
          <th>Kind</th>
          <th>Tool</th>
          <th>Decision</th>
          <th>Source</th>
          <th>Status</th>
          <th className="num">Latency</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr
            key={row.id}
            className={row.id === selectedId ? "audit-row selected" : "audit-row"}
            data-testid="audit-row"
            data-kind={row.kind}
            data-decision={row.decision ?? ""}
            aria-selected={row.id === selectedId}
            tabIndex={0}
            onClick={() => onSelect(row)}
            onKeyDown={(e) => {
              if (e.key === "Enter" || e.key === " ") {
                e.preventDefault();
                onSelect(row);
              }
            }}
          >
            <td className="mono" title={new Date(row.at).toISOString()}>
              {clockTime(row.at)}
            </td>
            {showSession && <td className="mono">{shortId(row.sessionId)}</td>}
            <td>{row.kind}</td>
            <td className="mono">{row.tool ?? ""}</td>
            <td>{row.decision && <span className={`decision-badge ${row.decision}`}>{row.decision}</span>}</td>
            <td>{row.source ?? ""}</td>
            <td>{row.status ?? ""}</td>
            <td className="num">{latency(row.latencyMs)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
