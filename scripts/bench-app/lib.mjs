// What the app benchmarks share (run.mjs, probe.mjs): a percentile, and Bridle's window opened on
// the seeded big sessions (BENCH_DATA, BENCH_WORKSPACE, BENCH_CONFIG, from scripts/bench-app.sh).
import { webdriverUrl } from "../../tests/e2e/lib/env.mjs";
import { startSession, waitFor } from "../../tests/e2e/lib/webdriver.mjs";

/** The `p`th percentile of `xs`. */
export const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];

/** The Sessions view's open button of the session `id`. */
export const sessionItem = (id) => `[data-testid=session-item][data-session-id="${id}"] .session-open`;

/** `binary` launched on the seeded data, its chat input on screen and page scripts given 120 s;
 * `click(css)` waits for `css` and clicks it. The caller ends the session. */
export async function openSeeded(binary) {
  const args = ["--data-dir", process.env.BENCH_DATA, "--workspace", process.env.BENCH_WORKSPACE, "--config", process.env.BENCH_CONFIG];
  const session = await startSession(webdriverUrl(), binary, args);
  try {
    await session.cmd("POST", "/timeouts", { script: 120000 });
    await waitFor(() => session.find("[data-testid=chat-input]"), "the chat input", 30000);
  } catch (err) {
    await session.cmd("DELETE", "").catch(() => {});
    throw err;
  }
  const click = async (css) => (await waitFor(() => session.find(css), css, 30000)).click();
  return { session, click };
}
