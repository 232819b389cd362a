// How audit values read in the table and the details: times, latencies, short ids, payloads.

/** Local wall-clock time with milliseconds, e.g. `14:03:07.215`. */
export function clockTime(ms: number): string {
  const d = new Date(ms);
  const pad = (n: number, w = 2) => String(n).padStart(w, "0");
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}

/** Local date and time, e.g. `2026-11-21 14:03:07.215`. */
export function fullTime(ms: number): string {
  const d = new Date(ms);
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${clockTime(ms)}`;
}

/** The first characters of a long id or hash, enough to tell rows apart. */
export function shortId(id: string | null, length = 8): string {
  if (!id) return "";
  return id.length > length ? `${id.slice(0, length)}…` : id;
}

export function latency(ms: number | null): string {
  if (ms === null) return "";
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** The payload as indented JSON (it is already sanitised by the engine). */
export function prettyPayload(payload: unknown): string {
  if (payload === null || payload === undefined) return "(none)";
  try {
    return JSON.stringify(payload, null, 2);
  } catch {
    return String(payload);
  }
}
