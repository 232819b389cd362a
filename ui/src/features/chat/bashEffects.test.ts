// Reading a bash result's typed details and pairing each landed file with its part of the diff.
import { describe, expect, it } from "vitest";
import type { ToolResult } from "../../api/types";
import { bashResult, shellEffects } from "../../test/results";
import { bashRunOf, changedFiles } from "./bashEffects";

describe("bash effects", () => {
  it("reads how a command ran from its details, and nothing from another tool's or none", () => {
    const none: ToolResult = { toolCallId: "r1", output: "", isError: false, details: null, data: null, diff: null };
    expect(bashRunOf(none)).toBeNull();
    expect(bashRunOf({ ...none, details: { type: "plan", items: [] } })).toBeNull();

    const effects = shellEffects({ ignored: { files: 1, bytes: 9 } });
    expect(bashRunOf(bashResult({ sandbox: "landlock", effects }))).toEqual({
      sandbox: "landlock",
      escalated: false,
      sandboxHome: null,
      checkpointed: true,
      hosts: [],
      effects,
    });
    // Outside a session nothing is followed, and nothing is checkpointed.
    expect(bashRunOf(bashResult({ effects: null, checkpointed: false }))?.checkpointed).toBe(false);

    const started: ToolResult = {
      ...none,
      details: {
        type: "background",
        processId: "p1",
        durationMs: 2000,
        state: "running",
        exitCode: null,
        sandbox: "bwrap",
        sandboxGaps: null,
        sandboxHome: null,
        escalated: false,
      },
    };
    // A background process writes straight to the workspace: never undoable.
    expect(bashRunOf(started)).toMatchObject({ sandbox: "bwrap", checkpointed: false, effects: null });
  });

  it("pairs each file with its own diff and keeps a diffed file the list does not name", () => {
    const diff = "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-x\n+y\n--- /dev/null\n+++ b/extra.txt\n@@ -0,0 +1 @@\n+z\n";
    const changes = [
      { path: "a.txt", kind: "modified" as const, added: 1, removed: 1, bytes: 2 },
      { path: "image.png", kind: "created" as const, added: 0, removed: 0, bytes: 900 },
    ];
    expect(changedFiles(changes, diff)).toEqual([
      { ...changes[0], diff: "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-x\n+y\n" },
      { ...changes[1], diff: null },
      { path: "extra.txt", diff: "--- /dev/null\n+++ b/extra.txt\n@@ -0,0 +1 @@\n+z\n" },
    ]);
  });
});
