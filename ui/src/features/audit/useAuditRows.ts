// Loads audit rows for the filters through `audit_query`; again when the filters change or
// `refresh` is called. An answer to an older query never overwrites a newer one.
import { useCallback, useEffect, useState } from "react";
import { auditQuery } from "../../api/engine";
import type { AuditEvent } from "../../api/types";
import { type AuditFilters, toQuery } from "./filters";

export interface AuditRows {
  rows: AuditEvent[];
  loading: boolean;
  error: string | null;
  refresh: () => void;
}

/**
 * `filters` should keep its identity while unchanged (state or memo): a new object is a new query.
 * `sessionId` null with scope "session" waits (the session is not known yet).
 */
export function useAuditRows(filters: AuditFilters, sessionId: string | null): AuditRows {
  const [rows, setRows] = useState<AuditEvent[]>([]);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<string | null>(null);
  const [generation, setGeneration] = useState(0);
  const refresh = useCallback(() => setGeneration((g) => g + 1), []);
  const waiting = filters.scope === "session" && sessionId === null;

  useEffect(() => {
    if (waiting) return;
    let stale = false;
    setLoading(true);
    auditQuery(toQuery(filters, sessionId, Date.now()))
      .then((found) => {
        if (stale) return;
        setRows(found);
        setError(null);
      })
      .catch((err: unknown) => {
        if (!stale) setError(err instanceof Error ? err.message : String(err));
      })
      .finally(() => {
        if (!stale) setLoading(false);
      });
    return () => {
      stale = true;
    };
  }, [filters, sessionId, waiting, generation]);

  return { rows, loading: loading || waiting, error, refresh };
}
