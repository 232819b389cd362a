// The sessions sidebar (DESIGN §16), under the views in the left rail: the live and recent
// sessions with their state, branch and what waits, the shown one marked, and the inbox's count.
// Picking one shows it; the others keep running.
import type { SessionInfo } from "../../api/types";

interface Props {
  sessions: SessionInfo[];
  /** The session the window shows. */
  currentId: string | null;
  /** Questions waiting in every session. */
  inboxCount: number;
  onOpen: (id: string) => void;
  onInbox: () => void;
}

/** At most this many sessions are listed; one that is working or needs you always is. */
const SHOWN = 8;

export function SessionRail({ sessions, currentId, inboxCount, onOpen, onInbox }: Props) {
  const pressing = (s: SessionInfo) => s.state === "working" || s.state === "needs-you" || s.id === currentId;
  const listed = sessions.filter((s) => s.state !== "archived").filter((s, i) => i < SHOWN || pressing(s));
  return (
    <section className="rail" aria-label="Sessions">
      <button type="button" className="rail-inbox" onClick={onInbox} disabled={inboxCount === 0}>
        Inbox
        <span className={inboxCount > 0 ? "nav-badge" : "nav-badge empty"} data-testid="inbox-badge" data-count={inboxCount}>
          {inboxCount}
        </span>
      </button>
      <ul className="rail-list">
        {listed.map((s) => (
          <li key={s.id}>
            <button
              type="button"
              className={s.id === currentId ? "rail-session current" : "rail-session"}
              data-testid="rail-session"
              data-session-id={s.id}
              data-state={s.state}
              aria-current={s.id === currentId ? "true" : undefined}
              title={`${s.title || "Untitled session"} — ${s.state}${s.branch ? ` — ${s.branch}` : ""}`}
              onClick={() => onOpen(s.id)}
            >
              <span className={`rail-dot ${s.state}`} aria-hidden="true" />
              <span className="rail-text">
                <span className="rail-title">{s.title || "Untitled session"}</span>
                <span className="rail-branch">{s.branch ?? s.workspace.split("/").pop()}</span>
              </span>
              {s.waiting > 0 && <span className="nav-badge">{s.waiting}</span>}
            </button>
          </li>
        ))}
      </ul>
    </section>
  );
}
