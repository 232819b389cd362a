// Number formatting for token counts and durations: short, stable, no locale surprises.

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

/** 85 -> "85 ms", 1530 -> "1.5 s", 125_000 -> "2m 5s". */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1).replace(/\.0$/, "")} s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)}m ${s % 60}s`;
}
