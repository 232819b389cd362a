// The agent's brief and plan in the real window: the header names the project's AGENTS.md and
// its token cost; the model sets a plan with update_plan and the window shows it as a checklist
// (plan-panel / plan-item with data-status), live and again after the app restarts.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { startAimock } from "./lib/aimock.mjs";
import { describeWindow, launchApp, screenshot } from "./lib/app.mjs";
import { send, waitUnlessError } from "./lib/chat.mjs";
import { outDir, tempDirs } from "./lib/env.mjs";
import { waitFor } from "./lib/webdriver.mjs";

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), "fixtures", "llm", "plan.json");

async function planItems(session) {
  return session.execute(
    "return [...document.querySelectorAll('[data-testid=plan-item]')].map((e) => [e.dataset.status, e.querySelector('.plan-step').innerText]);",
  );
}

export default async function plan({ log }) {
  const dirs = tempDirs();
  const mock = await startAimock(FIXTURES, join(outDir(), "aimock-plan.log"));
  let session = null;
  try {
    const workspace = dirs.make("workspace");
    writeFileSync(join(workspace, "AGENTS.md"), "# Atlas\n\nRun `cargo test -p atlas` before saying done.\n");
    const dataDir = dirs.make("data");
    const config = join(dirs.make("config"), "config.toml");
    writeFileSync(config, `mode = "ask"\n[provider]\nkind = "openai"\nbase_url = "${mock.url}/v1"\nmodel = "mock-model"\n`);
    const args = { dataDir, workspace, extraArgs: ["--config", config] };
    session = await launchApp(args);

    const chip = await waitFor(() => session.find("[data-testid=instruction-files]"), "the instruction files in the header", 15000);
    assert.match(await chip.text(), /^AGENTS\.md · \d+ tokens$/);

    await send(session, "plan the offsets fix");
    await waitUnlessError(session, async () => {
      return (await planItems(session)).length === 3;
    }, "the plan checklist", 30000);
    const expected = [
      ["done", "read the parser"],
      ["in_progress", "fix the offsets"],
      ["pending", "run the tests"],
    ];
    assert.deepEqual(await planItems(session), expected);
    // The model was given the project's instructions.
    const journal = await mock.journal();
    assert.match(journal[0].body.messages[0].content, /Run `cargo test -p atlas` before saying done\./);
    const shot = await screenshot(session, "plan.png");
    log(`screenshot ${shot.file}, ${shot.colours} colours`);
    await session.close();
    session = null;

    // After a restart the session is a new one: open the planned session from Sessions.
    session = await launchApp(args);
    await (await session.find("[data-testid=nav-sessions]")).click();
    const item = await waitFor(async () => {
      for (const e of await session.findAll("[data-testid=session-item]")) {
        const text = await session.execute("return arguments[0].innerText", [{ "element-6066-11e4-a52e-4f735466cecf": e.ref }]);
        if (text.includes("plan the offsets fix")) return e;
      }
      return null;
    }, "the planned session in Sessions", 15000);
    const id = await item.attribute("data-session-id");
    await (await session.find(`[data-testid=session-item][data-session-id="${id}"] .session-open`)).click();
    await waitFor(async () => (await planItems(session)).length === 3, "the plan after the restart", 15000);
    assert.deepEqual(await planItems(session), expected);
  } catch (err) {
    const window = session ? await describeWindow(session, "plan") : "(not started)";
    throw new Error(`${err.message}\nwindow: ${window}`, { cause: err });
  } finally {
    await session?.close().catch(() => {});
    await mock.stop();
    dirs.cleanup();
  }
}
