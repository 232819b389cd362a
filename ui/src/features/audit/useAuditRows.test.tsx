// Paging the audit log: the newest page first, older pages through `beforeId`, and a refresh
// that keeps the older pages only when its new first page meets them (no silent gap).
import { act, renderHook, waitFor } from "@testing-library/react";
import { beforeEach, describe, expect, it, vi } from "vitest";
import type { AuditEvent, AuditQuery } from "../../api/types";
import { fakeEngine } from "../../test/fakeEngine";
import { AUDIT_LIMIT, defaultFilters } from "./filters";
import { useAuditRows } from "./useAuditRows";

vi.mock("../../api/engine", () => import("../../test/fakeEngine").then((m) => m.engineModule));

const row = (id: number): AuditEvent => ({
  id,
  at: id * 1000,
  sessionId: "s1",
  turnId: null,
  callId: null,
  tool: null,
  kind: "tool_call",
  decision: null,
  source: null,
  status: null,
  latencyMs: null,
  payload: null,
  prevHash: "",
  hash: "",
});

/** A log of rows 1..`newest`, answered a page at a time, newest first, as the shell does. */
let newest = 0;
function serve(q: AuditQuery): AuditEvent[] {
  const top = Math.min(q.beforeId ?? newest + 1, newest + 1);
  const n = Math.min(q.limit ?? AUDIT_LIMIT, top - 1);
  return Array.from({ length: n }, (_, i) => row(top - 1 - i));
}

const ids = (rows: AuditEvent[]) => rows.map((r) => r.id);
const range = (from: number, to: number) => Array.from({ length: from - to + 1 }, (_, i) => from - i);

describe("useAuditRows", () => {
  beforeEach(() => {
    newest = 2000;
    fakeEngine.auditQuery.mockImplementation(async (q: AuditQuery) => serve(q));
  });

  it("loads the newest page, then older ones on demand, until none is left", async () => {
    newest = 1200;
    const { result } = renderHook(() => useAuditRows(defaultFilters, "s1"));
    await waitFor(() => expect(result.current.rows).toHaveLength(500));
    expect(result.current.more).toBe(true);
    act(() => result.current.loadMore());
    await waitFor(() => expect(result.current.rows).toHaveLength(1000));
    act(() => result.current.loadMore());
    await waitFor(() => expect(result.current.rows).toHaveLength(1200));
    expect(result.current.more).toBe(false);
    expect(ids(result.current.rows)).toEqual(range(1200, 1));
    expect(fakeEngine.auditQuery.mock.calls.map(([q]) => q.beforeId)).toEqual([null, 701, 201]);
  });

  it("keeps the older pages on a refresh that meets them", async () => {
    const { result } = renderHook(() => useAuditRows(defaultFilters, "s1"));
    await waitFor(() => expect(result.current.rows).toHaveLength(500));
    act(() => result.current.loadMore());
    await waitFor(() => expect(result.current.rows).toHaveLength(1000));

    newest = 2100;
    act(() => result.current.refresh());
    await waitFor(() => expect(result.current.rows[0]?.id).toBe(2100));
    expect(ids(result.current.rows)).toEqual(range(2100, 1001));
    expect(result.current.more).toBe(true);
  });

  it("starts over from the new page when more rows came in than a page holds", async () => {
    const { result } = renderHook(() => useAuditRows(defaultFilters, "s1"));
    await waitFor(() => expect(result.current.rows).toHaveLength(500));
    act(() => result.current.loadMore());
    await waitFor(() => expect(result.current.rows).toHaveLength(1000));

    // 700 new rows: the new first page is 2700..2201, and 2200..2001 are in neither it nor the
    // rows loaded. Keeping those would hide 200 rows between the two.
    newest = 2700;
    act(() => result.current.refresh());
    await waitFor(() => expect(result.current.rows[0]?.id).toBe(2700));
    expect(ids(result.current.rows)).toEqual(range(2700, 2201));
    expect(result.current.more).toBe(true);
    act(() => result.current.loadMore());
    await waitFor(() => expect(result.current.rows).toHaveLength(1000));
    expect(ids(result.current.rows)).toEqual(range(2700, 1701));
  });
});
