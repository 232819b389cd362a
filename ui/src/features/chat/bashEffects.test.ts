// Reading `data.effects` of a bash result and pairing each landed file with its part of the diff.
import { describe, expect, it } from "vitest";
import type { ToolResult } from "../../api/types";
import { changedFiles, effectsOf } from "./bashEffects";

const result = (data: unknown): ToolResult => ({ toolCallId: "b1", output: "", isError: false, data, diff: null });

describe("bash effects", () => {
  it("reads effects and fills in what an older or partial payload leaves out", () => {
    expect(effectsOf(result(null))).toBeNull();
    expect(effectsOf(result({ exitCode: 0 }))).toBeNull();
    expect(effectsOf(result({ effects: { changes: [] } }))).toBeNull();
    const changes = [{ path: "a.txt", kind: "created", added: 2 }, { kind: "modified" }];
    expect(effectsOf(result({ effects: { captured: true, changes, ignored: { files: 0, bytes: 0 } } }))).toEqual({
      captured: true,
      reason: null,
      undoable: false,
      changes: [{ path: "a.txt", kind: "created", added: 2, removed: 0, bytes: 0 }],
      listed: [],
      ignored: null,
      git: [],
      discarded: [],
      discardedBecause: null,
      refused: [],
    });
  });

  it("pairs each file with its own diff and keeps a diffed file the list does not name", () => {
    const diff = "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-x\n+y\n--- /dev/null\n+++ b/extra.txt\n@@ -0,0 +1 @@\n+z\n";
    const changes = [
      { path: "a.txt", kind: "modified", added: 1, removed: 1, bytes: 2 },
      { path: "image.png", kind: "created", added: 0, removed: 0, bytes: 900 },
    ];
    expect(changedFiles(changes, diff)).toEqual([
      { ...changes[0], diff: "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-x\n+y\n" },
      { ...changes[1], diff: null },
      { path: "extra.txt", diff: "--- /dev/null\n+++ b/extra.txt\n@@ -0,0 +1 @@\n+z\n" },
    ]);
  });
});
