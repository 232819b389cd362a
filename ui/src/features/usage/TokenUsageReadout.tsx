// The session's token spend in one line: input (of which cached), output, and the last request.
import type { UsageState } from "../../store/state";
import { formatTokens } from "./format";

export function TokenUsageReadout({ usage }: { usage: UsageState }) {
  const { total, last } = usage;
  if (!total) {
    return (
      <span className="token-usage muted" data-testid="token-usage">
        No tokens used yet
      </span>
    );
  }
  const title = last
    ? `Last request: ${last.inputTokens} in (${last.cachedInputTokens} cached), ${last.outputTokens} out`
    : undefined;
  return (
    <span className="token-usage" data-testid="token-usage" title={title}>
      <span>
        in <strong>{formatTokens(total.inputTokens)}</strong>
      </span>
      {total.cachedInputTokens > 0 && <span className="muted">({formatTokens(total.cachedInputTokens)} cached)</span>}
      <span>
        out <strong>{formatTokens(total.outputTokens)}</strong>
      </span>
    </span>
  );
}
