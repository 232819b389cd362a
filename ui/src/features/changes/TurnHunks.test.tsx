// The turn's hunks in Changes: each with its call and state, keep / reject / undo reject by
// button and by key (k, r, j), the progress, and a conflict shown as the engine words it.
import { render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { beforeEach, describe, expect, it, vi } from "vitest";
import type { Hunk, TurnReview } from "../../api/types";
import { fakeEngine } from "../../test/fakeEngine";
import { TurnHunks } from "./TurnHunks";

vi.mock("../../api/engine", () => import("../../test/fakeEngine").then((m) => m.engineModule));

function hunk(id: string, path: string, start: number, state: Hunk["state"], command: string | null = null): Hunk {
  return {
    id,
    turnId: "t1",
    path,
    kind: "text",
    range: { start, lines: 1 },
    baseRange: { start, lines: 1 },
    state,
    oldText: `old ${id}\n`,
    newText: `new ${id}\n`,
    call: { callId: `c${id}`, tool: command ? "bash" : "edit_file", command },
  };
}

function review(hunks: Hunk[]): TurnReview {
  const decided = hunks.filter((h) => h.state === "kept" || h.state === "rejected").length;
  return { sessionId: "s1", turnId: "t1", hunks, decided };
}

describe("TurnHunks", () => {
  beforeEach(() => {
    fakeEngine.reviewTurn.mockReset();
    fakeEngine.reviewDecide.mockReset();
  });

  it("shows the hunks with their calls and decides them by button and by key", async () => {
    const user = userEvent.setup();
    const listed = [hunk("1", "f.py", 3, "pending"), hunk("2", "f.py", 9, "conflict"), hunk("3", "g.txt", 2, "pending", "sed -i s/a/b/ g.txt")];
    fakeEngine.reviewTurn.mockResolvedValue(review(listed));
    fakeEngine.reviewDecide.mockResolvedValue(review([{ ...listed[0]!, state: "rejected" }, listed[1]!, listed[2]!]));
    render(<TurnHunks turnId="t1" busy={false} version="0" />);
    const hunks = await screen.findAllByTestId("hunk");
    expect(hunks.map((h) => [h.dataset.hunkId, h.dataset.state])).toEqual([["1", "pending"], ["2", "conflict"], ["3", "pending"]]);
    expect(hunks[2]!.textContent).toContain("bash sed -i s/a/b/ g.txt");
    expect(screen.getByTestId("review-progress").textContent).toBe("0 of 3 hunks reviewed");

    await user.click(within(hunks[0]!).getByTestId("hunk-reject"));
    expect(fakeEngine.reviewDecide).toHaveBeenLastCalledWith("reject", ["1"]);
    const after = await screen.findAllByTestId("hunk");
    expect(after[0]!.dataset.state).toBe("rejected");
    expect(within(after[0]!).getByTestId("hunk-unreject")).toBeTruthy();
    expect(screen.getByTestId("review-progress").textContent).toBe("1 of 3 hunks reviewed");

    // Keys: focus the second, j moves to the third, k keeps it.
    after[1]!.focus();
    await user.keyboard("j");
    expect(document.activeElement).toBe(after[2]);
    await user.keyboard("k");
    expect(fakeEngine.reviewDecide).toHaveBeenLastCalledWith("keep", ["3"]);
  });

  it("shows a conflict as the engine words it and leaves the hunks as they were", async () => {
    const user = userEvent.setup();
    fakeEngine.reviewTurn.mockResolvedValue(review([hunk("2", "f.py", 9, "conflict")]));
    fakeEngine.reviewDecide.mockRejectedValue({
      code: "review_conflict",
      message: "`f.py` line 9 changed since the turn; nothing was changed",
      retryable: false,
    });
    render(<TurnHunks turnId="t1" busy={false} version="0" />);
    await user.click(await screen.findByTestId("hunk-reject"));
    expect((await screen.findByTestId("review-error")).textContent).toBe("`f.py` line 9 changed since the turn; nothing was changed");
    expect(screen.getByTestId("hunk").dataset.state).toBe("conflict");
  });
});
