// Local actions: the user's own messages, failures to reach the engine, pending requests loaded
// at start and answers on their way.
import { describe, expect, it } from "vitest";
import type { ApprovalRequest, Event, SessionSummary } from "../api/types";
import { apply } from "./local";
import { initialState } from "./state";

describe("apply", () => {
  it("adds the user's message and waits for the turn to start", () => {
    const s = apply(initialState, { type: "userSubmitted", text: "hello bridle" });
    expect(s.items).toEqual([{ kind: "user", key: "user-1", text: "hello bridle" }]);
    expect(s.turn).toEqual({ phase: "starting" });
  });

  it("returns to idle with an error when the engine cannot be reached", () => {
    const sent = apply(initialState, { type: "userSubmitted", text: "hi" });
    const failed = apply(sent, { type: "bridgeFailed", code: "submit_failed", message: "no engine", retryable: true });
    expect(failed.turn).toEqual({ phase: "idle" });
    expect(failed.errors.map((e) => e.info.code)).toEqual(["submit_failed"]);
    const dismissed = apply(failed, { type: "dismissError", key: failed.errors[0]?.key ?? "" });
    expect(dismissed.errors).toEqual([]);
  });

  it("takes the context window from the session summary until the engine reports one", () => {
    const info: SessionSummary = {
      sessionId: "s1",
      workspace: "/w",
      mode: "ask",
      model: "m",
      contextWindow: 64000,
      sandbox: "bwrap",
      unsandboxedBecause: null,
      sandboxHome: null,
      price: null,
      instructions: [],
    };
    const s = apply(initialState, { type: "sessionLoaded", info });
    expect(s.usage.contextWindow).toBe(64000);
    expect(s.sessionId).toBe("s1");
    expect(s.runMode).toEqual({ mode: "ask", sandbox: "bwrap", unsandboxedBecause: null, sandboxHome: null });
  });

  it("takes what of home the sandbox shows from the session summary", () => {
    const home = "home is hidden but for (read-only) ~/.gitconfig";
    const info: SessionSummary = {
      sessionId: "s1",
      workspace: "/w",
      mode: "auto",
      model: null,
      contextWindow: null,
      sandbox: "bwrap",
      unsandboxedBecause: null,
      sandboxHome: home,
      price: null,
      instructions: [],
    };
    expect(apply(initialState, { type: "sessionLoaded", info }).runMode).toEqual({
      mode: "auto",
      sandbox: "bwrap",
      unsandboxedBecause: null,
      sandboxHome: home,
    });
  });

  it("keeps a mode change that arrived before the summary", () => {
    const changed: Event = {
      type: "modeChanged",
      sessionId: "s1",
      mode: "plan",
      sandbox: "landlock",
      unsandboxedBecause: null,
      sandboxHome: null,
    };
    const early = apply(initialState, { type: "engine", event: changed });
    const info: SessionSummary = {
      sessionId: "s1",
      workspace: "/w",
      mode: "ask",
      model: null,
      contextWindow: null,
      sandbox: "bwrap",
      unsandboxedBecause: null,
      sandboxHome: null,
      price: null,
      instructions: [],
    };
    expect(apply(early, { type: "sessionLoaded", info }).runMode).toEqual({
      mode: "plan",
      sandbox: "landlock",
      unsandboxedBecause: null,
      sandboxHome: null,
    });
  });

  it("merges the requests loaded at start with those announced as events, without duplicates", () => {
    const request = (id: string, callId = `c-${id}`): ApprovalRequest => ({
      id,
      sessionId: "s1",
      callId,
      subject: { type: "call", tool: "write_file", arguments: "{}" },
      findings: [],
      preview: null,
      callHash: `h-${id}`,
      createdAt: 1,
      expiresAt: 2,
    });
    const engine = (event: Event) => ({ type: "engine" as const, event });
    let s = apply(initialState, engine({ type: "approvalRequested", sessionId: "s1", request: request("a1") }));
    s = apply(s, engine({ type: "approvalResolved", sessionId: "s1", approvalId: "a0", decision: "deny", source: "timeout" }));
    // The load answered late: a1 is already known, a0 was resolved meanwhile, a2 is new.
    s = apply(s, { type: "pendingLoaded", requests: [request("a0"), request("a1"), request("a2")] });
    expect(s.approvals.map((a) => a.id)).toEqual(["a1", "a2"]);
    s = apply(s, engine({ type: "approvalRequested", sessionId: "s1", request: request("a2") }));
    expect(s.approvals.map((a) => a.id)).toEqual(["a1", "a2"]);
    expect(s.eventCount).toBe(3);
  });

  it("marks an answer as on its way until it resolves or cannot be sent", () => {
    const sent = apply(initialState, { type: "answerSent", approvalId: "a1" });
    expect(sent.answering).toEqual(["a1"]);
    expect(apply(sent, { type: "answerSent", approvalId: "a1" }).answering).toEqual(["a1"]);
    const failed = apply(sent, { type: "bridgeFailed", code: "submit_failed", message: "no engine", retryable: true });
    expect(failed.answering).toEqual([]);
    const resolved = apply(sent, {
      type: "engine",
      event: { type: "approvalResolved", sessionId: "s1", approvalId: "a1", decision: "approveOnce", source: "user" },
    });
    expect(resolved.answering).toEqual([]);
  });
});
