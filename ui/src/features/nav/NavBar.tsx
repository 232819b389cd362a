// The left navigation rail: one button per view, the active one marked, counts where they help;
// under them, what the window puts there (the sessions sidebar).
import type { ReactNode } from "react";
import { VIEWS, type ViewId } from "./views";

interface Props {
  active: ViewId;
  onSelect: (view: ViewId) => void;
  /** Small counts shown beside a view's label, e.g. pending approvals. */
  badges: Partial<Record<ViewId, number>>;
  /** Shown under the views (the sessions sidebar). */
  children?: ReactNode;
}

export function NavBar({ active, onSelect, badges, children }: Props) {
  return (
    <nav className="nav" aria-label="Views">
      <div className="nav-brand">Bridle</div>
      {VIEWS.map((view) => {
        const count = badges[view.id] ?? 0;
        return (
          <button
            key={view.id}
            type="button"
            className={view.id === active ? "nav-item active" : "nav-item"}
            data-testid={`nav-${view.id}`}
            aria-current={view.id === active ? "page" : undefined}
            onClick={() => onSelect(view.id)}
          >
            <span className="nav-glyph" aria-hidden="true">
              {view.glyph}
            </span>
            <span className="nav-label">{view.label}</span>
            {count > 0 && <span className="nav-badge">{count}</span>}
          </button>
        );
      })}
      {children}
    </nav>
  );
}
