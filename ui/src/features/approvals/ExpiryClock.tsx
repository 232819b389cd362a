// Time left before a request expires as denied, ticking once a second on its own (so the card
// around it does not re-render).
import { useEffect, useState } from "react";

/** `ms` as m:ss, or h:mm:ss from an hour up. */
export function formatTimeLeft(ms: number): string {
  const total = Math.max(0, Math.ceil(ms / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = String(total % 60).padStart(2, "0");
  return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${s}` : `${m}:${s}`;
}

export function ExpiryClock({ expiresAt }: { expiresAt: number }) {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, []);
  const left = expiresAt - now;
  return (
    <span className={left > 60_000 ? "approval-expiry" : "approval-expiry soon"} data-testid="approval-expiry">
      {left > 0 ? `expires in ${formatTimeLeft(left)}` : "expired: counts as denied"}
    </span>
  );
}
