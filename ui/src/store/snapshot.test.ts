import { describe, expect, it } from "vitest";
import type { SessionSnapshot } from "../api/types";
import { loadSnapshot, splitDiff } from "./snapshot";
import { initialState } from "./state";

const two = "--- a/src/a.rs\n+++ b/src/a.rs\n@@ -1 +1 @@\n-old\n+new\n--- /dev/null\n+++ b/notes/n.txt\n@@ -0,0 +1 @@\n+hi\n";

describe("session snapshots", () => {
  it("cuts a diff of several files into one per file", () => {
    expect(splitDiff(two)).toEqual([
      { path: "src/a.rs", diff: "--- a/src/a.rs\n+++ b/src/a.rs\n@@ -1 +1 @@\n-old\n+new\n" },
      { path: "notes/n.txt", diff: "--- /dev/null\n+++ b/notes/n.txt\n@@ -0,0 +1 @@\n+hi\n" },
    ]);
    expect(splitDiff("--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n")[0]?.path).toBe("gone.txt");
  });

  it("rebuilds the transcript, the changes (less the undone ones) and the totals", () => {
    const call = { id: "c1", providerId: "c1", name: "apply_patch", arguments: "{}" };
    const snapshot: SessionSnapshot = {
      session: { id: "s1", workspace: "/w", title: "t", createdAt: 0, updatedAt: 0, totalTokens: 940, state: "idle", waitingFor: null, waiting: 0, branch: null, worktree: null, agent: null },
      items: [
        { turnId: "t1", compacted: null, item: { type: "user", text: "patch it" } },
        { turnId: "t1", compacted: null, item: { type: "assistant", text: "", toolCalls: [call] } },
        {
          turnId: "t1",
          compacted: null,
          item: { type: "toolResult", result: { toolCallId: "c1", output: "Changed 2 files", isError: false, details: null, data: null, diff: two } },
        },
        { turnId: "t1", compacted: null, item: { type: "assistant", text: "Half of it", toolCalls: [], cutOff: true } },
      ],
      summary: null,
      pendingApprovals: [],
      usage: { inputTokens: 900, cachedInputTokens: 0, outputTokens: 40 },
      contextUsed: 940,
      turnUsage: [{ turnId: "t1", usage: { inputTokens: 900, cachedInputTokens: 0, outputTokens: 40 } }],
      changes: [
        { turnId: "t1", callId: "c1", path: "src/a.rs", kind: "modified", undone: false },
        { turnId: "t1", callId: "c1", path: "notes/n.txt", kind: "created", undone: true },
      ],
      plan: [{ step: "patch it", status: "done" }],
      agents: [],
      seq: 12,
    };
    const s = loadSnapshot(initialState, snapshot);
    expect(s.items.map((i) => i.kind)).toEqual(["user", "tool", "assistant"]);
    expect(s.items[1]).toMatchObject({ kind: "tool", status: "ok", result: { output: "Changed 2 files" } });
    expect(s.items[2]).toMatchObject({ kind: "assistant", text: "Half of it", cutOff: true });
    expect(s.changes.map((c) => c.path)).toEqual(["src/a.rs"]);
    expect(s.plan).toEqual([{ step: "patch it", status: "done" }]);
    expect(s.usage.total?.inputTokens).toBe(900);
    expect(s.usage.turns).toEqual(snapshot.turnUsage);
    // A call still waiting for its approval shows as pending, not cut short.
    const waiting = loadSnapshot(initialState, {
      ...snapshot,
      items: snapshot.items.slice(0, 2),
      pendingApprovals: [
        { id: "a1", sessionId: "s1", callId: "c1", subject: { type: "call", tool: "apply_patch", arguments: "{}" }, findings: [], preview: null, callHash: "h", createdAt: 0, expiresAt: 1 },
      ],
    });
    expect(waiting.items[1]).toMatchObject({ kind: "tool", status: "pending" });
    // A window that already shows something keeps it.
    expect(loadSnapshot({ ...initialState, items: s.items.slice(0, 1) }, snapshot).items).toHaveLength(1);
  });
});
