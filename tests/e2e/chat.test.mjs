// Chat: one real turn through the whole stack. The app's engine talks to aimock (an
// OpenAI-compatible mock model, the one thing faked); the test types into the real webview,
// clicks Send and waits for the model's answer to be rendered.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { startAimock } from "./lib/aimock.mjs";
import { describeWindow, launchApp, screenshot } from "./lib/app.mjs";
import { messageTexts, send, waitUnlessError } from "./lib/chat.mjs";
import { outDir, tempDirs } from "./lib/env.mjs";
import { waitFor } from "./lib/webdriver.mjs";

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), "fixtures", "llm");
const PROMPT = "hello bridle";
const ANSWER = "Hello from the mock model";

function configToml(baseUrl) {
  return [
    'mode = "ask"',
    "[provider]",
    'kind = "openai"',
    `base_url = "${baseUrl}/v1"`,
    'model = "mock-model"',
    "context_window = 128000",
    "",
  ].join("\n");
}

/** Texts of the rendered messages with `role`. */
export default async function chat({ log }) {
  const dirs = tempDirs();
  const mock = await startAimock(FIXTURES, join(outDir(), "aimock-chat.log"));
  let session = null;
  try {
    const config = join(dirs.make("config"), "bridle.toml");
    writeFileSync(config, configToml(mock.url));
    session = await launchApp({
      dataDir: dirs.make("data"),
      workspace: dirs.make("workspace"),
      extraArgs: ["--config", config],
    });

    const input = await send(session, PROMPT);

    const answers = await waitUnlessError(session, async () => {
      const texts = await messageTexts(session, "assistant");
      return texts.some((t) => t.includes(ANSWER)) ? texts : null;
    }, `an assistant message containing "${ANSWER}"`, 45000);
    log("assistant:", JSON.stringify(answers));

    const users = await messageTexts(session, "user");
    assert.ok(users.some((t) => t.includes(PROMPT)), `a user message with "${PROMPT}" in ${JSON.stringify(users)}`);
    assert.equal(await input.property("value"), "", "the composer is cleared after sending");
    // The turn ends: Stop goes away and the context meter knows the configured window.
    await waitFor(async () => (await session.find("[data-testid=stop-button]")) === null, "the turn to end");
    const meter = await session.find("[data-testid=context-meter]");
    assert.equal(await meter.attribute("data-window"), "128000");

    // The model saw the user's words: aimock's journal holds the request the engine sent.
    const journal = JSON.stringify(await mock.journal());
    assert.ok(journal.includes(PROMPT), "aimock received the prompt");

    const shot = await screenshot(session, "chat.png");
    log(`screenshot ${shot.file} ${shot.width}x${shot.height}, ${shot.colours} colours`);
  } catch (err) {
    const window = session ? await describeWindow(session, "chat") : "(not started)";
    const journal = JSON.stringify(await mock.journal().catch(() => null)).slice(0, 3000);
    throw new Error(`${err.message}\nwindow: ${window}\naimock journal: ${journal}`, { cause: err });
  } finally {
    await session?.close().catch(() => {});
    await mock.stop();
    dirs.cleanup();
  }
}
