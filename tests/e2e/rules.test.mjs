// The config's rules in the app, and how bash runs: launched with `mode = "auto"` and a deny rule
// for `bash(echo*)`, the model (aimock) asks for `echo hi > denied.txt` and `ls -a`. The echo
// shows as denied and writes nothing; ls runs, its card saying it ran sandboxed (bwrap), as the
// header does. Then the header's mode picker switches the session to plan, and the engine
// confirms it.
import assert from "node:assert/strict";
import { existsSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { startAimock } from "./lib/aimock.mjs";
import { describeWindow, launchApp, screenshot } from "./lib/app.mjs";
import { sendAndWait } from "./lib/chat.mjs";
import { outDir, tempDirs } from "./lib/env.mjs";
import { waitFor } from "./lib/webdriver.mjs";

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), "fixtures", "llm");

export default async function rules({ log }) {
  const dirs = tempDirs();
  const mock = await startAimock(FIXTURES, join(outDir(), "aimock-rules.log"));
  let session = null;
  try {
    const workspace = dirs.make("workspace");
    const config = join(dirs.make("config"), "bridle.toml");
    writeFileSync(
      config,
      `mode = "auto"\n[rules]\ndeny = ["bash(echo*)"]\n` +
        `[provider]\nkind = "openai"\nbase_url = "${mock.url}/v1"\nmodel = "mock-model"\ncontext_window = 128000\n`,
    );
    session = await launchApp({ dataDir: dirs.make("data"), workspace, extraArgs: ["--config", config] });

    const status = await session.waitForElement("[data-testid=sandbox-status]", 20000);
    assert.equal(await status.attribute("data-sandbox"), "bwrap", `header: ${await status.text()}`);
    // The picker shows once the session is open, which may be after the input is.
    assert.equal(await (await session.waitForElement("[data-testid=session-mode]", 30000)).property("value"), "auto");

    await sendAndWait(session, "greet the repo", "ls ran in the sandbox");

    const cards = await session.findAll("[data-testid=tool-call][data-tool=bash]");
    assert.equal(cards.length, 2);
    const statuses = await Promise.all(cards.map((c) => c.attribute("data-status")));
    assert.deepEqual(statuses, ["denied", "ok"], "the echo is denied by the rule, ls runs");
    assert.equal(existsSync(join(workspace, "denied.txt")), false, "the denied command wrote nothing");
    const badge = await session.find("[data-testid=tool-call][data-status=ok] [data-testid=bash-sandbox]");
    assert.ok(badge, "the bash card that ran says how");
    assert.equal(await badge.attribute("data-sandbox"), "bwrap");
    const shot = await screenshot(session, "rules-denied.png");
    log(`screenshot ${shot.file}, ${shot.colours} colours`);

    // The mode picker: plan, confirmed by the engine (the select shows what the engine says).
    await (await session.find("[data-testid=session-mode] option[value=plan]")).click();
    await waitFor(
      async () => (await (await session.find("[data-testid=session-mode]")).property("value")) === "plan",
      "the header to show plan mode",
      10000,
    );
    assert.equal(await (await session.find("[data-testid=sandbox-status]")).attribute("data-sandbox"), "bwrap");
    const plan = await screenshot(session, "rules-plan-mode.png");
    log(`screenshot ${plan.file}, ${plan.colours} colours`);

    // A reloaded window asks the engine again: it still shows the mode in force, not the one
    // the session was opened with.
    await session.execute("location.reload(); return null;");
    await waitFor(
      async () => (await (await session.find("[data-testid=session-mode]"))?.property("value")) === "plan",
      "the reloaded header to show plan mode",
      15000,
    );
    // The switch is on the record as what it is.
    await (await session.find("[data-testid=nav-audit]")).click();
    const changed = await waitFor(
      () => session.find("[data-testid=audit-row][data-kind=mode_changed] td"),
      "a mode_changed audit row",
      15000,
    );
    await changed.click();
    const shown = await (await session.waitForElement("[data-testid=audit-details] [data-testid=audit-payload]", 5000)).text();
    assert.match(shown, /"mode": ?"plan"/, shown);
    const audit = await screenshot(session, "rules-audit-mode-changed.png");
    log(`screenshot ${audit.file}, ${audit.colours} colours`);
  } catch (err) {
    const window = session ? await describeWindow(session, "rules") : "(not started)";
    const journal = JSON.stringify(await mock.journal().catch(() => null)).slice(0, 3000);
    throw new Error(`${err.message}\nwindow: ${window}\naimock journal: ${journal}`, { cause: err });
  } finally {
    await session?.close().catch(() => {});
    await mock.stop();
    dirs.cleanup();
  }
}
