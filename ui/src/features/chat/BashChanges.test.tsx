// What a bash command changed, on its card: the whole App against a mocked engine bridge, a bash
// call ended with the effects of its typed details (captured or not) and the diff of what landed.
import { render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { ShellDetails } from "../../api/types";
import { App } from "../../App";
import { emit, fakeEngine } from "../../test/fakeEngine";
import { bashResult, shellEffects } from "../../test/results";

vi.mock("../../api/engine", () => import("../../test/fakeEngine").then((m) => m.engineModule));

const S = "s1";
const T = "t1";

const DIFF = [
  "--- a/src/lib.rs",
  "+++ b/src/lib.rs",
  "@@ -1,2 +1,2 @@",
  " fn main() {}",
  "-old line",
  "+new line",
  "--- /dev/null",
  "+++ b/notes/new.txt",
  "@@ -0,0 +1 @@",
  "+hello",
  "--- a/gone.txt",
  "+++ /dev/null",
  "@@ -1 +0,0 @@",
  "-bye",
  "",
].join("\n");

/** A bash call `command` that ends as `details` say, with `diff`. */
async function runBash(command: string, details: Partial<ShellDetails>, diff: string | null) {
  render(<App />);
  await screen.findByText("/home/dev/project");
  const result = bashResult(details, diff);
  emit(
    { type: "turnStarted", sessionId: S, turnId: T },
    { type: "toolCallBegin", sessionId: S, turnId: T, call: { id: "b1", providerId: "b1", name: "bash", arguments: JSON.stringify({ command }) } },
    { type: "toolCallEnd", sessionId: S, turnId: T, status: "ok", durationMs: 20, result },
  );
  return screen.getByTestId("tool-call");
}

describe("Bash changes", () => {
  afterEach(() => {
    fakeEngine.listener = null;
  });

  it("shows each captured file as its own coloured diff, and the diff only once", async () => {
    const user = userEvent.setup();
    const effects = shellEffects({
      changes: [
        { path: "src/lib.rs", kind: "modified", added: 1, removed: 1, bytes: 30 },
        { path: "notes/new.txt", kind: "created", added: 1, removed: 0, bytes: 6 },
        { path: "gone.txt", kind: "deleted", added: 0, removed: 1, bytes: 0 },
      ],
      ignored: { files: 12, bytes: 3_400_000 },
      git: ["1 commit: abc1234 fix the parser"],
      discarded: ["AGENTS.md"],
      refused: [{ path: "src/main.rs", why: "you changed it meanwhile" }],
    });
    const card = await runBash("make && git commit -am fix", { exitCode: 0, sandbox: "bwrap", effects }, DIFF);
    const changes = within(card).getByTestId("bash-changes");
    expect(changes.dataset.captured).toBe("true");
    const diffs = within(changes).getAllByTestId("diff-view");
    expect(diffs.map((d) => d.dataset.path)).toEqual(["src/lib.rs", "notes/new.txt", "gone.txt"]);
    expect([...diffs[0]!.querySelectorAll(".diff-line.add")].map((l) => l.textContent)).toEqual(["+new line\n"]);
    expect([...diffs[0]!.querySelectorAll(".diff-line.del")].map((l) => l.textContent)).toEqual(["-old line\n"]);
    expect(diffs[1]!.textContent).toContain("+hello");
    expect(diffs[1]!.textContent).not.toContain("old line");
    expect(diffs[2]!.querySelector(".diff-line.del")?.textContent).toBe("-bye\n");

    const files = within(changes).getAllByTestId("bash-change");
    expect(files.map((f) => [f.dataset.kind, f.querySelector("summary")?.textContent])).toEqual([
      ["modified", "src/lib.rsmodified+1−1"],
      ["created", "notes/new.txtcreated+1−0"],
      ["deleted", "gone.txtdeleted+0−1"],
    ]);
    expect(within(changes).getByTestId("bash-changes-ignored").textContent).toBe("build output: 12 files, 3.4 MB, not checkpointed");
    expect(within(changes).getByTestId("bash-changes-git").textContent).toBe("git: 1 commit: abc1234 fix the parser");
    expect(within(changes).getByTestId("bash-changes-discarded").textContent).toContain("AGENTS.md");
    expect(within(changes).getByTestId("bash-changes-refused").textContent).toBe("not landed: src/main.rs — you changed it meanwhile");
    // Undoable: no warning on the card.
    expect(within(card).queryByText("not undoable")).toBeNull();

    // The expanded card shows the output, and not the same diff a second time.
    await user.click(within(card).getByRole("button", { expanded: false }));
    expect(within(card).getByText("exit code 0")).toBeTruthy();
    expect(within(card).queryByTestId("tool-call-diff")).toBeNull();
  });

  it("says why changes were not captured, lists what a scan found, and that undo cannot restore them", async () => {
    const effects = shellEffects({
      captured: false,
      reason: "escalated commands write directly",
      undoable: false,
      listed: ["out.txt (created)", "src/a.rs (modified)"],
    });
    const card = await runBash("make install", { exitCode: 0, sandbox: "none", escalated: true, effects }, null);
    const changes = within(card).getByTestId("bash-changes");
    expect(changes.dataset.captured).toBe("false");
    const line = within(changes).getByTestId("bash-changes-uncaptured");
    expect(line.textContent).toContain("escalated commands write directly");
    expect(line.textContent).toContain("not undoable");
    expect([...within(changes).getByTestId("bash-changes-listed").querySelectorAll("li")].map((li) => li.textContent)).toEqual([
      "out.txt (created)",
      "src/a.rs (modified)",
    ]);
    expect(within(changes).queryAllByTestId("diff-view")).toEqual([]);
    // Said once, next to the files, not again in the card's head.
    expect(within(card).queryByTestId("bash-not-checkpointed")).toBeNull();
  });

  it("shows nothing new for a result without effects (an older session)", async () => {
    const card = await runBash("ls", { exitCode: 0, sandbox: "bwrap" }, null);
    expect(within(card).queryByTestId("bash-changes")).toBeNull();
  });

  it("leaves the changes empty for a captured command that changed nothing", async () => {
    const quiet = await runBash("ls", { exitCode: 0, sandbox: "bwrap", effects: shellEffects({ ignored: { files: 0, bytes: 0 } }) }, null);
    const changes = within(quiet).getByTestId("bash-changes");
    expect(changes.dataset.captured).toBe("true");
    expect(changes.childElementCount).toBe(0);
  });
});
