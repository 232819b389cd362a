// Audit rows, newest first, one line each; a click (or Enter) selects a row for the details pane.
// Virtualised: only the rows in view (and a margin) are in the DOM, spacer rows keep the table's
// height, so a log of 100,000 rows scrolls like one of 100 (each row memoised: a scroll renders
// only the rows that came into view); nearing the end asks for the next older page. The columns
// have set widths (audit.css), not their rows' contents: rows coming into view neither move them
// nor lay the table out anew, and a value too long for its cell ends in "…" with a tooltip.
import { useVirtualizer } from "@tanstack/react-virtual";
import { type RefObject, memo, useEffect } from "react";
import type { AuditEvent } from "../../api/types";
import { AUDIT_LIMIT } from "./filters";
import { clockTime, latency, shortId } from "./format";

/** A row's height in pixels (one line of 13px text with its padding and border). */
const ROW_HEIGHT = 27;
/** How many loaded rows are left below the view when the next older page is asked for: half a
 * page, so a page has time to arrive before a fast scroll reaches the last loaded row. */
const AHEAD = AUDIT_LIMIT / 2;

interface Props {
  rows: AuditEvent[];
  selectedId: number | null;
  showSession: boolean;
  onSelect: (row: AuditEvent) => void;
  /** The element that scrolls the table. */
  scroller: RefObject<HTMLDivElement | null>;
  /** Called when the view nears the last loaded row. */
  onNearEnd: () => void;
}

export function AuditTable({ rows, selectedId, showSession, onSelect, scroller, onNearEnd }: Props) {
  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 20,
    getItemKey: (index) => rows[index]?.id ?? index,
  });
  const shown = virtualizer.getVirtualItems();
  const last = shown[shown.length - 1]?.index ?? 0;
  useEffect(() => {
    if (rows.length > 0 && last >= rows.length - AHEAD) onNearEnd();
  }, [last, rows.length, onNearEnd]);

  const columns = showSession ? 8 : 7;
  const before = shown[0]?.start ?? 0;
  const after = virtualizer.getTotalSize() - (shown[shown.length - 1]?.end ?? 0);
  return (
    <table className="audit-table">
      <colgroup>
        <col className="audit-col-time" />
        {showSession && <col className="audit-col-session" />}
        <col />
        <col className="audit-col-tool" />
        <col className="audit-col-decision" />
        <col className="audit-col-source" />
        <col className="audit-col-status" />
        <col className="audit-col-latency" />
      </colgroup>
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
        {before > 0 && (
          <tr aria-hidden="true" className="audit-spacer">
            <td colSpan={columns} style={{ height: before }} />
          </tr>
        )}
        {shown.map((v) => {
          const row = rows[v.index];
          return row ? <AuditRow key={row.id} row={row} selected={row.id === selectedId} showSession={showSession} onSelect={onSelect} /> : null;
        })}
        {after > 0 && (
          <tr aria-hidden="true" className="audit-spacer">
            <td colSpan={columns} style={{ height: after }} />
          </tr>
        )}
      </tbody>
    </table>
  );
}

interface RowProps {
  row: AuditEvent;
  selected: boolean;
  showSession: boolean;
  onSelect: (row: AuditEvent) => void;
}

/** One row; memoised, so a scroll renders only the rows that came into view. */
const AuditRow = memo(function AuditRow({ row, selected, showSession, onSelect }: RowProps) {
  return (
    <tr
      className={selected ? "audit-row selected" : "audit-row"}
      data-testid="audit-row"
      data-kind={row.kind}
      data-decision={row.decision ?? ""}
      aria-selected={selected}
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
      <td title={row.kind}>{row.kind}</td>
      <td className="mono" title={row.tool ?? undefined}>
        {row.tool ?? ""}
      </td>
      <td>{row.decision && <span className={`decision-badge ${row.decision}`}>{row.decision}</span>}</td>
      <td>{row.source ?? ""}</td>
      <td title={row.status ?? undefined}>{row.status ?? ""}</td>
      <td className="num">{latency(row.latencyMs)}</td>
    </tr>
  );
});
