// Audit view tests: the view against the fake engine bridge; what is checked is the rows and
// details the user sees and the queries that reach `audit_query`.
import { fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";
import type { AuditEvent, AuditQuery } from "../../api/types";
import { fakeEngine } from "../../test/fakeEngine";
import { AuditView } from "./AuditView";

vi.mock("../../api/engine", () => import("../../test/fakeEngine").then((m) => m.engineModule));

const row = (id: number, over: Partial<AuditEvent> = {}): AuditEvent => ({
  id,
  at: Date.UTC(2026, 10, 21, 12, 0, id),
  sessionId: "s1",
  turnId: "t1",
  callId: "c1",
  tool: "write_file",
  kind: "tool_call",
  decision: null,
  source: null,
  status: null,
  latencyMs: null,
  payload: { path: "notes/a.txt" },
  prevHash: `prev-${id}`,
  hash: `hash-${id}`,
  ...over,
});

const ROWS = [
  row(3, { kind: "approval_resolved", decision: "allow", source: "user", status: "approved", payload: { approvalId: "a1", answer: "approveOnce" } }),
  row(2, { kind: "guard_decision", decision: "ask", source: "mode", latencyMs: 3 }),
  row(1, { kind: "user_message", tool: null, callId: null, payload: { text: "write the note" } }),
];

const queries = () => fakeEngine.auditQuery.mock.calls.map(([q]) => q);
const lastQuery = (): AuditQuery | undefined => queries()[queries().length - 1];

describe("Audit view", () => {
  it("pages through a large log: a bounded window of rows, the next older page near the end", async () => {
    // 100,000 rows, newest first, served 500 at a time as the shell does.
    const page = (beforeId: number | null) => {
      const top = beforeId ?? 100_001;
      return Array.from({ length: Math.min(500, top - 1) }, (_, i) => row(top - 1 - i, { kind: "guard_decision" }));
    };
    fakeEngine.auditQuery.mockImplementation(async (q: AuditQuery) => page(q.beforeId));
    const { container } = render(<AuditView sessionId="s1" eventCount={0} />);
    await waitFor(() => expect(screen.getAllByTestId("audit-row").length).toBeGreaterThan(10));
    expect(screen.getAllByTestId("audit-row").length).toBeLessThan(100);
    expect(screen.getByText("500+ (scroll for older) rows")).toBeTruthy();

    const scroller = container.querySelector(".audit-scroll") as HTMLDivElement;
    Object.defineProperty(scroller, "scrollTop", { configurable: true, value: 27 * 480 });
    fireEvent.scroll(scroller);
    await waitFor(() => expect(lastQuery()?.beforeId).toBe(99_501));
    await screen.findByText("1,000+ (scroll for older) rows");
    expect(screen.getAllByTestId("audit-row").length).toBeLessThan(100);
    fakeEngine.auditQuery.mockImplementation(async () => []);
  });

  it("shows the session's rows with their kind and decision, and a row's details on click", async () => {
    fakeEngine.auditQuery.mockResolvedValueOnce(ROWS);
    const user = userEvent.setup();
    render(<AuditView sessionId="s1" eventCount={0} />);
    const rows = await screen.findAllByTestId("audit-row");
    expect(rows.map((r) => [r.dataset.kind, r.dataset.decision])).toEqual([
      ["approval_resolved", "allow"],
      ["guard_decision", "ask"],
      ["user_message", ""],
    ]);
    expect(queries()).toEqual([
      { sessionId: "s1", tool: null, kind: null, decision: null, since: null, until: null, text: null, limit: 500, beforeId: null },
    ]);

    await user.click(rows[1]!);
    const details = screen.getByTestId("audit-details");
    expect(within(details).getByText("hash-2")).toBeTruthy();
    expect(within(details).getByText("prev-2")).toBeTruthy();
    expect(within(details).getByText("3 ms")).toBeTruthy();
    await user.click(rows[0]!);
    expect(within(details).getByTestId("audit-payload").textContent).toBe('{\n  "approvalId": "a1",\n  "answer": "approveOnce"\n}');
    await user.click(within(details).getByRole("button", { name: "Close details" }));
    expect(screen.queryByTestId("audit-details")).toBeNull();
  });

  it("sends the filters as the query: all sessions, kind, decision, tool and time range", async () => {
    const user = userEvent.setup();
    render(<AuditView sessionId="s1" eventCount={0} />);
    await waitFor(() => expect(queries()).toHaveLength(1));
    await user.selectOptions(screen.getByLabelText("Session"), "all");
    await user.selectOptions(screen.getByLabelText("Kind"), "approval_resolved");
    await user.selectOptions(screen.getByLabelText("Decision"), "deny");
    await user.type(screen.getByLabelText("Tool"), "bash");
    await waitFor(() => expect(lastQuery()?.tool).toBe("bash"));
    expect(lastQuery()).toMatchObject({ sessionId: null, kind: "approval_resolved", decision: "deny", since: null });

    const before = Date.now();
    await user.selectOptions(screen.getByLabelText("Time range"), "1h");
    await waitFor(() => expect(lastQuery()?.since).not.toBeNull());
    expect(lastQuery()!.since!).toBeGreaterThanOrEqual(before - 3_600_000);
    expect(lastQuery()!.since!).toBeLessThanOrEqual(Date.now() - 3_600_000);
  });

  it("searches as the user types, once typing pauses", async () => {
    const user = userEvent.setup();
    render(<AuditView sessionId="s1" eventCount={0} />);
    await waitFor(() => expect(queries()).toHaveLength(1));
    await user.type(screen.getByTestId("audit-search"), "welcome");
    await waitFor(() => expect(lastQuery()?.text).toBe("welcome"));
    // One query for the settled text, none for the half-typed ones.
    expect(queries().map((q) => q.text)).toEqual([null, "welcome"]);
  });

  it("exports the log and shows where it was written", async () => {
    fakeEngine.auditExport.mockResolvedValueOnce("/data/audit-export-1700000000000.jsonl");
    const user = userEvent.setup();
    render(<AuditView sessionId="s1" eventCount={0} />);
    await user.click(screen.getByTestId("audit-export"));
    expect((await screen.findByTestId("audit-export-path")).textContent).toBe("/data/audit-export-1700000000000.jsonl");
    expect(fakeEngine.auditExport).toHaveBeenCalledOnce();
  });

  it("reloads a moment after engine events, once for a burst", async () => {
    const view = render(<AuditView sessionId="s1" eventCount={0} />);
    await waitFor(() => expect(queries()).toHaveLength(1));
    view.rerender(<AuditView sessionId="s1" eventCount={1} />);
    view.rerender(<AuditView sessionId="s1" eventCount={2} />);
    view.rerender(<AuditView sessionId="s1" eventCount={3} />);
    expect(queries()).toHaveLength(1);
    await waitFor(() => expect(queries()).toHaveLength(2), { timeout: 2000 });
    await new Promise((r) => setTimeout(r, 1000));
    expect(queries()).toHaveLength(2);
  });

  it("says so when the log cannot be read", async () => {
    fakeEngine.auditQuery.mockRejectedValueOnce(new Error("audit.db is locked"));
    render(<AuditView sessionId="s1" eventCount={0} />);
    expect((await screen.findByRole("status")).textContent).toContain("audit.db is locked");
  });
});
