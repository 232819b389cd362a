// Merging what the engine says about background processes: by id, oldest first, never back from
// finished to running, and never another session's.
import { describe, expect, it } from "vitest";
import { processInfo } from "../test/fakeEngine";
import { mergeProcesses, runningCount } from "./processes";
import { type SessionState, initialState } from "./state";

const inSession: SessionState = { ...initialState, sessionId: "s1" };
const states = (s: SessionState) => s.processes.map((p) => [p.id, p.state]);

describe("mergeProcesses", () => {
  it("adds new processes oldest first and replaces known ones by id", () => {
    const s = mergeProcesses(inSession, [processInfo({ id: "p2", startedAt: 20 }), processInfo({ id: "p1", startedAt: 10 })]);
    expect(states(s)).toEqual([
      ["p1", "running"],
      ["p2", "running"],
    ]);
    const ended = mergeProcesses(s, [processInfo({ id: "p2", startedAt: 20, state: "exited", exitCode: 0, endedAt: 30 })]);
    expect(states(ended)).toEqual([
      ["p1", "running"],
      ["p2", "exited"],
    ]);
    expect(runningCount(ended.processes)).toBe(1);
  });

  it("keeps a finished process finished when a list asked for earlier says it runs", () => {
    const stopped = mergeProcesses(inSession, [processInfo({ id: "p1", state: "stopped", endedAt: 5 })]);
    const late = mergeProcesses(stopped, [processInfo({ id: "p1", tail: "older" })]);
    expect(states(late)).toEqual([["p1", "stopped"]]);
  });

  it("drops processes of another session (an answer that arrives after a switch)", () => {
    expect(mergeProcesses(inSession, [processInfo({ sessionId: "s0" })])).toBe(inSession);
    expect(mergeProcesses(initialState, [processInfo()])).toBe(initialState);
  });
});
