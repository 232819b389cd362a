// The Sessions view: every stored session, newest first, with its title, state, time, workspace
// or worktree branch and token total; a search over title and workspace; open one (it is shown
// with its whole history, and the session shown before keeps running), start a new one — in the
// workspace or in a worktree of its own — and delete one (a second click confirms: a session's
// history cannot be brought back). A worktree session can be archived and restored, and its work
// applied to the main checkout (a first click shows the diff) or merged (DESIGN §16).
import { useEffect, useMemo, useState } from "react";
import {
  sessionApply,
  sessionArchive,
  sessionDelete,
  sessionMerge,
  sessionNew,
  sessionNewWorktree,
  sessionOpen,
  sessionRestore,
  sessionsList,
} from "../../api/engine";
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
  /** Called after a session changed (archived, restored, applied): the desk reads again;
   *  `closed` when the shown session was closed (archived), so the window loads the one shown now. */
  onChanged?: (closed: boolean) => void;
}

function when(ms: number): string {
  return new Date(ms).toLocaleString("en-GB", { dateStyle: "medium", timeStyle: "short" });
}

export function SessionsView({ currentId, onOpened, onShowCurrent, onChanged }: Props) {
  const [sessions, setSessions] = useState<SessionInfo[] | null>(null);
  const [query, setQuery] = useState("");
  const [confirming, setConfirming] = useState<string | null>(null);
  /** The worktree session whose diff is shown, for a second click to apply it. */
  const [preview, setPreview] = useState<{ id: string; patch: string } | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
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

  /** Runs a worktree step on a session; the list is read again after it. */
  const step = (work: () => Promise<string | void>, done: (answer: string | void) => string | null, closes = false) => {
    setBusy(true);
    setError(null);
    setNotice(null);
    work().then(
      (answer) => {
        setBusy(false);
        setNotice(done(answer));
        setVersion((v) => v + 1);
        onChanged?.(closes);
      },
      (err: unknown) => {
        setBusy(false);
        setError(describeError(err));
        setVersion((v) => v + 1);
      },
    );
  };

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
        <button type="button" className="button primary" data-testid="session-new" disabled={busy} onClick={() => run(sessionNew)}>
          New session
        </button>
        <button
          type="button"
          className="button"
          data-testid="session-new-worktree"
          disabled={busy}
          title="A new session on a branch of its own, in a git worktree kept in Bridle's data folder"
          onClick={() => run(() => sessionNewWorktree(null))}
        >
          New session in a worktree
        </button>
      </div>
      {error && (
        <p className="settings-status error" role="alert" data-testid="sessions-error">
          {error}
        </p>
      )}
      {notice && (
        <p className="settings-status" role="status" data-testid="sessions-notice">
          {notice}
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
                onClick={() => (current ? onShowCurrent() : run(() => sessionOpen(s.id)))}
              >
                <span className="session-title">
                  <span className={`session-state ${s.state}`} data-testid="session-state">
                    {stateLabel(s)}
                  </span>
                  {s.title || "Untitled session"}
                </span>
                <span className="session-meta">
                  {when(s.updatedAt)} · {s.worktree ? `worktree of ${s.worktree.origin}` : s.workspace}
                  {s.branch ? ` · ${s.branch}` : ""}
                  {s.worktree?.missing ? " · its folder is gone" : ""} · {formatTokens(s.totalTokens)} tokens
                  {current ? " · shown now" : ""}
                </span>
              </button>
              {s.worktree && (s.worktree.archived || s.worktree.missing) && (
                <button
                  type="button"
                  className="button"
                  data-testid="session-restore"
                  disabled={busy}
                  onClick={() => step(() => sessionRestore(s.id), () => `Restored ${s.worktree?.branch}.`)}
                >
                  Restore
                </button>
              )}
              {s.worktree && !s.worktree.archived && !s.worktree.missing && (
                <>
                  <button
                    type="button"
                    className="button"
                    data-testid="session-apply"
                    disabled={busy}
                    onClick={() =>
                      preview?.id === s.id
                        ? step(
                            () => sessionApply(s.id, false),
                            () => {
                              setPreview(null);
                              return `Applied ${s.worktree?.branch} to the main checkout, uncommitted.`;
                            },
                          )
                        : step(
                            () => sessionApply(s.id, true),
                            (patch) => {
                              setPreview({ id: s.id, patch: patch || "" });
                              return patch ? null : "The session changed nothing since its base.";
                            },
                          )
                    }
                  >
                    {preview?.id === s.id ? "Apply this to main" : "Apply to main…"}
                  </button>
                  <button
                    type="button"
                    className="button"
                    data-testid="session-merge"
                    disabled={busy}
                    onClick={() => step(() => sessionMerge(s.id), (commit) => `Merged as ${String(commit).slice(0, 12)}.`)}
                  >
                    Merge
                  </button>
                  <button
                    type="button"
                    className="button"
                    data-testid="session-archive"
                    disabled={busy || s.state === "working" || s.state === "needs-you"}
                    title={
                      s.state === "working" || s.state === "needs-you"
                        ? "A session that is working or waiting for you cannot be archived"
                        : "Save its staged, unstaged and untracked files in git and remove the folder"
                    }
                    onClick={() => step(() => sessionArchive(s.id), () => `Archived ${s.worktree?.branch}.`, current)}
                  >
                    Archive
                  </button>
                </>
              )}
              <button
                type="button"
                className="button danger"
                data-testid="session-delete"
                disabled={busy}
                onClick={() => (confirming === s.id ? run(() => sessionDelete(s.id)) : setConfirming(s.id))}
              >
                {confirming === s.id ? "Delete for good?" : "Delete"}
              </button>
              {preview?.id === s.id && preview.patch && (
                <pre className="session-preview" data-testid="session-apply-preview">
                  {preview.patch}
                </pre>
              )}
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
