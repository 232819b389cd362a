// Sessions in the real window: a conversation, then a new session (an empty transcript), then the
// first one reopened from the Sessions view shows its whole history from the store; a second
// click deletes the other one, and it is gone from the store (`bridle sessions list` agrees). Each
// listed session says its state and its workspace's branch.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { startAimock } from "./lib/aimock.mjs";
import { describeWindow, launchApp, screenshot } from "./lib/app.mjs";
import { messageTexts, sendAndWait } from "./lib/chat.mjs";
import { outDir, tempDirs } from "./lib/env.mjs";
import { waitFor } from "./lib/webdriver.mjs";

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), "fixtures", "llm", "chat.json");

/** The listed sessions: id and the text the user reads. */
function items(session) {
  return session.execute(
    "return [...document.querySelectorAll('[data-testid=session-item]')].map((e) => ({ id: e.dataset.sessionId, state: e.dataset.state, text: e.innerText }));",
  );
}

export default async function sessions({ log }) {
  const dirs = tempDirs();
  const mock = await startAimock(FIXTURES, join(outDir(), "aimock-sessions.log"));
  let session = null;
  try {
    const workspace = dirs.make("workspace");
    // A checkout: the list names its branch.
    execFileSync("git", ["init", "-q", "-b", "trunk"], { cwd: workspace });
    const dataDir = dirs.make("data");
    const config = join(dirs.make("config"), "config.toml");
    writeFileSync(config, `[provider]\nkind = "openai"\nbase_url = "${mock.url}/v1"\nmodel = "mock-model"\n`);
    session = await launchApp({ dataDir, workspace, extraArgs: ["--config", config] });

    await sendAndWait(session, "hello bridle", "Hello from the mock model");
    // The turn has ended (leaving a running turn would ask first).
    await waitFor(async () => (await (await session.find(".session-header .turn-state")).text()) === "Idle", "the turn's end", 10000);

    // A new session: the transcript is empty.
    await (await session.find("[data-testid=nav-sessions]")).click();
    await (await waitFor(() => session.find("[data-testid=session-new]"), "New session", 10000)).click();
    await waitFor(async () => {
      const chat = await session.find("[data-testid=nav-chat][aria-current=page]");
      return chat && (await session.find(".empty-chat")) && (await session.findAll("[data-testid=message]")).length === 0;
    }, "the chat of the new session, empty", 10000);

    // The first session, reopened from the list, shows its whole history.
    await (await session.find("[data-testid=nav-sessions]")).click();
    const listed = await waitFor(async () => {
      const all = await items(session);
      return all.length === 2 ? all : null;
    }, "two sessions listed", 10000);
    const first = listed.find((i) => i.text.includes("hello bridle"));
    const second = listed.find((i) => !i.text.includes("hello bridle"));
    assert.ok(first && second, JSON.stringify(listed.map((i) => i.text)));
    assert.match(second.text, /shown now/);
    // Both turns ended: each says it is idle, and the branch its workspace is on.
    assert.deepEqual([first.state, second.state], ["idle", "idle"]);
    assert.match(first.text, / · trunk · /);
    const shot = await screenshot(session, "sessions.png");
    log(`screenshot ${shot.file}, ${shot.colours} colours`);
    await (await session.find(`[data-testid=session-item][data-session-id="${first.id}"] .session-open`)).click();
    await waitFor(async () => {
      const user = await messageTexts(session, "user");
      const assistant = await messageTexts(session, "assistant");
      return user.some((t) => t.includes("hello bridle")) && assistant.some((t) => t.includes("Hello from the mock model"));
    }, "the reopened session's history", 15000);
    const header = await (await session.find(".session-header")).text();
    log(`header: ${header.replace(/\s+/g, " ")}`);

    // Delete the other (empty) session: the first click only asks.
    await (await session.find("[data-testid=nav-sessions]")).click();
    const del = `[data-testid=session-item][data-session-id="${second.id}"] [data-testid=session-delete]`;
    await (await waitFor(() => session.find(del), "the delete button", 10000)).click();
    assert.equal((await items(session)).length, 2, "one click does not delete");
    await (await session.find(del)).click();
    await waitFor(async () => (await items(session)).length === 1, "one session left", 10000);
    assert.equal((await items(session))[0].id, first.id);
  } catch (err) {
    const window = session ? await describeWindow(session, "sessions") : "(not started)";
    throw new Error(`${err.message}\nwindow: ${window}`, { cause: err });
  } finally {
    await session?.close().catch(() => {});
    await mock.stop();
    dirs.cleanup();
  }
}
