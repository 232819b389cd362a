// Slash commands in the real window (issue 42): the composer completes `/sk` to `/skills` (and
// lists a skill of the config's folder beside the built-ins), `/skills` lists the skills found,
// `/compact` compacts the conversation and `/mode plan` switches the mode, each said in the
// transcript without a turn; Settings lists the skill with its source and trust.
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { startAimock } from "./lib/aimock.mjs";
import { describeWindow, launchApp, screenshot } from "./lib/app.mjs";
import { send, sendAndWait, waitUnlessError } from "./lib/chat.mjs";
import { outDir, tempDirs } from "./lib/env.mjs";
import { waitFor } from "./lib/webdriver.mjs";

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), "fixtures", "llm", "skills.json");
const TAB = "\uE004";

async function notices(session) {
  return session.execute("return [...document.querySelectorAll('[data-testid=notice]')].map((e) => e.innerText);");
}

function waitNotice(session, pattern, what) {
  return waitUnlessError(session, async () => (await notices(session)).find((t) => pattern.test(t)) ?? null, what, 30000);
}

export default async function skills({ log }) {
  const dirs = tempDirs();
  const mock = await startAimock(FIXTURES, join(outDir(), "aimock-skills.log"));
  let session = null;
  try {
    const workspace = dirs.make("workspace");
    const skillsDir = dirs.make("team-skills");
    mkdirSync(join(skillsDir, "sketch"));
    writeFileSync(join(skillsDir, "sketch", "SKILL.md"), "---\nname: sketch\ndescription: Sketches a plan before coding.\n---\nSKETCH-BODY\n");
    const dataDir = dirs.make("data");
    const config = join(dirs.make("config"), "config.toml");
    writeFileSync(
      config,
      `mode = "ask"\n[provider]\nkind = "openai"\nbase_url = "${mock.url}/v1"\nmodel = "mock-model"\ncontext_window = 200000\n` +
        `[compaction]\nkeep_user_messages = 1\n[skills]\npaths = ["${skillsDir}"]\n`,
    );
    session = await launchApp({ dataDir, workspace, extraArgs: ["--config", config] });
    for (const [said, reply] of [["turn one", "Reply one"], ["turn two", "Reply two"], ["turn three", "Reply three"]]) {
      await sendAndWait(session, said, reply);
    }

    // `/sk` offers the commands starting so; Tab completes the first, /skills.
    const input = await session.find("[data-testid=chat-input]");
    await input.click();
    await input.type("/sk");
    const offered = await waitFor(async () => {
      const names = await session.execute(
        "return [...document.querySelectorAll('[data-testid=command-suggestion]')].map((e) => e.dataset.name);",
      );
      return names.length > 0 ? names : null;
    }, "the command suggestions", 10000);
    assert.deepEqual(offered, ["skills", "sketch"]);
    const shot = await screenshot(session, "skills-completion.png");
    log(`screenshot ${shot.file}, ${shot.colours} colours`);
    await input.type(TAB);
    await waitFor(async () => (await input.property("value")) === "/skills", "the input completed to /skills", 5000);
    await (await session.find("[data-testid=send-button]")).click();
    await waitNotice(session, /sketch \(config\): trusted/, "the /skills listing");

    await send(session, "/compact");
    const compacted = await waitNotice(session, /^Compacted: \d+ -> \d+ tokens\.$/, "the /compact result");
    log(compacted);

    await send(session, "/mode plan");
    await waitNotice(session, /^Mode: plan\.$/, "the /mode result");
    const mode = await session.find("[data-testid=session-mode]");
    assert.equal(await mode.property("value"), "plan");
    const roles = await session.execute(
      "return [...document.querySelectorAll('[data-testid=message][data-role=assistant]')].length;",
    );
    assert.equal(roles, 3, "the commands started no turn");
    const after = await screenshot(session, "skills-commands.png");
    log(`screenshot ${after.file}, ${after.colours} colours`);
    // Settings lists the skill found, its source and trust.
    await (await session.find("[data-testid=nav-settings]")).click();
    const row = await waitFor(() => session.find("[data-testid=skill-row][data-name=sketch]"), "the skill in Settings", 15000);
    assert.equal(await row.attribute("data-source"), "config");
    assert.equal(await row.attribute("data-trusted"), "true");
    await session.execute("document.querySelector('[data-testid=settings-skills]').scrollIntoView()");
    const listed = await screenshot(session, "skills-settings.png");
    log(`screenshot ${listed.file}, ${listed.colours} colours`);
    // The summary request went to the model: /compact ran a real compaction.
    const journal = await mock.journal();
    assert.ok(journal.some((r) => JSON.stringify(r.body).includes("You compact a coding agent")));
  } catch (err) {
    // Whether the model was asked at all tells a turn that never left the engine from one that
    // left and was not answered.
    const window = session ? await describeWindow(session, "skills") : "(not started)";
    const asked = await mock.journal().then((j) => j.length, (e) => `unknown (${e.message})`);
    throw new Error(`${err.message}\nwindow: ${window}\nrequests aimock received: ${asked}`, { cause: err });
  } finally {
    await session?.close().catch(() => {});
    await mock.stop();
    dirs.cleanup();
  }
}
