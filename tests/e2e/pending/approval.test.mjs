// Approval: in `ask` mode a file write waits for a human. The model (aimock) asks for
// write_file; the approval card shows in Chat, the test approves once, the file appears in the
// workspace and the turn ends with the model's answer.
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { startAimock } from "../lib/aimock.mjs";
import { describeWindow, launchApp, screenshot } from "../lib/app.mjs";
import { outDir, tempDirs } from "../lib/env.mjs";
import { fatal, waitFor } from "../lib/webdriver.mjs";

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), "fixtures", "llm");

export default async function approval({ log }) {
  const dirs = tempDirs();
  const mock = await startAimock(FIXTURES, join(outDir(), "aimock-approval.log"));
  let session = null;
  try {
    const workspace = dirs.make("workspace");
    const config = join(dirs.make("config"), "bridle.toml");
    writeFileSync(
      config,
      `mode = "ask"\n[provider]\nkind = "openai"\nbase_url = "${mock.url}/v1"\nmodel = "mock-model"\ncontext_window = 128000\n`,
    );
    session = await launchApp({ dataDir: dirs.make("data"), workspace, extraArgs: ["--config", config] });

    const input = await session.find("[data-testid=chat-input]");
    await input.click();
    await input.type("please write the welcome note");
    await (await session.find("[data-testid=send-button]")).click();

    const card = await waitFor(async () => {
      const alert = await session.find("[role=alert]");
      if (alert) throw fatal(`error banner: ${await alert.text()}`);
      const card = await session.find("[data-testid=approval-card][data-tool=write_file]");
      if (card) return card;
      // A call that already ended never asked: fail now, with what it answered.
      const ended = await session.find("[data-testid=tool-call][data-tool=write_file]:not([data-status=running]):not([data-status=pending])");
      if (ended) throw fatal(`write_file ended "${await ended.attribute("data-status")}" without asking for approval`);
      return null;
    }, "the write_file approval card", 45000);
    const call = await session.find("[data-testid=tool-call][data-tool=write_file]");
    assert.equal(await call.attribute("data-status"), "pending");
    assert.equal(existsSync(join(workspace, "notes", "welcome.txt")), false, "nothing written before approval");
    await screenshot(session, "approval-pending.png");

    await (await session.find("[data-testid=approval-card] [data-testid=approve-once]")).click();
    await waitFor(async () => (await call.attribute("data-status")) === "ok", "write_file to end ok", 30000);
    await waitFor(async () => {
      const texts = await Promise.all((await session.findAll("[data-testid=message][data-role=assistant]")).map((e) => e.text()));
      return texts.some((t) => t.includes("The welcome note is written."));
    }, "the model's final answer", 30000);
    assert.equal(await card.isDisplayed().catch(() => false), false, "the approval card is gone once answered");
    assert.equal(readFileSync(join(workspace, "notes", "welcome.txt"), "utf8"), "Welcome to Bridle\n");

    const shot = await screenshot(session, "approval.png");
    log(`screenshot ${shot.file}, ${shot.colours} colours`);
  } catch (err) {
    const window = session ? await describeWindow(session, "approval") : "(not started)";
    const journal = JSON.stringify(await mock.journal().catch(() => null)).slice(0, 3000);
    throw new Error(`${err.message}\nwindow: ${window}\naimock journal: ${journal}`, { cause: err });
  } finally {
    await session?.close().catch(() => {});
    await mock.stop();
    dirs.cleanup();
  }
}
