// The Audit view's filters as the user sets them, and how they become an `AuditQuery`: relative
// time ranges are resolved against the clock when the query is made.
import type { AuditQuery, Decision } from "../../api/types";

/** Audit row kinds (DESIGN section 7), in the order a turn produces them. */
export const AUDIT_KINDS = [
  "session_started",
  "user_message",
  "model_request",
  "tool_call",
  "guard_decision",
  "approval_requested",
  "approval_resolved",
  "tool_started",
  "tool_completed",
  "tool_failed",
  "file_changed",
  "compaction",
  "error",
  "warning",
  "mode_changed",
  "undone",
  "network",
  "process",
] as const;

export const DECISIONS: Decision[] = ["allow", "ask", "deny"];

/** Time ranges offered; `custom` uses the from/to fields. */
export const RANGES = [
  { id: "all", label: "All time", ms: null },
  { id: "15m", label: "Last 15 minutes", ms: 15 * 60_000 },
  { id: "1h", label: "Last hour", ms: 60 * 60_000 },
  { id: "24h", label: "Last 24 hours", ms: 24 * 60 * 60_000 },
  { id: "7d", label: "Last 7 days", ms: 7 * 24 * 60 * 60_000 },
  { id: "custom", label: "Custom…", ms: null },
] as const;

export type RangeId = (typeof RANGES)[number]["id"];

/** Rows asked for at once; the engine caps it too. */
export const AUDIT_LIMIT = 500;

export interface AuditFilters {
  /** This window's session, or every session in the log. */
  scope: "session" | "all";
  tool: string;
  kind: string;
  decision: Decision | "";
  range: RangeId;
  /** `datetime-local` values for the custom range; empty is open. */
  from: string;
  to: string;
  text: string;
}

export const defaultFilters: AuditFilters = {
  scope: "session",
  tool: "",
  kind: "",
  decision: "",
  range: "all",
  from: "",
  to: "",
  text: "",
};

function localTime(value: string): number | null {
  if (!value) return null;
  const ms = new Date(value).getTime();
  return Number.isNaN(ms) ? null : ms;
}

const orNull = (value: string): string | null => (value.trim() === "" ? null : value.trim());

export function toQuery(filters: AuditFilters, sessionId: string | null, now: number): AuditQuery {
  const preset = RANGES.find((r) => r.id === filters.range);
  const custom = filters.range === "custom";
  return {
    sessionId: filters.scope === "session" ? sessionId : null,
    tool: orNull(filters.tool),
    kind: orNull(filters.kind),
    decision: filters.decision === "" ? null : filters.decision,
    since: custom ? localTime(filters.from) : preset?.ms ? now - preset.ms : null,
    until: custom ? localTime(filters.to) : null,
    text: orNull(filters.text),
    limit: AUDIT_LIMIT,
    beforeId: null,
  };
}
