// Token and duration formatting.
import { describe, expect, it } from "vitest";
import { costOf, formatBytes, formatCost, formatDuration, formatTokens } from "./format";

describe("formatTokens", () => {
  it("shortens large counts without losing whole-number zeros", () => {
    expect([0, 950, 1000, 1500, 12_345, 128_000, 200_000, 1_280_000, 2_000_000].map(formatTokens)).toEqual([
      "0",
      "950",
      "1k",
      "1.5k",
      "12.3k",
      "128k",
      "200k",
      "1.28M",
      "2M",
    ]);
  });
});

describe("formatBytes", () => {
  it("counts bytes, then kB, MB and GB in powers of 1000", () => {
    expect([0, 999, 1000, 1530, 64_000, 2_400_000, 3_000_000_000].map(formatBytes)).toEqual([
      "0 B",
      "999 B",
      "1 kB",
      "1.53 kB",
      "64 kB",
      "2.4 MB",
      "3 GB",
    ]);
  });
});

describe("formatDuration", () => {
  it("uses ms, seconds, then minutes", () => {
    expect([85, 1530, 59_000, 125_000].map(formatDuration)).toEqual(["85 ms", "1.5 s", "59 s", "2m 5s"]);
  });
});

describe("costOf", () => {
  it("prices cached input at its own rate and formats in the user's currency", () => {
    const price = { currency: "EUR", input: 2, cachedInput: 0.5, output: 8 };
    const usage = { inputTokens: 1_000_000, cachedInputTokens: 400_000, outputTokens: 100_000 };
    // 600k × 2 + 400k × 0.5 + 100k × 8, per million
    expect(costOf(usage, price)).toBeCloseTo(2.2, 10);
    expect(formatCost(2.2, "EUR")).toBe("€2.20");
    expect(formatCost(0.01234, "USD")).toBe("$0.0123");
  });
});
