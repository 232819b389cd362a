// One background process in the Processes panel: command, state in words with its uptime, the
// tail of its output (kept scrolled to the end unless the user scrolled up), Stop while it runs,
// and once it ended the files it changed. Everything the command controls is plain text.
import { useLayoutEffect, useRef } from "react";
import type { ProcessInfo } from "../../api/types";
import { formatDuration } from "../usage/format";

interface Props {
  process: ProcessInfo;
  /** The time a running process's uptime is counted to (ms since the epoch). */
  now: number;
  /** Its stop is on its way. */
  stopping: boolean;
  /** Why its stop failed, if it did. */
  failure: string | null;
  onStop: () => void;
}

/** 12_400 -> "12 s", 125_000 -> "2m 5s": whole seconds, as a clock that ticks once a second. */
export function uptime(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  return seconds < 60 ? `${seconds} s` : formatDuration(seconds * 1000);
}

/** "running · 12 s", "exited 0 · 3 s", "stopped · 40 s". */
export function stateLine(p: ProcessInfo, now: number): string {
  const ran = uptime((p.endedAt ?? now) - p.startedAt);
  switch (p.state) {
    case "running":
      return `running · ${ran}`;
    case "exited":
      return `exited${p.exitCode === null ? "" : ` ${p.exitCode}`} · ${ran}`;
    case "stopped":
      return `stopped · ${ran}`;
  }
}

export function ProcessRow({ process: p, now, stopping, failure, onStop }: Props) {
  // Coloured like a tool card's status; a stopped process is neither a success nor a failure.
  const chip = p.state === "running" ? "running" : p.state === "stopped" ? "stopped" : p.exitCode === 0 ? "ok" : "error";
  return (
    <li className={`process-row ${p.state}`} data-testid="process-row" data-state={p.state} data-process-id={p.id}>
      <div className="process-head">
        <span className="process-id">{p.id}</span>
        <code className="process-command" title={p.command}>
          {p.command}
        </code>
        <span className={`status-chip ${chip}`} data-testid="process-state">
          {stateLine(p, now)}
        </span>
        {p.state === "running" && (
          <button type="button" className="button small danger" data-testid="process-stop" disabled={stopping} onClick={onStop}>
            {stopping ? "Stopping…" : "Stop"}
          </button>
        )}
      </div>
      {failure && (
        <p className="field-error" role="alert">
          Could not stop {p.id}: {failure}
        </p>
      )}
      <ProcessOutput tail={p.tail} />
      {p.state !== "running" && p.changed.length > 0 && (
        <div className="process-changed" data-testid="process-changed">
          <span className="muted">Changed in the workspace (written directly, not undoable):</span>
          <ul>
            {p.changed.map((path) => (
              <li key={path}>
                <code>{path}</code>
              </li>
            ))}
          </ul>
        </div>
      )}
    </li>
  );
}

/** The output's tail; follows new output while scrolled to the end. */
function ProcessOutput({ tail }: { tail: string }) {
  const box = useRef<HTMLPreElement>(null);
  const atEnd = useRef(true);
  useLayoutEffect(() => {
    const el = box.current;
    if (el && atEnd.current) el.scrollTop = el.scrollHeight;
  }, [tail]);
  return (
    <pre
      ref={box}
      className="code process-output"
      data-testid="process-output"
      onScroll={(e) => {
        const el = e.currentTarget;
        atEnd.current = el.scrollHeight - el.scrollTop - el.clientHeight < 8;
      }}
    >
      {tail}
    </pre>
  );
}
