// The Audit view's filter row: session scope, tool, kind, decision, time range and the search box.
import type { Decision } from "../../api/types";
import { AUDIT_KINDS, type AuditFilters, DECISIONS, RANGES, type RangeId } from "./filters";

interface Props {
  filters: AuditFilters;
  onChange: (filters: AuditFilters) => void;
}

export function AuditFilterBar({ filters, onChange }: Props) {
  const set = <K extends keyof AuditFilters>(key: K, value: AuditFilters[K]) => onChange({ ...filters, [key]: value });
  return (
    <div className="audit-filters">
      <input
        type="search"
        className="audit-search"
        data-testid="audit-search"
        placeholder="Search payloads…"
        aria-label="Search"
        value={filters.text}
        onChange={(e) => set("text", e.target.value)}
      />
      <select aria-label="Session" value={filters.scope} onChange={(e) => set("scope", e.target.value as AuditFilters["scope"])}>
        <option value="session">This session</option>
        <option value="all">All sessions</option>
      </select>
      <input
        className="audit-tool"
        aria-label="Tool"
        placeholder="Any tool"
        value={filters.tool}
        onChange={(e) => set("tool", e.target.value)}
      />
      <select aria-label="Kind" value={filters.kind} onChange={(e) => set("kind", e.target.value)}>
        <option value="">Any kind</option>
        {AUDIT_KINDS.map((k) => (
          <option key={k} value={k}>
            {k}
          </option>
        ))}
      </select>
      <select aria-label="Decision" value={filters.decision} onChange={(e) => set("decision", e.target.value as Decision | "")}>
        <option value="">Any decision</option>
        {DECISIONS.map((d) => (
          <option key={d} value={d}>
            {d}
          </option>
        ))}
      </select>
      <select aria-label="Time range" value={filters.range} onChange={(e) => set("range", e.target.value as RangeId)}>
        {RANGES.map((r) => (
          <option key={r.id} value={r.id}>
            {r.label}
          </option>
        ))}
      </select>
      {filters.range === "custom" && (
        <>
          <input type="datetime-local" step="1" aria-label="From" value={filters.from} onChange={(e) => set("from", e.target.value)} />
          <input type="datetime-local" step="1" aria-label="Until" value={filters.to} onChange={(e) => set("to", e.target.value)} />
        </>
      )}
    </div>
  );
}
