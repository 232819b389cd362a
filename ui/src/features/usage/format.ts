// Number formatting for token counts, byte sizes, durations and costs: short, stable, no locale
// surprises.
import type { ModelPrice, TokenUsage } from "../../api/types";

/** 950 -> "950", 12_345 -> "12.3k", 1_280_000 -> "1.28M". */
export function formatTokens(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${trim(n / 1000)}k`;
  return `${trim(n / 1_000_000)}M`;
}

function trim(x: number): string {
  const digits = x >= 100 ? 0 : x >= 10 ? 1 : 2;
  const fixed = x.toFixed(digits);
  // "12.50" -> "12.5", "2.00" -> "2"; never touch the zeros of a whole number ("200").
  return fixed.includes(".") ? fixed.replace(/\.?0+$/, "") : fixed;
}

/** 0 -> "0 B", 950 -> "950 B", 1_530 -> "1.53 kB", 2_400_000 -> "2.4 MB" (powers of 1000). */
export function formatBytes(n: number): string {
  if (n < 1000) return `${n} B`;
  if (n < 1_000_000) return `${trim(n / 1000)} kB`;
  if (n < 1_000_000_000) return `${trim(n / 1_000_000)} MB`;
  return `${trim(n / 1_000_000_000)} GB`;
}

/** 85 -> "85 ms", 1530 -> "1.5 s", 125_000 -> "2m 5s". */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1).replace(/\.0$/, "")} s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)}m ${s % 60}s`;
}

/** What `usage` cost at `price` (per million tokens; cached input at its own price). */
export function costOf(usage: TokenUsage, price: ModelPrice): number {
  const cached = Math.min(usage.cachedInputTokens, usage.inputTokens);
  return ((usage.inputTokens - cached) * price.input + cached * price.cachedInput + usage.outputTokens * price.output) / 1_000_000;
}

/** 0.01234 EUR -> "€0.0123": small sums keep four decimals, larger ones two. */
export function formatCost(amount: number, currency: string): string {
  const digits = amount !== 0 && amount < 1 ? 4 : 2;
  return new Intl.NumberFormat("en-US", { style: "currency", currency, minimumFractionDigits: digits, maximumFractionDigits: digits }).format(amount);
}
