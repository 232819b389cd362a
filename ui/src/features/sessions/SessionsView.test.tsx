// The Sessions view through the whole App: the list, search, opening another session (the window
// then shows that session's stored history, and ignores events of the one it left), and delete.
import { render, screen, waitFor } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";
import type { SessionInfo } from "../../api/types";
import { App } from "../../App";
import { EMPTY_SNAPSHOT, SUMMARY, emit, fakeEngine } from "../../test/fakeEngine";

vi.mock("../../api/engine", () => import("../../test/fakeEngine").then((m) => m.engineModule));

const OLD: SessionInfo = { id: "s0", workspace: "/home/dev/other", title: "Fix the parser", createdAt: 1, updatedAt: 1_700_000_000_000, totalTokens: 12_300, state: "needs-you", waitingFor: "host", waiting: 2, branch: "fix-parser", worktree: null, agent: null };
const NOW: SessionInfo = { ...OLD, id: "s1", workspace: "/home/dev/project", title: "", updatedAt: 1_800_000_000_000, totalTokens: 0, state: "working", waitingFor: null, waiting: 0, branch: null };

describe("Sessions", () => {
  it("lists sessions with title, folder and tokens, and searches them", async () => {
    const user = userEvent.setup();
    fakeEngine.sessionsList.mockResolvedValue([NOW, OLD]);
    render(<App />);
    await user.click(await screen.findByTestId("nav-sessions"));
    await waitFor(() => expect(screen.getAllByTestId("session-item")).toHaveLength(2));
    const [first, second] = screen.getAllByTestId("session-item");
    expect(first!.dataset.sessionId).toBe("s1");
    expect(first!.textContent).toContain("shown now");
    expect(second!.textContent).toContain("Fix the parser");
    expect(second!.textContent).toContain("/home/dev/other");
    expect(second!.textContent).toContain("12.3k tokens");
    expect(second!.textContent).toContain("/home/dev/other · fix-parser · ");
    // Each session says what it is doing, and what it waits for.
    expect([first!.dataset.state, second!.dataset.state]).toEqual(["working", "needs-you"]);
    expect(second!.querySelector("[data-testid=session-state]")!.textContent).toBe("needs you: a host and 1 more");
    await user.type(screen.getByTestId("sessions-search"), "parser");
    expect(screen.getAllByTestId("session-item").map((i) => i.dataset.sessionId)).toEqual(["s0"]);
  });

  it("opens another session with its whole history and drops the old session's events", async () => {
    const user = userEvent.setup();
    fakeEngine.sessionsList.mockResolvedValue([NOW, OLD]);
    render(<App />);
    await user.click(await screen.findByTestId("nav-sessions"));
    await waitFor(() => expect(screen.getAllByTestId("session-item")).toHaveLength(2));

    const other = { ...SUMMARY, sessionId: "s0", workspace: "/home/dev/other" };
    fakeEngine.sessionOpen.mockResolvedValueOnce(other);
    fakeEngine.sessionInfo.mockResolvedValue(other);
    fakeEngine.sessionSnapshot.mockResolvedValue({
      ...EMPTY_SNAPSHOT,
      session: OLD,
      items: [
        { turnId: "t0", compacted: null, item: { type: "user", text: "fix the parser please" } },
        { turnId: "t0", compacted: null, item: { type: "assistant", text: "Fixed it.", toolCalls: [], cutOff: false } },
      ],
      seq: 1000,
    });
    await user.click(screen.getAllByTestId("session-item")[1]!.querySelector("button")!);
    expect(fakeEngine.sessionOpen).toHaveBeenCalledWith("s0");
    await waitFor(() => expect(screen.getAllByTestId("message")).toHaveLength(2));
    expect(screen.getAllByTestId("message").map((m) => m.textContent)).toEqual(["Youfix the parser please", expect.stringContaining("Fixed it.")]);

    // An event of the session the window left, and one the snapshot already holds, change nothing.
    emit({ type: "assistantDelta", sessionId: "s1", turnId: "tx", text: "stale" });
    expect(screen.getAllByTestId("message")).toHaveLength(2);
    fakeEngine.seq = 0;
    emit({ type: "turnStarted", sessionId: "s0", turnId: "t9" }, { type: "assistantDelta", sessionId: "s0", turnId: "t9", text: "old" });
    expect(screen.getAllByTestId("message")).toHaveLength(2);
    fakeEngine.seq = 1000;
    emit({ type: "turnStarted", sessionId: "s0", turnId: "t1" }, { type: "assistantDelta", sessionId: "s0", turnId: "t1", text: "New" });
    expect(screen.getAllByTestId("message")).toHaveLength(3);
    fakeEngine.sessionInfo.mockResolvedValue(SUMMARY);
    fakeEngine.sessionSnapshot.mockResolvedValue(EMPTY_SNAPSHOT);
  });

  it("shows another session while a turn runs, without stopping it", async () => {
    const user = userEvent.setup();
    fakeEngine.sessionsList.mockResolvedValue([NOW, OLD]);
    render(<App />);
    await screen.findByText("/home/dev/project");
    emit({ type: "turnStarted", sessionId: "s1", turnId: "t1" });
    await user.click(screen.getByTestId("nav-sessions"));
    await waitFor(() => expect(screen.getAllByTestId("session-item")).toHaveLength(2));
    await user.click(screen.getAllByTestId("session-item")[1]!.querySelector("button")!);
    expect(fakeEngine.sessionOpen).toHaveBeenCalledWith("s0");
    expect(fakeEngine.submit).not.toHaveBeenCalledWith({ type: "interrupt" });
  });

  it("archives, restores and applies a worktree session, showing the diff before applying", async () => {
    const user = userEvent.setup();
    const worktree = { path: "/data/worktrees/s0", origin: "/home/dev/project", branch: "bridle/fix", base: "abc", archived: false, missing: false };
    fakeEngine.sessionsList.mockResolvedValue([NOW, { ...OLD, state: "idle", waitingFor: null, waiting: 0, branch: "bridle/fix", worktree }]);
    fakeEngine.sessionApply.mockResolvedValue("diff --git a/f.txt b/f.txt\n+fixed\n");
    render(<App />);
    await user.click(await screen.findByTestId("nav-sessions"));
    await user.click(await screen.findByTestId("session-apply"));
    expect(fakeEngine.sessionApply).toHaveBeenLastCalledWith("s0", true);
    expect((await screen.findByTestId("session-apply-preview")).textContent).toContain("+fixed");
    await user.click(screen.getByTestId("session-apply"));
    expect(fakeEngine.sessionApply).toHaveBeenLastCalledWith("s0", false);
    await user.click(screen.getByTestId("session-archive"));
    expect(fakeEngine.sessionArchive).toHaveBeenCalledWith("s0");
    fakeEngine.sessionsList.mockResolvedValue([NOW, { ...OLD, state: "archived", worktree: { ...worktree, archived: true } }]);
    await user.click(screen.getByTestId("nav-chat"));
    await user.click(screen.getByTestId("nav-sessions"));
    await user.click(await screen.findByTestId("session-restore"));
    expect(fakeEngine.sessionRestore).toHaveBeenCalledWith("s0");
    expect(screen.queryByTestId("session-archive")).toBeNull();
  });

  it("deletes a session only on the second click", async () => {
    const user = userEvent.setup();
    fakeEngine.sessionsList.mockResolvedValue([NOW, OLD]);
    render(<App />);
    await user.click(await screen.findByTestId("nav-sessions"));
    await waitFor(() => expect(screen.getAllByTestId("session-delete")).toHaveLength(2));
    const del = () => screen.getAllByTestId("session-delete")[1]!;
    await user.click(del());
    expect(fakeEngine.sessionDelete).not.toHaveBeenCalled();
    expect(del().textContent).toContain("Delete for good?");
    fakeEngine.sessionsList.mockResolvedValue([NOW]);
    await user.click(del());
    expect(fakeEngine.sessionDelete).toHaveBeenCalledWith("s0");
  });
});
