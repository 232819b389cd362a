// A desktop notification when a request arrives while the window is not focused, through the
// web Notification API. Where notifications are missing or refused nothing happens: the nav
// badge still counts the requests.
import { useEffect, useRef } from "react";
import type { ApprovalRequest } from "../../api/types";

async function notify(fresh: ApprovalRequest[]): Promise<void> {
  if (typeof Notification === "undefined") return;
  let permission = Notification.permission;
  if (permission === "default") permission = await Notification.requestPermission();
  if (permission !== "granted") return;
  const first = fresh[0];
  const title = fresh.length === 1 && first ? `Approve ${first.tool}?` : `${fresh.length} calls wait for your approval`;
  const note = new Notification(`Bridle: ${title}`, { body: "Open Bridle to answer.", tag: "bridle-approval" });
  note.onclick = () => window.focus();
}

export function useApprovalNotifications(approvals: ApprovalRequest[]): void {
  const seen = useRef(new Set<string>());
  useEffect(() => {
    const fresh = approvals.filter((a) => !seen.current.has(a.id));
    for (const a of fresh) seen.current.add(a.id);
    if (fresh.length === 0 || document.hasFocus()) return;
    notify(fresh).catch(() => {
      // A webview without notifications: the badge has to do.
    });
  }, [approvals]);
}
