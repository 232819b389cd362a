// A broken model stream in the real window: aimock cuts the first answer after a few chunks; the
// window shows the partial text, then drops it and says "reconnecting (2/5)" while the engine
// waits to retry, then shows the retried answer once — never the two run together.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { startAimock } from "./lib/aimock.mjs";
import { describeWindow, launchApp, screenshot } from "./lib/app.mjs";
import { send, waitUnlessError } from "./lib/chat.mjs";
import { outDir, tempDirs } from "./lib/env.mjs";
import { waitFor } from "./lib/webdriver.mjs";

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), "fixtures", "llm");
const ANSWER = "Streams can break in the middle of an answer; when they do, Bridle starts the answer over and shows it only once.";

export default async function streams({ log }) {
  const dirs = tempDirs();
  const mock = await startAimock(FIXTURES, join(outDir(), "aimock-streams.log"));
  let session = null;
  const assistantTexts = async () =>
    Promise.all((await session.findAll("[data-testid=message][data-role=assistant] .message-text")).map((e) => e.text()));
  try {
    const config = join(dirs.make("config"), "bridle.toml");
    writeFileSync(
      config,
      `mode = "auto"\n[provider]\nkind = "openai"\nbase_url = "${mock.url}/v1"\nmodel = "mock-model"\ncontext_window = 128000\n`,
    );
    session = await launchApp({ dataDir: dirs.make("data"), workspace: dirs.make("workspace"), extraArgs: ["--config", config] });
    await send(session, "explain broken streams");

    // The first attempt streams a little before it breaks.
    await waitUnlessError(session, async () => {
      return (await assistantTexts()).some((t) => t.length > 0);
    }, "the first attempt's partial text", 30000);

    // Then the partial text goes and the header says it is reconnecting.
    const status = await waitFor(() => session.find("[data-testid=reconnecting]"), "the reconnecting status", 15000);
    assert.equal(await status.text(), "reconnecting (2/5)");
    assert.deepEqual(await assistantTexts(), [], "the broken attempt's text is dropped");
    const mid = await screenshot(session, "streams-reconnecting.png");
    log(`screenshot ${mid.file}, ${mid.colours} colours`);

    // The retried answer arrives once, whole.
    await waitFor(async () => (await assistantTexts()).some((t) => t.includes("only once.")), "the retried answer", 30000);
    const texts = await assistantTexts();
    assert.equal(texts.length, 1, `one assistant message: ${JSON.stringify(texts)}`);
    assert.equal(texts[0], ANSWER, "the retried answer, once, not run together with the broken one");
    assert.equal(await session.find("[data-testid=reconnecting]"), null, "no longer reconnecting");
    const shot = await screenshot(session, "streams.png");
    log(`screenshot ${shot.file}, ${shot.colours} colours`);
  } catch (err) {
    const window = session ? await describeWindow(session, "streams") : "(not started)";
    throw new Error(`${err.message}\nwindow: ${window}`, { cause: err });
  } finally {
    await session?.close().catch(() => {});
    await mock.stop();
    dirs.cleanup();
  }
}
