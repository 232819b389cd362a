// A child agent on its parent's turn (DESIGN §16.1): the whole App against a mocked engine
// bridge; the `spawn_agent` call carries the child's card, which moves with `agentUpdated`, shows
// the child's answer, and opens the child's session.
import { render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, describe, expect, it } from "vitest";
import { vi } from "vitest";
import type { AgentInfo } from "../../api/types";
import { App } from "../../App";
import { emit, fakeEngine } from "../../test/fakeEngine";

vi.mock("../../api/engine", () => import("../../test/fakeEngine").then((m) => m.engineModule));

const S = "s1";
const T = "t1";
const CHILD = "c0ffee00-1111-2222-3333-444455556666";

const agent = (over: Partial<AgentInfo>): AgentInfo => ({
  id: CHILD,
  parentId: S,
  turnId: T,
  callId: "k1",
  task: "Summarise notes.txt",
  role: "reader",
  model: "m",
  state: "working",
  lastMessage: null,
  error: null,
  expired: [],
  usage: { inputTokens: 0, cachedInputTokens: 0, outputTokens: 0 },
  ...over,
});

describe("Agent card", () => {
  afterEach(() => {
    fakeEngine.listener = null;
  });

  it("follows the child on the call that started it, and opens its session", async () => {
    const user = userEvent.setup();
    render(<App />);
    await screen.findByText("/home/dev/project");
    emit(
      { type: "turnStarted", sessionId: S, turnId: T },
      { type: "toolCallBegin", sessionId: S, turnId: T, call: { id: "k1", providerId: "k1", name: "spawn_agent", arguments: '{"task":"Summarise notes.txt"}' } },
      { type: "agentUpdated", sessionId: S, agent: agent({}) },
    );
    const card = await screen.findByTestId("agent-card");
    expect(card.dataset.state).toBe("working");
    expect(within(card).getByText("Summarise notes.txt")).toBeTruthy();
    // The child's own events name the child: they do not land in the parent's transcript.
    emit(
      { type: "assistantMessage", sessionId: CHILD, turnId: "ct", text: "child text" },
      { type: "agentUpdated", sessionId: S, agent: agent({ state: "idle", lastMessage: "The notes say alpha.", usage: { inputTokens: 90, cachedInputTokens: 0, outputTokens: 10 } }) },
    );
    const done = await screen.findByTestId("agent-card");
    expect(done.dataset.state).toBe("idle");
    expect(within(done).getByTestId("agent-last-message").textContent).toBe("The notes say alpha.");
    expect(within(done).getByText("100 tokens")).toBeTruthy();
    expect(screen.queryByText("child text")).toBeNull();
    await user.click(within(done).getByTestId("agent-open"));
    expect(fakeEngine.sessionOpen).toHaveBeenCalledWith(CHILD);
  });
});
