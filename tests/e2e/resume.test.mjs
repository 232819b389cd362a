// A session reopened after the app was closed mid-turn: the write waits for approval, the app is
// closed, and when it starts again on the same data dir and workspace the window shows the
// whole conversation from the store (`session_snapshot`) — the user's message, the waiting call
// — not an empty transcript; approving then writes the file.
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { startAimock } from "./lib/aimock.mjs";
import { describeWindow, launchApp, screenshot } from "./lib/app.mjs";
import { send, waitUnlessError } from "./lib/chat.mjs";
import { outDir, tempDirs } from "./lib/env.mjs";
import { waitFor } from "./lib/webdriver.mjs";

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), "fixtures", "llm");
const CARD = "[data-testid=approval-card][data-tool=write_file]";

export default async function resume({ log }) {
  const dirs = tempDirs();
  const mock = await startAimock(FIXTURES, join(outDir(), "aimock-resume.log"));
  let session = null;
  try {
    const workspace = dirs.make("workspace");
    const dataDir = dirs.make("data");
    const config = join(dirs.make("config"), "bridle.toml");
    writeFileSync(
      config,
      `mode = "ask"\n[provider]\nkind = "openai"\nbase_url = "${mock.url}/v1"\nmodel = "mock-model"\ncontext_window = 128000\n`,
    );
    session = await launchApp({ dataDir, workspace, extraArgs: ["--config", config] });
    await send(session, "please write the welcome note");
    await waitUnlessError(session, async () => {
      return session.find(CARD);
    }, "the write_file approval card", 45000);
    await session.close();
    session = null;

    // The same session, opened again.
    session = await launchApp({ dataDir, workspace, extraArgs: ["--config", config] });
    await waitFor(async () => {
      const texts = await Promise.all((await session.findAll("[data-testid=message][data-role=user]")).map((e) => e.text()));
      return texts.some((t) => t.includes("please write the welcome note"));
    }, "the user's message from before the restart", 20000);
    const card = await waitFor(() => session.find(CARD), "the waiting approval card", 20000);
    const shot = await screenshot(session, "resumed.png");
    log(`screenshot ${shot.file}, ${shot.colours} colours`);
    assert.ok(card);
    await (await session.find(`${CARD} [data-testid=approve-once]`)).click();
    await waitFor(() => existsSync(join(workspace, "notes", "welcome.txt")), "the approved write", 30000);
    assert.equal(readFileSync(join(workspace, "notes", "welcome.txt"), "utf8"), "Welcome to Bridle\n");
  } catch (err) {
    const window = session ? await describeWindow(session, "resume") : "(not started)";
    throw new Error(`${err.message}\nwindow: ${window}`, { cause: err });
  } finally {
    await session?.close().catch(() => {});
    await mock.stop();
    dirs.cleanup();
  }
}
