import { describe, expect, it } from "vitest";
import { sideBySide } from "./rows";

describe("sideBySide", () => {
  it("pairs removed and added runs, numbers both sides, keeps context across", () => {
    const diff = "--- a/x.rs\n+++ b/x.rs\n@@ -3,4 +3,5 @@\n keep\n-old one\n-old two\n+new one\n+new two\n+new three\n tail\n";
    const rows = sideBySide(diff);
    expect(rows[0]).toEqual({ kind: "hunk", text: "@@ -3,4 +3,5 @@" });
    expect(rows.slice(1)).toEqual([
      { kind: "pair", left: { line: 3, text: "keep" }, right: { line: 3, text: "keep" }, changed: false },
      { kind: "pair", left: { line: 4, text: "old one" }, right: { line: 4, text: "new one" }, changed: true },
      { kind: "pair", left: { line: 5, text: "old two" }, right: { line: 5, text: "new two" }, changed: true },
      { kind: "pair", left: null, right: { line: 6, text: "new three" }, changed: true },
      { kind: "pair", left: { line: 6, text: "tail" }, right: { line: 7, text: "tail" }, changed: false },
    ]);
  });

  it("shows a new file on the right only", () => {
    const rows = sideBySide("--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1,2 @@\n+a\n+b\n");
    expect(rows.filter((r) => r.kind === "pair").map((r) => r.kind === "pair" && [r.left, r.right?.text])).toEqual([
      [null, "a"],
      [null, "b"],
    ]);
  });
});

describe("languageOf", () => {
  it("knows code by extension and leaves unknown files plain", async () => {
    const { languageOf } = await import("./highlight");
    expect(languageOf("src/main.rs")).toBe("rs");
    expect(languageOf("ui/App.tsx")).toBe("typescript");
    expect(languageOf("Cargo.toml")).toBe("ini");
    expect(languageOf("notes/welcome.txt")).toBe(null);
    expect(languageOf(undefined)).toBe(null);
  });
});
