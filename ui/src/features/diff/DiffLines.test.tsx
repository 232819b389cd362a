// DiffLines: a short diff is drawn whole; a long one is virtualised (only lines in view in the
// DOM, the count on `data-lines`), coloured the same way.
import { render } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { DiffLines } from "./DiffLines";
import { VIRTUAL_FROM } from "./limits";

function diffOf(lines: number): string {
  const body = Array.from({ length: lines - 3 }, (_, i) => `+line ${i + 1}\n`).join("");
  return `--- a/big.txt\n+++ b/big.txt\n@@ -0,0 +1,${lines - 3} @@\n${body}`;
}

describe("DiffLines", () => {
  it("draws every line of a short diff, coloured by kind", () => {
    const { container } = render(<DiffLines diff={diffOf(10)} testId="d" />);
    const lines = container.querySelectorAll(".diff-line");
    expect(lines).toHaveLength(10);
    expect(lines[0]?.className).toBe("diff-line meta");
    expect(lines[2]?.className).toBe("diff-line hunk");
    expect(lines[3]?.className).toBe("diff-line add");
    expect(container.querySelector("[data-testid=d]")?.hasAttribute("data-lines")).toBe(false);
  });

  it("puts only the first lines of a 10,000-line diff in the DOM, and says how many it has", () => {
    const { container } = render(<DiffLines diff={diffOf(10_000)} testId="d" />);
    const pre = container.querySelector("[data-testid=d]");
    expect(pre?.getAttribute("data-lines")).toBe("10000");
    const shown = container.querySelectorAll(".diff-line");
    expect(shown.length).toBeGreaterThan(0);
    expect(shown.length).toBeLessThan(VIRTUAL_FROM);
    expect(shown[0]?.textContent).toBe("--- a/big.txt\n");
    expect(shown[3]?.className).toBe("diff-line add");
  });
});
