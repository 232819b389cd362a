// Bash without an OS sandbox: launched with `[sandbox] enabled = false` and `mode = "auto"`, the
// header warns that bash runs unsandboxed and why; `auto` then fails closed and asks before the
// model's `ls -a` (DESIGN 5.1); approved once, the command runs and its card carries the
// warning-coloured "unsandboxed" badge and the note the engine appends to the output. This is the
// only place the warning styles are seen in a real webview (the other tests have bwrap).
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { startAimock } from "./lib/aimock.mjs";
import { describeWindow, launchApp, screenshot } from "./lib/app.mjs";
import { send, waitUnlessError } from "./lib/chat.mjs";
import { outDir, tempDirs } from "./lib/env.mjs";
import { fatal, waitFor } from "./lib/webdriver.mjs";

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), "fixtures", "llm");
const CARD = "[data-testid=tool-call][data-tool=bash]";

export default async function unsandboxed({ log }) {
  const dirs = tempDirs();
  const mock = await startAimock(FIXTURES, join(outDir(), "aimock-unsandboxed.log"));
  let session = null;
  try {
    const workspace = dirs.make("workspace");
    const config = join(dirs.make("config"), "bridle.toml");
    writeFileSync(
      config,
      `mode = "auto"\n[sandbox]\nenabled = false\n` +
        `[provider]\nkind = "openai"\nbase_url = "${mock.url}/v1"\nmodel = "mock-model"\ncontext_window = 128000\n`,
    );
    session = await launchApp({ dataDir: dirs.make("data"), workspace, extraArgs: ["--config", config] });

    const status = await session.waitForElement("[data-testid=sandbox-status]", 20000);
    assert.equal(await status.attribute("data-sandbox"), "none");
    const warning = await status.text();
    assert.match(warning, /^bash: unsandboxed/, `header: ${warning}`);
    assert.match(await status.attribute("title"), /enabled = false/, "the reason is in the title");

    await send(session, "list the workspace unsandboxed");
    await waitUnlessError(session, async () => {
      if (await session.find(`${CARD} [data-testid=approval-card]`)) return true;
      const ended = await session.find(`${CARD}:not([data-status=running]):not([data-status=pending])`);
      if (ended) throw fatal(`bash ended "${await ended.attribute("data-status")}" without asking (auto must fail closed)`);
      return false;
    }, "the bash approval card", 45000);
    await (await session.find(`${CARD} [data-testid=approve-once]`)).click();

    await waitFor(async () => {
      const texts = await Promise.all((await session.findAll("[data-testid=message][data-role=assistant]")).map((e) => e.text()));
      return texts.some((t) => t.includes("ls ran without a sandbox"));
    }, "the model's final answer", 30000);
    const card = await session.find(CARD);
    assert.equal(await card.attribute("data-status"), "ok");
    const badge = await session.find(`${CARD} [data-testid=bash-sandbox]`);
    assert.ok(badge, "the bash card says how it ran");
    assert.equal(await badge.attribute("data-sandbox"), "none");
    assert.equal(await badge.text(), "unsandboxed");

    // The output, opened, ends with the engine's note, so the model and the user both see it.
    await (await session.find(`${CARD} .tool-call-head`)).click();
    const output = await waitFor(async () => {
      const blocks = await session.findAll(`${CARD} .tool-call-body pre`);
      return blocks.length > 0 ? blocks[blocks.length - 1] : null;
    }, "the expanded bash output", 5000);
    assert.match(await output.text(), /\[note: ran without an OS sandbox: .*enabled = false/);

    const shot = await screenshot(session, "unsandboxed.png");
    log(`screenshot ${shot.file}, ${shot.colours} colours`);
  } catch (err) {
    const window = session ? await describeWindow(session, "unsandboxed") : "(not started)";
    const journal = JSON.stringify(await mock.journal().catch(() => null)).slice(0, 3000);
    throw new Error(`${err.message}\nwindow: ${window}\naimock journal: ${journal}`, { cause: err });
  } finally {
    await session?.close().catch(() => {});
    await mock.stop();
    dirs.cleanup();
  }
}
