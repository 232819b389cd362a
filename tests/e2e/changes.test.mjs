// The Changes and Usage views in the real window: the agent edits a file and the user approves
// it; Changes shows that turn with the file's coloured diff (unified and side by side); "Undo
// turn" puts the file back on disk, byte for byte, and the turn leaves the list; Usage shows the
// turn's tokens as a chart and a row, and their cost from the config's price table.
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { startAimock } from "./lib/aimock.mjs";
import { describeWindow, launchApp, screenshot } from "./lib/app.mjs";
import { send, waitUnlessError } from "./lib/chat.mjs";
import { outDir, tempDirs } from "./lib/env.mjs";
import { waitFor } from "./lib/webdriver.mjs";

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), "fixtures", "llm");

export default async function changes({ log }) {
  const dirs = tempDirs();
  const mock = await startAimock(FIXTURES, join(outDir(), "aimock-changes.log"));
  let session = null;
  try {
    const workspace = dirs.make("workspace");
    writeFileSync(join(workspace, "greeting.txt"), "hello\n");
    const config = join(dirs.make("config"), "bridle.toml");
    writeFileSync(
      config,
      `mode = "ask"\n[provider]\nkind = "openai"\nbase_url = "${mock.url}/v1"\nmodel = "mock-model"\ncontext_window = 128000\n` +
        `[pricing]\ncurrency = "EUR"\n[pricing.models."mock-model"]\ninput = 2000.0\noutput = 8000.0\n`,
    );
    session = await launchApp({ dataDir: dirs.make("data"), workspace, extraArgs: ["--config", config] });
    const input = await send(session, "greet the whole world");
    // The edit waits for the user: approve it in the window.
    const approve = await waitUnlessError(session, async () => {
      return session.find("[data-testid=approval-card] [data-testid=approve-once]");
    }, "the edit's approval card", 30000);
    await approve.click();
    await waitUnlessError(session, async () => {
      const texts = await Promise.all((await session.findAll("[data-testid=message][data-role=assistant]")).map((e) => e.text()));
      return texts.some((t) => t.includes("greets the world"));
    }, "the model's final answer", 30000);
    assert.equal(readFileSync(join(workspace, "greeting.txt"), "utf8"), "hello, world\n");

    await (await session.find("[data-testid=nav-changes]")).click();
    const turn = await waitFor(() => session.find("[data-testid=changes-turn]"), "the turn in Changes", 10000);
    assert.ok(await turn.attribute("data-turn-id"));
    const diff = await session.find('[data-testid=diff-view][data-path="greeting.txt"]');
    assert.ok(diff, "the file's diff is shown");
    const added = await session.find('[data-testid=diff-view][data-path="greeting.txt"] .diff-line.add');
    assert.match(await added.text(), /^\+hello, world/);
    const shot = await screenshot(session, "changes.png");
    log(`screenshot ${shot.file}, ${shot.colours} colours`);
    // Side by side: the old line on the left, the new on the right.
    await (await session.find("[data-testid=diff-layout-split]")).click();
    const cells = await session.execute(
      "return [...document.querySelectorAll('[data-testid=diff-view] .diff-cell')].map((c) => c.className + ':' + c.innerText);",
    );
    assert.ok(cells.includes("diff-cell del:hello") && cells.includes("diff-cell add:hello, world"), JSON.stringify(cells));
    const split = await screenshot(session, "changes-split.png");
    log(`screenshot ${split.file}, ${split.colours} colours`);
    await (await session.find("[data-testid=diff-layout-unified]")).click();

    await (await session.find("[data-testid=undo-turn]")).click();
    await waitFor(
      async () => readFileSync(join(workspace, "greeting.txt"), "utf8") === "hello\n",
      "the file put back on disk",
      10000,
    );
    await waitFor(async () => (await session.find("[data-testid=changes-turn]")) === null, "the turn leaving the list", 10000);
    const after = await screenshot(session, "changes-undone.png");
    log(`screenshot ${after.file}, ${after.colours} colours`);

    // Usage: the turn's tokens, as the provider reported them, in the chart and the table.
    await (await session.find("[data-testid=nav-usage]")).click();
    const chart = await waitFor(() => session.find("[data-testid=usage-chart]"), "the usage chart", 10000);
    assert.ok(chart);
    const rows = await session.findAll("[data-testid=usage-row]");
    assert.equal(rows.length, 1, "one turn, one row");
    assert.match(await rows[0].text(), /^1\D*\d+/, "turn 1 with its input tokens");
    // The price table turns the provider's numbers into the user's currency.
    const cost = await session.find("[data-testid=usage-cost]");
    assert.ok(cost, "the session's cost is shown");
    assert.match(await cost.text(), /€\d/);
    assert.match(await rows[0].text(), /€\d/);
    const usage = await screenshot(session, "usage.png");
    log(`screenshot ${usage.file}, ${usage.colours} colours`);
  } catch (err) {
    const window = session ? await describeWindow(session, "changes") : "(not started)";
    throw new Error(`${err.message}\nwindow: ${window}`, { cause: err });
  } finally {
    await session?.close().catch(() => {});
    await mock.stop();
    dirs.cleanup();
  }
}
