// Assistant markdown in the real window, under the app's strict CSP: bold, lists and inline code
// render, the Rust block is highlighted (class names only), raw HTML stays text and a link is
// shown with its address but is not a link.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { startAimock } from "./lib/aimock.mjs";
import { describeWindow, launchApp, screenshot } from "./lib/app.mjs";
import { send, waitUnlessError } from "./lib/chat.mjs";
import { outDir, tempDirs } from "./lib/env.mjs";

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), "fixtures", "llm");
const BUBBLE = "[data-testid=message][data-role=assistant] [data-testid=markdown]";

export default async function markdown({ log }) {
  const dirs = tempDirs();
  const mock = await startAimock(FIXTURES, join(outDir(), "aimock-markdown.log"));
  let session = null;
  try {
    const config = join(dirs.make("config"), "bridle.toml");
    writeFileSync(
      config,
      `mode = "auto"\n[provider]\nkind = "openai"\nbase_url = "${mock.url}/v1"\nmodel = "mock-model"\ncontext_window = 128000\n`,
    );
    session = await launchApp({ dataDir: dirs.make("data"), workspace: dirs.make("workspace"), extraArgs: ["--config", config] });
    await send(session, "describe the project in markdown");
    await waitUnlessError(session, async () => {
      return session.find(`${BUBBLE} pre code .hljs-keyword`);
    }, "the highlighted code block", 30000);
    assert.equal(await (await session.find(`${BUBBLE} strong`)).text(), "Project Atlas");
    assert.equal((await session.findAll(`${BUBBLE} li`)).length, 2);
    assert.equal(await session.find(`${BUBBLE} b`), null, "raw HTML is not markup");
    assert.equal(await session.find(`${BUBBLE} a`), null, "a link is not followable");
    assert.match(await (await session.find(BUBBLE)).text(), /<b>not bold<\/b>/);
    const shot = await screenshot(session, "markdown.png");
    log(`screenshot ${shot.file}, ${shot.colours} colours`);
  } catch (err) {
    const window = session ? await describeWindow(session, "markdown") : "(not started)";
    throw new Error(`${err.message}\nwindow: ${window}`, { cause: err });
  } finally {
    await session?.close().catch(() => {});
    await mock.stop();
    dirs.cleanup();
  }
}
