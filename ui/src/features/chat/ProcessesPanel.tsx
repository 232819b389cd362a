// The session's background processes (`bash` with `background`) above the composer: each with its
// command, state and uptime, the tail of its output, Stop while it runs, and once it ended the
// workspace files it changed (written directly, so not undoable). Refreshed every second while
// one runs. Shows nothing until the session has a process. Command, output and file names come
// from the model's command: plain text only.
import { memo, useState } from "react";
import { describeError } from "../../api/errors";
import type { ProcessInfo } from "../../api/types";
import { runningCount } from "../../store/processes";
import { ProcessRow } from "./ProcessRow";
import { useProcessPolling } from "./useProcessPolling";

interface Props {
  processes: ProcessInfo[];
  onRefresh: () => Promise<void>;
  onStop: (processId: string) => Promise<void>;
}

export const ProcessesPanel = memo(function ProcessesPanel({ processes, onRefresh, onStop }: Props) {
  const [open, setOpen] = useState(true);
  /** Processes whose stop is on its way (their button is disabled). */
  const [stopping, setStopping] = useState<string[]>([]);
  /** Why a stop failed, by process id. */
  const [failures, setFailures] = useState<Record<string, string>>({});
  const running = runningCount(processes);
  const { now, error } = useProcessPolling(running > 0, onRefresh);
  if (processes.length === 0) return null;

  const stop = (id: string) => {
    setStopping((ids) => [...ids, id]);
    setFailures((f) => {
      const next = { ...f };
      delete next[id];
      return next;
    });
    onStop(id)
      .catch((err: unknown) => setFailures((f) => ({ ...f, [id]: describeError(err) })))
      .finally(() => setStopping((ids) => ids.filter((i) => i !== id)));
  };

  return (
    <section className="processes-panel" data-testid="processes-panel" aria-label="Background processes">
      <button type="button" className="processes-head" aria-expanded={open} onClick={() => setOpen(!open)}>
        Processes · {running} of {processes.length} running {open ? "▾" : "▸"}
      </button>
      {open && error && (
        <p className="field-error" role="status">
          Could not refresh the processes: {error}
        </p>
      )}
      {open && (
        <ul className="process-rows">
          {processes.map((p) => (
            <ProcessRow
              key={p.id}
              process={p}
              now={now}
              stopping={stopping.includes(p.id)}
              failure={failures[p.id] ?? null}
              onStop={() => stop(p.id)}
            />
          ))}
        </ul>
      )}
    </section>
  );
});
