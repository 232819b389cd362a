// Reducer tests: engine event sequences folded into SessionState.
import { describe, expect, it } from "vitest";
import type { Event, ToolCall } from "../api/types";
import { reduce } from "./reduce";
import { type ChatItem, type SessionState, initialState } from "./state";

const S = "s1";
const T = "t1";
const fold = (events: Event[], from: SessionState = initialState) => events.reduce(reduce, from);
const call = (id: string, name = "read_file"): ToolCall => ({ id, providerId: `p-${id}`, name, arguments: '{"path":"a.txt"}' });
const begin = (id: string, name?: string): Event => ({ type: "toolCallBegin", sessionId: S, turnId: T, call: call(id, name) });
const started: Event = { type: "turnStarted", sessionId: S, turnId: T };
const delta = (text: string): Event => ({ type: "assistantDelta", sessionId: S, turnId: T, text });
const message = (text: string): Event => ({ type: "assistantMessage", sessionId: S, turnId: T, text });
const tools = (s: SessionState) => s.items.filter((i): i is Extract<ChatItem, { kind: "tool" }> => i.kind === "tool");
const last = <T,>(xs: T[]): T | undefined => xs[xs.length - 1];
const texts = (s: SessionState) => s.items.flatMap((i) => (i.kind === "assistant" ? [[i.text, i.streaming]] : []));

