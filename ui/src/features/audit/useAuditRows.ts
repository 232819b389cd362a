// Loads audit rows for the filters through `audit_query`, a page at a time: the newest page
// first, older pages as the table scrolls near its end (`loadMore`), so a log of any size opens
// at once. Again when the filters change; `refresh` brings in what is new and keeps the older
// pages already loaded, unless more came in than a page holds (then it starts over: never a
// hidden gap). An answer to an older query never overwrites a newer one.
import { useCallback, useEffect, useRef, useState } from "react";
import { auditQuery } from "../../api/engine";
import { describeError } from "../../api/errors";
import type { AuditEvent } from "../../api/types";
import { AUDIT_LIMIT, type AuditFilters, toQuery } from "./filters";

export interface AuditRows {
  rows: AuditEvent[];
  loading: boolean;
  /** Whether older rows may exist beyond those loaded. */
  more: boolean;
  error: string | null;
  refresh: () => void;
  /** Loads the next older page (nothing while a load is running or when none is left). */
  loadMore: () => void;
}

/**
 * `filters` should keep its identity while unchanged (state or memo): a new object is a new query.
 * `sessionId` null with scope "session" waits (the session is not known yet).
 */
export function useAuditRows(filters: AuditFilters, sessionId: string | null): AuditRows {
  const [rows, setRows] = useState<AuditEvent[]>([]);
  const [loading, setLoading] = useState(true);
  const [more, setMore] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [generation, setGeneration] = useState(0);
  const refresh = useCallback(() => setGeneration((g) => g + 1), []);
  const waiting = filters.scope === "session" && sessionId === null;
  // The query the rows belong to; a page for an older query is dropped.
  const query = useRef(0);
  const paging = useRef(false);
  const lastFilters = useRef<AuditFilters | null>(null);
  // The rows as last set, for the answers to merge with (they arrive outside render).
  const loaded = useRef<AuditEvent[]>([]);

  useEffect(() => {
    if (waiting) return;
    const id = ++query.current;
    const sameFilters = lastFilters.current === filters;
    lastFilters.current = filters;
    setLoading(true);
    auditQuery(toQuery(filters, sessionId, Date.now()))
      .then((page) => {
        if (id !== query.current) return;
        // A refresh keeps the older pages already loaded, below the new first page, when the
        // two meet. A full page whose oldest row is newer than every loaded one may not meet
        // them (more rows came in than a page holds): the loaded rows go, paging starts again
        // from this page, rather than a gap nobody can see.
        const old = sameFilters ? loaded.current : [];
        const oldest = page[page.length - 1]?.id;
        const meets =
          oldest !== undefined && old.length > 0 && (page.length < AUDIT_LIMIT || oldest <= old[0]!.id);
        const next = meets ? [...page, ...old.filter((r) => r.id < oldest)] : page;
        loaded.current = next;
        setRows(next);
        if (!meets) setMore(page.length >= AUDIT_LIMIT);
        setError(null);
      })
      .catch((err: unknown) => {
        if (id === query.current) setError(describeError(err));
      })
      .finally(() => {
        if (id === query.current) setLoading(false);
      });
  }, [filters, sessionId, waiting, generation]);

  const loadMore = useCallback(() => {
    const last = rows[rows.length - 1];
    if (!more || paging.current || loading || !last) return;
    paging.current = true;
    const id = query.current;
    auditQuery({ ...toQuery(filters, sessionId, Date.now()), beforeId: last.id })
      .then((page) => {
        if (id !== query.current) return;
        const next = [...loaded.current, ...page.filter((r) => r.id < last.id)];
        loaded.current = next;
        setRows(next);
        setMore(page.length >= AUDIT_LIMIT);
      })
      .catch((err: unknown) => {
        if (id === query.current) setError(describeError(err));
      })
      .finally(() => {
        paging.current = false;
      });
  }, [rows, more, loading, filters, sessionId]);

  return { rows, loading: loading || waiting, more, error, refresh, loadMore };
}
