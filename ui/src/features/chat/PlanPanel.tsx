// The model's plan (`update_plan`) as a checklist above the composer: every step with its status,
// updated live as the model sets it, and restored with the session. Collapsible; shows nothing
// while there is no plan.
import { memo, useState } from "react";
import type { PlanItem } from "../../api/types";

const MARK = { pending: "○", in_progress: "◐", done: "●" } as const;

export const PlanPanel = memo(function PlanPanel({ plan }: { plan: PlanItem[] }) {
  const [open, setOpen] = useState(true);
  if (plan.length === 0) return null;
  const done = plan.filter((i) => i.status === "done").length;
  return (
    <section className="plan-panel" data-testid="plan-panel" aria-label="Plan">
      <button type="button" className="plan-head" aria-expanded={open} onClick={() => setOpen(!open)}>
        Plan · {done} of {plan.length} done {open ? "▾" : "▸"}
      </button>
      {open && (
        <ol className="plan-items">
          {plan.map((item, i) => (
            <li key={`${i}-${item.step}`} className={`plan-item ${item.status}`} data-testid="plan-item" data-status={item.status}>
              <span className="plan-mark" aria-hidden="true">
                {MARK[item.status]}
              </span>
              <span className="plan-step">{item.step}</span>
              <span className="visually-hidden"> ({item.status.replace("_", " ")})</span>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
});
