// First run as a new user meets it: no config, so the window opens on Settings by itself. The
// user points it at a model server that requires a key (aimock with AIMOCK_API_KEYS), types the
// key, tests the connection (the server's model list), saves; the key is then in the real OS
// keychain (gnome-keyring over D-Bus, read back with secret-tool), in no file of the data dir,
// the workspace, the config folder or the logs; the chat reaches the model with it, and after a
// restart the app still does.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { startAimock } from "./lib/aimock.mjs";
import { describeWindow, launchApp, screenshot } from "./lib/app.mjs";
import { send, waitUnlessError } from "./lib/chat.mjs";
import { outDir, tempDirs } from "./lib/env.mjs";
import { fatal, waitFor } from "./lib/webdriver.mjs";

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), "fixtures", "llm", "chat.json");
const KEY = "sk-e2e-keychain-7d41c0b2a9";

/** Every file under `dir` whose bytes contain `needle`. */
function filesHolding(dir, needle) {
  const found = [];
  const walk = (d) => {
    for (const name of readdirSync(d)) {
      const path = join(d, name);
      const st = statSync(path, { throwIfNoEntry: false });
      if (!st) continue;
      if (st.isDirectory()) walk(path);
      else if (st.isFile() && readFileSync(path).includes(needle)) found.push(path);
    }
  };
  if (existsSync(dir)) walk(dir);
  return found;
}

async function chat(session, text) {
  await send(session, text);
  return waitUnlessError(session, async () => {
    const answers = await session.findAll("[data-testid=message][data-role=assistant]");
    for (const a of answers) if ((await a.text()).includes("Hello from the mock model")) return a;
    return null;
  }, "the model's answer", 30000);
}

export default async function settings({ log }) {
  const dirs = tempDirs();
  const mock = await startAimock(FIXTURES, join(outDir(), "aimock-settings.log"), { apiKeys: [KEY] });
  let session = null;
  try {
    const workspace = dirs.make("workspace");
    const dataDir = dirs.make("data");
    const configDir = dirs.make("config");
    const config = join(configDir, "config.toml");
    const args = { dataDir, workspace, extraArgs: ["--config", config] };
    const baseUrl = `${mock.url}/v1`;

    session = await launchApp(args);
    await waitFor(() => session.find("[data-testid=settings-first-run]"), "the first-run panel, opened by itself", 15000);
    const shotFirst = await screenshot(session, "first-run.png");
    log(`screenshot ${shotFirst.file}, ${shotFirst.colours} colours`);

    const baseInput = await session.find("[data-testid=settings-base-url]");
    await session.execute("arguments[0].select();", [{ "element-6066-11e4-a52e-4f735466cecf": baseInput.ref }]);
    await baseInput.type(baseUrl);
    await (await session.find("[data-testid=settings-api-key]")).type(KEY);
    await (await session.find("[data-testid=settings-test-connection]")).click();
    const status = await waitFor(async () => {
      const s = await session.find("[data-testid=settings-connection-status]");
      const text = s ? await s.text() : "";
      return text.includes("Connected") || text.includes("rror") || text.includes("401") ? text : null;
    }, "the connection test", 20000);
    assert.match(status, /Connected: \d+ models offered/, status);
    // The server's own list fills the model choice.
    const model = await session.find("select[data-testid=settings-model]");
    assert.ok(model, "the model is chosen from the server's list");
    await (await session.find("[data-testid=settings-context-window]")).type("64000");
    await (await session.find("[data-testid=settings-save]")).click();
    await waitFor(async () => {
      const s = await session.find("[data-testid=settings-status]");
      const text = s ? await s.text() : "";
      if (text && !text.includes("Saved") && !text.includes("Saving")) throw fatal(`save failed: ${text}`);
      return text.includes("Saved");
    }, "the saved settings", 20000);
    const shotSettings = await screenshot(session, "settings.png");
    log(`screenshot ${shotSettings.file}, ${shotSettings.colours} colours`);

    // The key is in the real keychain, under service `bridle`, for this kind and server.
    const stored = execFileSync("secret-tool", ["lookup", "service", "bridle", "username", `openai@${baseUrl}`], {
      encoding: "utf8",
    });
    assert.equal(stored, KEY);
    const configText = readFileSync(config, "utf8");
    assert.match(configText, /base_url = "http:\/\/127\.0\.0\.1:\d+\/v1"/);
    assert.match(configText, /context_window = 64000/);

    await (await session.find("[data-testid=nav-chat]")).click();
    await chat(session, "hello bridle");
    await session.close();
    session = null;

    // A restart: the key comes from the keychain again, with no environment variable.
    session = await launchApp(args);
    assert.equal(await session.find("[data-testid=settings-first-run]"), null, "no first-run panel once configured");
    await chat(session, "hello bridle");
    await (await session.find("[data-testid=nav-settings]")).click();
    const keyField = await waitFor(() => session.find("[data-testid=settings-api-key]"), "the key field", 10000);
    assert.equal(await keyField.property("value"), "", "a stored key is never shown back");
    await session.close();
    session = null;

    // aimock answers only with the key, so both answers prove it reached the server.
    for (const dir of [dataDir, workspace, configDir]) {
      assert.deepEqual(filesHolding(dir, KEY), [], `the key is in no file under ${dir}`);
    }
    // Nor in what the app and WebDriver printed (aimock's own log is the server's, not ours).
    const ours = filesHolding(outDir(), KEY).filter((f) => !f.includes("aimock-"));
    assert.deepEqual(ours, [], "the key is in no log of the app");
  } catch (err) {
    const window = session ? await describeWindow(session, "settings") : "(not started)";
    throw new Error(`${err.message}\nwindow: ${window}`, { cause: err });
  } finally {
    await session?.close().catch(() => {});
    await mock.stop();
    dirs.cleanup();
  }
}
