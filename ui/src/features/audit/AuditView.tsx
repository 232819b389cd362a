// The Audit view: filter and search the audit log, read a row in full, export it. While open it
// refreshes shortly after engine events (the audit writer commits on its own thread).
import { useEffect, useMemo, useRef, useState } from "react";
import type { AuditEvent } from "../../api/types";
import { AuditDetails } from "./AuditDetails";
import { AuditExport } from "./AuditExport";
import { SessionExport } from "./SessionExport";
import { AuditFilterBar } from "./AuditFilterBar";
import { AuditTable } from "./AuditTable";
import { type AuditFilters, defaultFilters } from "./filters";
import { useAuditRows } from "./useAuditRows";
import { useDebounced } from "./useDebounced";

/** Typing pause before a search or tool filter is sent. */
export const SEARCH_DEBOUNCE_MS = 300;
/** Quiet time after engine events before reloading; a burst of events shares one reload. */
export const REFRESH_DELAY_MS = 800;
/** Longest a reload waits while events keep coming. */
export const REFRESH_MAX_WAIT_MS = 3000;

interface Props {
  /** This window's session; null until known. */
  sessionId: string | null;
  /** Engine events received so far: a change means the log has probably grown. */
  eventCount: number;
}

export function AuditView({ sessionId, eventCount }: Props) {
  const [filters, setFilters] = useState<AuditFilters>(defaultFilters);
  const text = useDebounced(filters.text, SEARCH_DEBOUNCE_MS);
  const tool = useDebounced(filters.tool, SEARCH_DEBOUNCE_MS);
  // Only a settled text or tool makes a new query; the other filters apply at once.
  const { scope, kind, decision, range, from, to } = filters;
  const effective = useMemo(
    () => ({ scope, kind, decision, range, from, to, text, tool }),
    [scope, kind, decision, range, from, to, text, tool],
  );
  const { rows, loading, more, error, refresh, loadMore } = useAuditRows(effective, sessionId);
  const [selected, setSelected] = useState<AuditEvent | null>(null);
  const scroller = useRef<HTMLDivElement>(null);
  useRefreshOnEvents(eventCount, refresh);

  return (
    <section className="audit" aria-label="Audit">
      <header className="view-header">
        <h1>Audit</h1>
        <span className="muted">
          {loading ? "Loading…" : `${rows.length.toLocaleString("en-US")}${more ? "+ (scroll for older)" : ""} rows`}
        </span>
        <span className="spacer" />
        <button type="button" className="button" onClick={refresh}>
          Refresh
        </button>
        <AuditExport />
        <SessionExport sessionId={sessionId} />
      </header>
      <AuditFilterBar filters={filters} onChange={setFilters} />
      {error && (
        <p className="field-error" role="status">
          Could not read the audit log: {error}
        </p>
      )}
      <div className={selected ? "audit-body with-details" : "audit-body"}>
        <div className="audit-scroll" ref={scroller}>
          {!loading && rows.length === 0 && !error && <p className="muted audit-empty">No audit rows match.</p>}
          {rows.length > 0 && (
            <AuditTable
              rows={rows}
              selectedId={selected?.id ?? null}
              showSession={filters.scope === "all"}
              onSelect={setSelected}
              scroller={scroller}
              onNearEnd={loadMore}
            />
          )}
        </div>
        {selected && <AuditDetails row={selected} onClose={() => setSelected(null)} />}
      </div>
    </section>
  );
}

/**
 * Calls `refresh` once events stop arriving for REFRESH_DELAY_MS, and at least every
 * REFRESH_MAX_WAIT_MS during a long stream of them, so a busy turn still shows up as it goes.
 */
function useRefreshOnEvents(eventCount: number, refresh: () => void): void {
  const handled = useRef(eventCount);
  const firstPending = useRef<number | null>(null);
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  const refreshRef = useRef(refresh);
  useEffect(() => {
    refreshRef.current = refresh;
  });
  useEffect(() => {
    if (eventCount === handled.current) return;
    const now = Date.now();
    firstPending.current ??= now;
    const delay = Math.max(0, Math.min(REFRESH_DELAY_MS, firstPending.current + REFRESH_MAX_WAIT_MS - now));
    if (timer.current !== null) clearTimeout(timer.current);
    timer.current = setTimeout(() => {
      timer.current = null;
      firstPending.current = null;
      handled.current = eventCount;
      refreshRef.current();
    }, delay);
  }, [eventCount]);
  useEffect(
    () => () => {
      if (timer.current !== null) clearTimeout(timer.current);
      timer.current = null;
    },
    [],
  );
}
