// Local actions: the user's own messages and failures to reach the engine.
import { describe, expect, it } from "vitest";
import type { SessionSummary } from "../api/types";
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
    const info: SessionSummary = { sessionId: "s1", workspace: "/w", mode: "ask", model: "m", contextWindow: 64000 };
    const s = apply(initialState, { type: "sessionLoaded", info });
    expect(s.usage.contextWindow).toBe(64000);
    expect(s.sessionId).toBe("s1");
  });
});