describe("reduce", () => {
  it("streams deltas into one message, then the full message replaces them", () => {
    const streaming = fold([started, delta("Hel"), delta("lo")]);
    expect(texts(streaming)).toEqual([["Hello", true]]);
    expect(streaming.turn).toEqual({ phase: "running", turnId: T });
    expect(streaming.sessionId).toBe(S);

    const done = fold([message("Hello, world."), { type: "turnCompleted", sessionId: S, turnId: T }], streaming);
    expect(texts(done)).toEqual([["Hello, world.", false]]);
    expect(done.turn).toEqual({ phase: "idle" });
  });

  it("starts a new bubble for each step and leaves none for a step with no text", () => {
    const s = fold([started, delta("Looking"), message("Looking."), message(""), delta("Found"), message("Found it.")]);
    expect(texts(s)).toEqual([
      ["Looking.", false],
      ["Found it.", false],
    ]);
  });

  it("tracks a tool call from running to its end status, output and duration", () => {
    const running = fold([started, begin("c1"), begin("c2", "shell")]);
    expect(tools(running).map((t) => [t.call.name, t.status])).toEqual([
      ["read_file", "running"],
      ["shell", "running"],
    ]);
    const ended = fold(
      [
        {
          type: "toolCallEnd",
          sessionId: S,
          turnId: T,
          status: "error",
          durationMs: 42,
          result: { toolCallId: "c2", output: "exit 1", isError: true, details: null, data: null, diff: null },
        },
      ],
      running,
    );
    const [first, second] = tools(ended);
    expect(first?.status).toBe("running");
    expect(second).toMatchObject({ status: "error", durationMs: 42, result: { output: "exit 1", isError: true } });
  });

  it("marks a call pending while it waits for approval, and running again once answered", () => {
    const request = {
      id: "a1",
      sessionId: S,
      callId: "c1",
      subject: { type: "call" as const, tool: "write_file", arguments: "{}" },
      findings: [],
      preview: null,
      callHash: "h",
      createdAt: 1,
      expiresAt: 2,
    };
    const pending = fold([started, begin("c1", "write_file"), { type: "approvalRequested", sessionId: S, request }]);
    expect(tools(pending)[0]?.status).toBe("pending");
    expect(pending.approvals.map((a) => a.id)).toEqual(["a1"]);
    const resolved = reduce(pending, {
      type: "approvalResolved",
      sessionId: S,
      approvalId: "a1",
      decision: "approveOnce",
      source: "user",
    });
    expect(tools(resolved)[0]?.status).toBe("running");
    expect(resolved.approvals).toEqual([]);
  });

  it("keeps the session total and the context use from token usage", () => {
    const usage = { inputTokens: 1200, cachedInputTokens: 200, outputTokens: 80 };
    const total = { inputTokens: 5000, cachedInputTokens: 900, outputTokens: 300 };
    const s = fold([
      started,
      { type: "tokenUsage", sessionId: S, turnId: T, usage, total, contextUsed: 1280, contextWindow: 128000 },
    ]);
    expect(s.usage).toEqual({
      last: usage,
      total,
      turns: [{ turnId: T, usage }],
      contextUsed: 1280,
      contextWindow: 128000,
    });
    const unknownWindow = reduce(s, {
      type: "tokenUsage",
      sessionId: S,
      turnId: T,
      usage,
      total,
      contextUsed: 2000,
      contextWindow: null,
    });
    expect(unknownWindow.usage.contextWindow).toBe(128000);
    expect(unknownWindow.usage.contextUsed).toBe(2000);
  });

  it("ends an aborted turn: streaming stops, unfinished calls are interrupted, a notice says why", () => {
    const s = fold([started, delta("Working"), begin("c1"), { type: "turnAborted", sessionId: S, turnId: T, reason: "maxSteps" }]);
    expect(s.turn).toEqual({ phase: "idle" });
    expect(s.lastAbort).toBe("maxSteps");
    expect(texts(s)).toEqual([["Working", false]]);
    expect(tools(s)[0]?.status).toBe("interrupted");
    expect(last(s.items)).toMatchObject({ kind: "notice", tone: "warn", text: expect.stringContaining("step limit") });
  });

  it("shows error events, keeping only the latest few", () => {
    const err = (n: number): Event => ({
      type: "error",
      sessionId: S,
      info: { code: "provider_rate_limited", message: `slow down ${n}`, retryable: true },
    });
    const one = fold([err(1)]);
    expect(one.errors.map((e) => e.info.message)).toEqual(["slow down 1"]);
    const many = fold([1, 2, 3, 4, 5, 6, 7].map(err));
    expect(many.errors.map((e) => e.info.message)).toEqual(["slow down 3", "slow down 4", "slow down 5", "slow down 6", "slow down 7"]);
    expect(new Set(many.errors.map((e) => e.key)).size).toBe(5);
  });

  it("records file changes and compaction", () => {
    const s = fold([
      started,
      { type: "fileChanged", sessionId: S, turnId: T, callId: "c1", path: "src/a.rs", diff: "@@ -1 +1 @@" },
      { type: "compacted", sessionId: S, tokensBefore: 90000, tokensAfter: 12000 },
    ]);
    expect(s.changes).toEqual([{ turnId: T, callId: "c1", path: "src/a.rs", diff: "@@ -1 +1 @@" }]);
    expect(s.usage.contextUsed).toBe(12000);
    expect(last(s.items)).toMatchObject({ kind: "notice", text: expect.stringContaining("12000") });
  });

  it("drops a broken stream's partial text, says it is reconnecting, and never doubles the text", () => {
    const restarted: Event = {
      type: "streamRestarted",
      sessionId: S,
      turnId: T,
      attempt: 2,
      maxAttempts: 5,
      reason: "the stream ended early",
    };
    const mid = fold([started, delta("The answ"), restarted]);
    expect(mid.items.filter((i) => i.kind === "assistant")).toEqual([]);
    expect(mid.reconnecting).toMatchObject({ attempt: 2, maxAttempts: 5 });
    const done = fold([started, delta("The answ"), restarted, delta("The answer"), delta(" is 42.")]);
    expect(done.reconnecting).toBeNull();
    const texts = done.items.filter((i) => i.kind === "assistant").map((i) => (i.kind === "assistant" ? i.text : ""));
    expect(texts).toEqual(["The answer is 42."]);
  });

  it("marks the text of a stream that broke for good as cut off", () => {
    const s = fold([
      started,
      delta("Half an ans"),
      { type: "error", sessionId: S, info: { code: "provider_unavailable", message: "gave up", retryable: true } },
      { type: "turnAborted", sessionId: S, turnId: T, reason: "error" },
    ]);
    const assistant = s.items.find((i) => i.kind === "assistant");
    expect(assistant).toMatchObject({ text: "Half an ans", streaming: false, cutOff: true });
  });

  it("shows a warning as a notice", () => {
    const s = fold([{ type: "warning", sessionId: S, code: "prompt_truncated", message: "the server cut the prompt" }]);
    expect(last(s.items)).toMatchObject({ kind: "notice", tone: "warn", text: "the server cut the prompt" });
  });

  it("says which files changed on disk behind the agent's back", () => {
    const s = fold([started, { type: "filesChangedOnDisk", sessionId: S, paths: ["notes.txt"] }]);
    expect(last(s.items)).toMatchObject({ kind: "notice", text: expect.stringContaining("notes.txt") });
  });

  it("drops undone files from the changes and says what the undo did", () => {
    const s = fold([
      started,
      { type: "fileChanged", sessionId: S, turnId: T, callId: "c1", path: "a.txt", diff: "-a" },
      { type: "fileChanged", sessionId: S, turnId: T, callId: "c2", path: "b.txt", diff: "-b" },
      {
        type: "undone",
        sessionId: S,
        turnId: T,
        restored: ["a.txt"],
        removed: [],
        refused: [{ path: "b.txt", reason: "changed since this turn" }],
      },
    ]);
    expect(s.changes.map((c) => c.path)).toEqual(["b.txt"]);
    expect(last(s.items)).toMatchObject({
      kind: "notice",
      tone: "warn",
      text: "Undo: restored a.txt; left b.txt (changed since this turn).",
    });
  });

  it("parks a suspended turn: no longer running, its calls still pending", () => {
    const request = { id: "a1", sessionId: S, callId: "c1", subject: { type: "call" as const, tool: "write_file", arguments: "{}" }, findings: [], preview: null, callHash: "h", createdAt: 1, expiresAt: 2 };
    const s = fold([
      started,
      delta("Writing"),
      begin("c1", "write_file"),
      { type: "approvalRequested", sessionId: S, request },
      { type: "turnSuspended", sessionId: S, turnId: T, approvalIds: ["a1"] },
    ]);
    expect(s.turn).toEqual({ phase: "idle" });
    expect(s.lastAbort).toBeNull();
    expect(texts(s)).toEqual([["Writing", false]]);
    expect(tools(s)[0]?.status).toBe("pending");
    expect(s.approvals.map((a) => a.id)).toEqual(["a1"]);
    expect(last(s.items)).toMatchObject({ kind: "notice", tone: "info", text: expect.stringContaining("1 approval request") });
  });

  it("lets a refused answer be sent again", () => {
    const answering = { ...initialState, answering: ["a1"] };
    const s = reduce(answering, { type: "error", sessionId: S, info: { code: "approval_refused", message: "hash differs", retryable: false } });
    expect(s.answering).toEqual([]);
    expect(s.errors.map((e) => e.info.code)).toEqual(["approval_refused"]);
    const other = reduce(answering, { type: "error", sessionId: S, info: { code: "provider_unreachable", message: "slow", retryable: true } });
    expect(other.answering).toEqual(["a1"]);
  });

  it("takes the mode and how bash runs from modeChanged, leaving the turn and transcript alone", () => {
    const running = fold([started, delta("Looking")]);
    const s = reduce(running, {
      type: "modeChanged",
      sessionId: S,
      mode: "plan",
      sandbox: "none",
      unsandboxedBecause: "bwrap missing",
      sandboxHome: null,
    });
    expect(s.runMode).toEqual({ mode: "plan", sandbox: "none", unsandboxedBecause: "bwrap missing", sandboxHome: null });
    expect(s.turn).toEqual(running.turn);
    expect(s.items).toEqual(running.items);
    // A later switch replaces the earlier one, reason included.
    const back = reduce(s, { type: "modeChanged", sessionId: S, mode: "auto", sandbox: "bwrap", unsandboxedBecause: null, sandboxHome: null });
    expect(back.runMode).toEqual({ mode: "auto", sandbox: "bwrap", unsandboxedBecause: null, sandboxHome: null });
  });

  it("carries what of home the sandbox shows from modeChanged, and drops it when a later one has none", () => {
    const home = "home is hidden but for (read-only) ~/.cargo/bin, ~/.rustup, ~/.gitconfig";
    const hidden = reduce(fold([started]), { type: "modeChanged", sessionId: S, mode: "auto", sandbox: "bwrap", unsandboxedBecause: null, sandboxHome: home });
    expect(hidden.runMode).toEqual({ mode: "auto", sandbox: "bwrap", unsandboxedBecause: null, sandboxHome: home });
    const open = reduce(hidden, { type: "modeChanged", sessionId: S, mode: "auto", sandbox: "none", unsandboxedBecause: "enabled = false", sandboxHome: null });
    expect(open.runMode?.sandboxHome).toBeNull();
  });
});
