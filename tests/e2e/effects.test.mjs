// The shell's effects in the window (DESIGN §4.3, §11): in `review` a sandboxed command runs at
// once and what it changed waits as a diff. The model (aimock) runs `sed -i`; the held change is
// an approval card of kind `effects` with the diff, nothing is written before the answer; the
// test approves, the file changes, the bash card shows the change (`bash-changes`, one
// `diff-view` for the file), the Changes view holds it, and undoing the turn puts the file back.
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { startAimock } from "./lib/aimock.mjs";
import { launchApp, screenshot } from "./lib/app.mjs";
import { send, waitUnlessError } from "./lib/chat.mjs";
import { outDir, tempDirs } from "./lib/env.mjs";
import { waitFor } from "./lib/webdriver.mjs";

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), "fixtures", "llm");

export default async function effects({ log }) {
  const dirs = tempDirs();
  const mock = await startAimock(FIXTURES, join(outDir(), "aimock-effects.log"));
  let session = null;
  try {
    const workspace = dirs.make("workspace");
    writeFileSync(join(workspace, "notes.txt"), "old line\nkept\n");
    const config = join(dirs.make("config"), "bridle.toml");
    writeFileSync(
      config,
      `mode = "review"\n[provider]\nkind = "openai"\nbase_url = "${mock.url}/v1"\nmodel = "mock-model"\ncontext_window = 128000\n`,
    );
    session = await launchApp({ dataDir: dirs.make("data"), workspace, extraArgs: ["--config", config] });
    // The picker shows once the session is open, which may be after the input is.
    assert.equal(await (await session.waitForElement("[data-testid=session-mode]", 30000)).property("value"), "review");

    await send(session, "fix the line with sed");
    const card = await waitUnlessError(
      session,
      () => session.find("[data-testid=approval-card][data-kind=effects]"),
      "the held change's approval card",
      45000,
    );
    assert.match(await card.text(), /sed -i/);
    const preview = await session.find("[data-testid=approval-card][data-kind=effects] [data-testid=approval-preview]");
    assert.match(await preview.text(), /new line/);
    assert.equal(readFileSync(join(workspace, "notes.txt"), "utf8"), "old line\nkept\n", "nothing lands before the answer");
    const held = await screenshot(session, "effects-held.png");
    log(`screenshot ${held.file}, ${held.colours} colours`);

    await (await session.find("[data-testid=approval-card][data-kind=effects] [data-testid=approve-once]")).click();
    const call = await session.find("[data-testid=tool-call][data-tool=bash]");
    await waitFor(async () => (await call.attribute("data-status")) === "ok", "bash to end ok", 30000);
    assert.equal(readFileSync(join(workspace, "notes.txt"), "utf8"), "new line\nkept\n");
    const changes = await session.waitForElement("[data-testid=bash-changes][data-captured=true]", 10000);
    const views = await session.findAll("[data-testid=bash-changes] [data-testid=diff-view]");
    assert.equal(views.length, 1);
    assert.equal(await views[0].attribute("data-path"), "notes.txt");
    assert.match(await changes.text(), /notes\.txt/);
    const landed = await screenshot(session, "effects-landed.png");
    log(`screenshot ${landed.file}, ${landed.colours} colours`);

    // The Changes view holds the command's change like an edit's, and undoing the turn puts the
    // file back.
    await (await session.find("[data-testid=nav-changes]")).click();
    await waitFor(() => session.find("section[aria-label=Changes] [data-testid=changes-turn]"), "the turn in Changes", 10000);
    const added = await session.find('section[aria-label=Changes] [data-testid=diff-view][data-path="notes.txt"] .diff-line.add');
    assert.match(await added.text(), /^\+new line/);
    await (await session.find("[data-testid=undo-turn]")).click();
    await waitFor(
      async () => readFileSync(join(workspace, "notes.txt"), "utf8") === "old line\nkept\n",
      "the command's change undone on disk",
      10000,
    );
  } finally {
    await session?.close().catch(() => {});
    await mock.stop();
    dirs.cleanup();
  }
}
