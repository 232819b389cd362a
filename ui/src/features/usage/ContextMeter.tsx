// How full the model's context window is, from the engine's last report (tokens, not characters).
import type { UsageState } from "../../store/state";
import { formatTokens } from "./format";

export function ContextMeter({ usage }: { usage: UsageState }) {
  const used = usage.contextUsed ?? 0;
  const window = usage.contextWindow;
  const ratio = window ? Math.min(1, used / window) : 0;
  const level = ratio >= 0.9 ? "high" : ratio >= 0.7 ? "mid" : "low";
  const label = window
    ? `${formatTokens(used)} / ${formatTokens(window)} (${Math.round(ratio * 100)}%)`
    : `${formatTokens(used)} / ? tokens`;
  return (
    <div
      className={`context-meter ${level}`}
      data-testid="context-meter"
      data-used={used}
      data-window={window ?? ""}
      title={window ? "Context window in use" : "The model's context window is unknown"}
    >
      <span className="context-meter-name">context</span>
      <span
        className="context-meter-bar"
        role="meter"
        aria-label="Context window used"
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={Math.round(ratio * 100)}
      >
        {/* Width set through the CSSOM (React style prop), which the CSP allows; none at 0 (the
            stylesheet's), so the prerendered first screen has no style attribute. */}
        <span className="context-meter-fill" style={ratio > 0 ? { width: `${ratio * 100}%` } : undefined} />
      </span>
      <span className="context-meter-text">{label}</span>
    </div>
  );
}
