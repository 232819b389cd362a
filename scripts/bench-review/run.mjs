// The window's side of the review figures (issue 40), run by scripts/bench-review.sh inside the
// GUI test environment (scripts/e2e-gui.sh as E2E_RUNNER): one captured `bash` command of a real
// turn against aimock changes 200 files, 25 lines each (5,000 hunks); then the time from clicking
// Changes to the turn's review shown (its progress and first hunk), the first time (the hunks are
// made and stored) and again, and the time to reject one hunk by click until the window shows it.
// Measured, never asserted. Environment: E2E_WEBDRIVER_URL, E2E_APP_BINARY, E2E_OUT_DIR.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startAimock } from "../../tests/e2e/lib/aimock.mjs";
import { launchApp } from "../../tests/e2e/lib/app.mjs";
import { sendAndWait } from "../../tests/e2e/lib/chat.mjs";
import { outDir, tempDirs } from "../../tests/e2e/lib/env.mjs";
import { waitFor } from "../../tests/e2e/lib/webdriver.mjs";

const FILES = 200;
const LINES = 250;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function timed(work) {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

const dirs = tempDirs();
const fixtures = mkdtempSync(join(tmpdir(), "bridle-bench-review-"));
writeFileSync(
  join(fixtures, "review.json"),
  JSON.stringify({
    fixtures: [
      {
        match: { userMessage: "change every tenth line", hasToolResult: false },
        response: { toolCalls: [{ id: "call_bench_sed", name: "bash", arguments: { command: "for f in f*.txt; do sed -i '0~10s/$/ changed/' \"$f\"; done" } }] },
      },
      { match: { userMessage: "change every tenth line", hasToolResult: true }, response: { content: "Every tenth line is changed." } },
    ],
  }),
);
const mock = await startAimock(fixtures, join(outDir(), "aimock-bench-review.log"));
let session = null;
try {
  const workspace = dirs.make("workspace");
  for (let f = 0; f < FILES; f++) {
    writeFileSync(join(workspace, `f${f}.txt`), Array.from({ length: LINES }, (_, i) => `line ${i + 1} of file ${f}\n`).join(""));
  }
  const config = join(dirs.make("config"), "bridle.toml");
  writeFileSync(config, `mode = "auto"\n[provider]\nkind = "openai"\nbase_url = "${mock.url}/v1"\nmodel = "mock-model"\n`);
  session = await launchApp({ dataDir: dirs.make("data"), workspace, extraArgs: ["--config", config] });
  await sendAndWait(session, "change every tenth line", "Every tenth line is changed.", 120000);

  const shown = async () => {
    const progress = await session.find("[data-testid=review-progress]");
    return progress && (await progress.attribute("data-total")) === String(FILES * 25) && (await session.find("[data-testid=hunk]"));
  };
  const times = [];
  const diffs = [];
  for (let run = 0; run < 5; run++) {
    await (await session.find("[data-testid=nav-chat]")).click();
    const started = performance.now();
    await (await session.find("[data-testid=nav-changes]")).click();
    await waitFor(() => session.find("[data-testid=changes-turn] [data-testid=diff-view]"), "the diffs", 120000, 10);
    diffs.push(performance.now() - started);
    await waitFor(shown, "the turn's review", 120000, 10);
    times.push(performance.now() - started);
  }
  const rendered = await session.execute("return document.querySelectorAll('[data-testid=hunk]').length;");
  const diffViews = await session.execute("return document.querySelectorAll('[data-testid=changes-turn] [data-testid=diff-view]').length;");
  const first = await session.find("[data-testid=hunk]");
  const id = await first.attribute("data-hunk-id");
  const reject = await timed(async () => {
    await (await session.find(`[data-testid=hunk][data-hunk-id="${id}"] [data-testid=hunk-reject]`)).click();
    await waitFor(async () => (await first.attribute("data-state")) === "rejected", "the reject shown", 60000, 10);
  });
  console.log(
    `window (${process.env.E2E_APP_BINARY}): Changes to a turn of ${FILES} files / ${FILES * 25} hunks shown ` +
      `(${rendered} hunks rendered, the rest as it scrolls; ${diffViews} file diffs): first ${times[0].toFixed(0)} ms (hunks made and stored), ` +
      `again median ${median(times.slice(1)).toFixed(0)} ms (of which the file diffs the view already showed: ` +
      `first ${diffs[0].toFixed(0)} ms, again median ${median(diffs.slice(1)).toFixed(0)} ms); reject one hunk by click until shown ${reject.toFixed(0)} ms`,
  );
  console.log("1 passed, 0 failed");
} catch (err) {
  console.error(err);
  process.exitCode = 1;
} finally {
  await session?.close().catch(() => {});
  await mock.stop();
  dirs.cleanup();
}
