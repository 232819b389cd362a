// While a background process runs, asks the engine for the processes every second (their output
// and uptime move without events: the engine only says when one starts and when it ends), and
// keeps a clock for the uptimes. Stops when none runs or the view unmounts; one request at a time.
import { useEffect, useRef, useState } from "react";
import { describeError } from "../../api/errors";

/** How often the processes are asked for while one runs. */
export const PROCESS_POLL_MS = 1000;

export interface ProcessPolling {
  /** The time the uptimes are counted to (ms since the epoch), moved on every poll. */
  now: number;
  /** Why the last poll failed; null once one succeeds. */
  error: string | null;
}

export function useProcessPolling(running: boolean, refresh: () => Promise<void>): ProcessPolling {
  const [now, setNow] = useState(() => Date.now());
  const [error, setError] = useState<string | null>(null);
  const refreshRef = useRef(refresh);
  useEffect(() => {
    refreshRef.current = refresh;
  });

  useEffect(() => {
    if (!running) return;
    let live = true;
    let asking = false;
    setNow(Date.now());
    const timer = setInterval(() => {
      setNow(Date.now());
      if (asking) return;
      asking = true;
      refreshRef.current().then(
        () => live && setError(null),
        (err: unknown) => live && setError(describeError(err)),
      ).finally(() => {
        asking = false;
      });
    }, PROCESS_POLL_MS);
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, [running]);

  return { now, error: running ? error : null };
}
