// What the app benchmarks share (run.mjs, probe.mjs, launch-order.mjs): a percentile, Bridle's
// window opened on the seeded big sessions (BENCH_DATA, BENCH_WORKSPACE, BENCH_CONFIG, from
// scripts/bench-app.sh), and the launch order's names.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
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

/** The launch order's file (read by src-tauri/build.rs, resolved by scripts/link/cc). */
export const LAUNCH_ORDER = join(dirname(fileURLToPath(import.meta.url)), "../../src-tauri/launch-order.txt");
const LAUNCH_ORDER_AWK = join(dirname(fileURLToPath(import.meta.url)), "../link/launch-order.awk");

/** How the launch order at `file` matches `binary`'s functions, by scripts/link/launch-order.awk
 * (the linker's own rule): its names found as they are, the others found by name alone (placed,
 * with every function of that name), of all. */
export function launchOrderMatch(file, binary) {
  const nm = spawnSync("nm", ["--defined-only", binary], { encoding: "utf8", maxBuffer: 1 << 28 });
  if (nm.status !== 0) throw new Error(`nm failed: ${nm.stderr}`);
  const awk = spawnSync("awk", ["-v", `list=${file}`, "-v", "mode=count", "-f", LAUNCH_ORDER_AWK], {
    input: nm.stdout,
    encoding: "utf8",
    maxBuffer: 1 << 20,
  });
  if (awk.status !== 0) throw new Error(`launch-order.awk failed: ${awk.stderr}`);
  const [exact, byName, all] = awk.stdout.trim().split(" ").map(Number);
  return { exact, byName, all };
}

/** The functions of `binary`: name -> size in bytes. */
export function functionsOf(binary) {
  const nm = spawnSync("nm", ["-S", "--defined-only", binary], { encoding: "utf8", maxBuffer: 1 << 28 });
  if (nm.status !== 0) throw new Error(`nm failed: ${nm.stderr}`);
  const sizes = new Map();
  for (const line of nm.stdout.split("\n")) {
    const [, size, kind, name] = line.split(" ");
    if (name && /^[tTwW]$/.test(kind)) sizes.set(name, parseInt(size, 16));
  }
  return sizes;
}
