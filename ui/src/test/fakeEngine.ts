// A stand-in for src/api/engine.ts in component tests: records what the UI submits and lets a
// test emit engine events. Use it with
//   vi.mock("../../api/engine", () => import("../../test/fakeEngine").then((m) => m.engineModule));
import { act } from "@testing-library/react";
import { vi } from "vitest";
import type { ApprovalRequest, AuditEvent, AuditQuery, Event, Op, SessionSnapshot, SessionSummary } from "../api/types";

export const SUMMARY: SessionSummary = {
  sessionId: "s1",
  workspace: "/home/dev/project",
  mode: "ask",
  model: "mock-model",
  contextWindow: 128000,
  sandbox: "bwrap",
  unsandboxedBecause: null,
};

/** A stored session with nothing in it yet. */
export const EMPTY_SNAPSHOT: SessionSnapshot = {
  session: { id: "s1", workspace: "/home/dev/project", title: "", createdAt: 0, updatedAt: 0 },
  items: [],
  summary: null,
  pendingApprovals: [],
  usage: { inputTokens: 0, cachedInputTokens: 0, outputTokens: 0 },
  contextUsed: 0,
  turnUsage: [],
  changes: [],
};

export const fakeEngine = {
  listener: null as ((e: Event) => void) | null,
  submit: vi.fn(async (_op: Op) => {}),
  sessionInfo: vi.fn(async (): Promise<SessionSummary> => SUMMARY),
  pendingApprovals: vi.fn(async (): Promise<ApprovalRequest[]> => []),
  sessionSnapshot: vi.fn(async (): Promise<SessionSnapshot> => EMPTY_SNAPSHOT),
  auditQuery: vi.fn(async (_query: AuditQuery): Promise<AuditEvent[]> => []),
  auditExport: vi.fn(async (): Promise<string> => "/data/audit-export.jsonl"),
};

export const engineModule = {
  submit: (op: Op) => fakeEngine.submit(op),
  sessionInfo: () => fakeEngine.sessionInfo(),
  pendingApprovals: () => fakeEngine.pendingApprovals(),
  sessionSnapshot: () => fakeEngine.sessionSnapshot(),
  auditQuery: (query: AuditQuery) => fakeEngine.auditQuery(query),
  auditExport: () => fakeEngine.auditExport(),
  onEngineEvent: async (cb: (e: Event) => void) => {
    fakeEngine.listener = cb;
    return () => {
      if (fakeEngine.listener === cb) fakeEngine.listener = null;
    };
  },
};

/** Delivers engine events to the window, as the shell would. */
export function emit(...events: Event[]): void {
  act(() => events.forEach((e) => fakeEngine.listener?.(e)));
}

/** A request for `tool` with overridable fields. */
export function approvalRequest(over: Partial<ApprovalRequest> = {}): ApprovalRequest {
  return {
    id: "a1",
    sessionId: "s1",
    callId: "c1",
    tool: "write_file",
    arguments: '{"path":"notes/a.txt","content":"hi"}',
    findings: [],
    preview: null,
    callHash: "hash-a1",
    createdAt: Date.now(),
    expiresAt: Date.now() + 10 * 60_000,
    ...over,
  };
}
