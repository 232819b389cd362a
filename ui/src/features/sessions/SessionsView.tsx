// The Sessions view: every stored session, newest first, with its title, time, workspace and
// token total; a search over title and workspace; open one (the shell closes the open session
// and opens it with its whole history), start a new one, delete one (a second click confirms:
// a session's history cannot be brought back).
import { useEffect, useMemo, useState } from "react";
import { sessionDelete, sessionNew, sessionOpen, sessionsList } from "../../api/engine";
import { describeError } from "../../api/errors";
import type { SessionInfo, SessionSummary } from "../../api/types";
import { formatTokens } from "../usage/format";

interface Props {
  /** The session the window shows now. */
  currentId: string | null;
  /** Called once the shell has another session open. */
  onOpened: (summary: SessionSummary) => void;
  /** Called when the user picks the session that is open already. */
  onShowCurrent: () => void;
  /** A turn of the open session is running: leaving it stops that turn, so it asks first. */
  busy: boolean;
}

function when(ms: number): string {
  return new Date(ms).toLocaleString("en-GB", { dateStyle: "medium", timeStyle: "short" });
}

export function SessionsView({ currentId, onOpened, onShowCurrent, busy: turnRunning }: Props) {
  const [sessions, setSessions] = useState<SessionInfo[] | null>(null);
  const [query, setQuery] = useState("");
  const [confirming, setConfirming] = useState<string | null>(null);
  /** The session (or `new`) the user asked to open while a turn runs: the next click confirms. */
  const [leaving, setLeaving] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [version, setVersion] = useState(0);

  useEffect(() => {
    let stale = false;
    sessionsList().then(
      (list) => !stale && setSessions(list),
      (err: unknown) => !stale && setError(describeError(err)),
    );
    return () => {
      stale = true;
    };
  }, [version, currentId]);

  const shown = useMemo(() => {
    const q = query.trim().toLowerCase();
    if (!sessions || !q) return sessions ?? [];
    return sessions.filter((s) => s.title.toLowerCase().includes(q) || s.workspace.toLowerCase().includes(q));
  }, [sessions, query]);

  /** Runs a command; when it leaves another session open, the window follows it there. */
  const run = (work: () => Promise<SessionSummary>) => {
    setBusy(true);
    setError(null);
    work().then(
      (summary) => {
        setBusy(false);
        setConfirming(null);
        setVersion((v) => v + 1);
        if (summary.sessionId !== currentId) onOpened(summary);
      },
      (err: unknown) => {
        setBusy(false);
        setError(describeError(err));
      },
    );
  };

  return (
    <div className="sessions" data-testid="sessions-view">
      <div className="sessions-bar">
        <input
          className="sessions-search"
          data-testid="sessions-search"
          type="search"
          placeholder="Search titles and folders"
          value={query}
          onChange={(e) => setQuery(e.target.value)}
        />
        <button
          type="button"
          className="button primary"
          data-testid="session-new"
          disabled={busy}
          onClick={() => (turnRunning && leaving !== "new" ? setLeaving("new") : run(sessionNew))}
        >
          {turnRunning && leaving === "new" ? "Stop the turn and start a new session?" : "New session"}
        </button>
      </div>
      {error && (
        <p className="settings-status error" role="alert">
          {error}
        </p>
      )}
      {sessions === null && !error && <p className="muted">Loading sessions…</p>}
      {sessions !== null && shown.length === 0 && (
        <p className="muted">{sessions.length === 0 ? "No sessions yet." : "No session matches."}</p>
      )}
      <ul className="sessions-list">
        {shown.map((s) => {
          const current = s.id === currentId;
          return (
            <li
              key={s.id}
              className={current ? "session-item current" : "session-item"}
              data-testid="session-item"
              data-session-id={s.id}
              data-state={s.state}
            >
              <button
                type="button"
                className="session-open"
                disabled={busy}
                aria-current={current ? "true" : undefined}
                onClick={() =>
                  current
                    ? onShowCurrent()
                    : turnRunning && leaving !== s.id
                      ? setLeaving(s.id)
                      : run(() => sessionOpen(s.id))
                }
              >
                <span className="session-title">
                  <span className={`session-state ${s.state}`} data-testid="session-state">
                    {stateLabel(s)}
                  </span>
                  {s.title || "Untitled session"}
                </span>
                {turnRunning && leaving === s.id && (
                  <span className="session-warning" role="alert" data-testid="session-leave-warning">
                    A turn is running in the open session: click again to stop it and open this one.
                  </span>
                )}
                <span className="session-meta">
                  {when(s.updatedAt)} · {s.workspace}
                  {s.branch ? ` · ${s.branch}` : ""} · {formatTokens(s.totalTokens)} tokens{current ? " · open now" : ""}
                </span>
              </button>
              <button
                type="button"
                className="button danger"
                data-testid="session-delete"
                disabled={busy}
                onClick={() => (confirming === s.id ? run(() => sessionDelete(s.id)) : setConfirming(s.id))}
              >
                {confirming === s.id ? "Delete for good?" : "Delete"}
              </button>
            </li>
          );
        })}
      </ul>
    </div>
  );
}

/** A session's state as the list says it, with what it waits for. */
function stateLabel(s: SessionInfo): string {
  switch (s.state) {
    case "needs-you": {
      const what = s.waitingFor === "host" ? "a host" : s.waitingFor === "changes" ? "held changes" : "an approval";
      return s.waiting > 1 ? `needs you: ${what} and ${s.waiting - 1} more` : `needs you: ${what}`;
    }
    case "working":
      return "working";
    case "failed":
      return "failed";
    case "archived":
      return "archived";
    default:
      return "idle";
  }
}
