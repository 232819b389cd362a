// The desk of many sessions (DESIGN §16): every stored session with its state, and the one inbox
// of every session's questions. Read again when something changed (`changed` moves: an event of
// the shown session or of another live one), a moment later so a burst reads once, and every few
// seconds while the window is visible (sessions run by `bridle` in a terminal change it too).
import { useCallback, useEffect, useState } from "react";
import { inbox as readInbox, sessionsList } from "../../api/engine";
import type { ApprovalRequest, SessionInfo } from "../../api/types";

export interface Desk {
  sessions: SessionInfo[];
  inbox: ApprovalRequest[];
  /** Reads both again now. */
  refresh: () => void;
}

const SETTLE_MS = 150;
const POLL_MS = 4000;

export function useDesk(changed: unknown): Desk {
  const [sessions, setSessions] = useState<SessionInfo[]>([]);
  const [inbox, setInbox] = useState<ApprovalRequest[]>([]);
  const [asked, setAsked] = useState(0);
  const refresh = useCallback(() => setAsked((n) => n + 1), []);

  useEffect(() => {
    let stale = false;
    const timer = window.setTimeout(() => {
      Promise.all([sessionsList(), readInbox()]).then(
        ([list, questions]) => {
          if (stale) return;
          setSessions(list);
          setInbox(questions);
        },
        () => {
          // The error banner reports an unreachable shell; the desk keeps what it showed.
        },
      );
    }, SETTLE_MS);
    return () => {
      stale = true;
      window.clearTimeout(timer);
    };
  }, [changed, asked]);

  useEffect(() => {
    const timer = window.setInterval(() => {
      if (document.visibilityState === "visible") refresh();
    }, POLL_MS);
    return () => window.clearInterval(timer);
  }, [refresh]);

  return { sessions, inbox, refresh };
}
