// The Usage view: each turn's tokens as a chart (input, of it cached, and output) and as a table,
// the session's totals and the context meter. The numbers are the provider's own, as the engine
// reported them (kept in the store, so a reopened session shows them too).
import type { UsageState } from "../../store/state";
import { ContextMeter } from "./ContextMeter";
import type { ModelPrice } from "../../api/types";
import { costOf, formatCost, formatTokens } from "./format";

const WIDTH = 640;
const HEIGHT = 160;

function Chart({ turns }: { turns: UsageState["turns"] }) {
  const most = Math.max(1, ...turns.map((t) => t.usage.inputTokens + t.usage.outputTokens));
  // Bars stand from the left, at most 60 units apart, so one turn is not a lone bar mid-chart.
  const slot = Math.min(60, WIDTH / Math.max(turns.length, 1));
  const bar = Math.max(2, Math.min(40, slot * 0.7));
  const y = (tokens: number) => (tokens / most) * (HEIGHT - 20);
  return (
    <svg className="usage-chart" data-testid="usage-chart" viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label="Tokens per turn">
      <line x1={0} y1={HEIGHT - 1} x2={WIDTH} y2={HEIGHT - 1} className="axis" />
      {turns.map((t, i) => {
        const x = i * slot + (slot - bar) / 2;
        const input = y(t.usage.inputTokens);
        const cached = y(t.usage.cachedInputTokens);
        const output = y(t.usage.outputTokens);
        return (
          <g key={t.turnId}>
            <title>{`Turn ${i + 1}: ${t.usage.inputTokens} in (${t.usage.cachedInputTokens} cached), ${t.usage.outputTokens} out`}</title>
            <rect className="bar-input" x={x} y={HEIGHT - 1 - input} width={bar} height={input} />
            <rect className="bar-cached" x={x} y={HEIGHT - 1 - cached} width={bar} height={cached} />
            <rect className="bar-output" x={x} y={HEIGHT - 1 - input - output} width={bar} height={output} />
          </g>
        );
      })}
    </svg>
  );
}

export function UsageView({ usage, price }: { usage: UsageState; price: ModelPrice | null }) {
  const total = usage.total;
  const cost = (u: Parameters<typeof costOf>[0]) => (price ? formatCost(costOf(u, price), price.currency) : null);
  return (
    <section className="usage" aria-label="Usage">
      <header className="view-header">
        <h1>Usage</h1>
        <span className="spacer" />
        <ContextMeter usage={usage} />
      </header>
      <p className="usage-total">
        {total
          ? `This session: ${formatTokens(total.inputTokens)} in (${formatTokens(total.cachedInputTokens)} cached), ${formatTokens(total.outputTokens)} out`
          : "No model request yet."}
        {total && price && <span data-testid="usage-cost"> · {cost(total)}</span>}
        {!price && total && <span className="usage-no-price"> · add the model to [pricing] in the config to see costs</span>}
      </p>
      {usage.turns.length > 0 && (
        <>
          <Chart turns={usage.turns} />
          <p className="usage-legend">
            <span className="key bar-input" /> input <span className="key bar-cached" /> of it cached{" "}
            <span className="key bar-output" /> output
          </p>
          <table className="usage-table">
            <thead>
              <tr>
                <th>Turn</th>
                <th>Input</th>
                <th>Cached</th>
                <th>Output</th>
                {price && <th>Cost</th>}
              </tr>
            </thead>
            <tbody>
              {usage.turns.map((t, i) => (
                <tr key={t.turnId} data-testid="usage-row" data-turn-id={t.turnId}>
                  <td>{i + 1}</td>
                  <td>{t.usage.inputTokens}</td>
                  <td>{t.usage.cachedInputTokens}</td>
                  <td>{t.usage.outputTokens}</td>
                  {price && <td>{cost(t.usage)}</td>}
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </section>
  );
}
