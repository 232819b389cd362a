// A Landlock session's chip (DESIGN 5.1): launched with `backend = "landlock"`, the header says
// bash runs sandboxed by Landlock, that it is partial (what it does not hold is in the tooltip)
// and that home is hidden (what of it is visible is in the tooltip and `data-home`). Then
// `enabled = false`: the chip is red. Both windows are saved as screenshots to be looked at.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { startAimock } from "./lib/aimock.mjs";
import { describeWindow, launchApp, screenshot } from "./lib/app.mjs";
import { outDir, tempDirs } from "./lib/env.mjs";

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), "fixtures", "llm");

async function chip(dirs, mock, sandbox) {
  const config = join(dirs.make("config"), "bridle.toml");
  writeFileSync(
    config,
    `mode = "auto"\n[sandbox]\n${sandbox}\n` +
      `[provider]\nkind = "openai"\nbase_url = "${mock.url}/v1"\nmodel = "mock-model"\ncontext_window = 128000\n`,
  );
  const session = await launchApp({ dataDir: dirs.make("data"), workspace: dirs.make("workspace"), extraArgs: ["--config", config] });
  const status = await session.waitForElement("[data-testid=sandbox-status]", 20000);
  const colour = await session.execute(
    "return getComputedStyle(document.querySelector('[data-testid=sandbox-status]')).color;",
  );
  return { session, status, colour };
}

export default async function landlock({ log }) {
  const dirs = tempDirs();
  const mock = await startAimock(FIXTURES, join(outDir(), "aimock-landlock.log"));
  let session = null;
  try {
    let shown = await chip(dirs, mock, `backend = "landlock"`);
    session = shown.session;
    const { status } = shown;
    assert.equal(await status.attribute("data-sandbox"), "landlock");
    assert.equal(await status.attribute("data-partial"), "true");
    const text = await status.text();
    assert.match(text, /^bash: sandboxed \(landlock\) · partial · home hidden$/, `header: ${text}`);
    assert.match(await status.attribute("data-home"), /^home is hidden/);
    const title = await status.attribute("title");
    assert.match(title, /Landlock shares \/tmp/, `title: ${title}`);
    assert.match(title, /home is hidden/, `title: ${title}`);
    const shot = await screenshot(session, "landlock-chip.png");
    log(`screenshot ${shot.file}, ${shot.colours} colours; chip "${text}" in ${shown.colour}`);
    await session.close();

    shown = await chip(dirs, mock, "enabled = false");
    session = shown.session;
    assert.equal(await shown.status.attribute("data-sandbox"), "none");
    const [r, g, b] = shown.colour.match(/\d+/g).map(Number);
    assert.ok(r > 180 && g < 140 && b < 140, `the unsandboxed chip is red, not ${shown.colour}`);
    const red = await screenshot(session, "unsandboxed-chip.png");
    log(`screenshot ${red.file}, ${red.colours} colours; unsandboxed chip in ${shown.colour}`);
  } catch (err) {
    const window = session ? await describeWindow(session, "landlock") : "(not started)";
    throw new Error(`${err.message}\nwindow: ${window}`, { cause: err });
  } finally {
    await session?.close().catch(() => {});
    await mock.stop();
    dirs.cleanup();
  }
}
