// Reviewing a turn hunk by hunk in the real window (DESIGN §10.1, issue 40): the agent edits
// f.py three times and runs a captured `sed -i` on g.txt; Changes shows the turn's four hunks with
// their calls; one is rejected by click and one by keyboard (focus, `r`), another kept with `k`;
// the files on disk hold exactly the content before for those lines and the user's own edit made
// after the turn stays; the next request to the model carries one note naming both rejects.
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { startAimock } from "./lib/aimock.mjs";
import { describeWindow, launchApp, screenshot } from "./lib/app.mjs";
import { sendAndWait } from "./lib/chat.mjs";
import { outDir, tempDirs } from "./lib/env.mjs";
import { waitFor } from "./lib/webdriver.mjs";

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), "fixtures", "llm");
const NAMES = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "thirteen",
  "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"];

/** The hunks shown, as `{id, state, path}`, in order. */
async function hunks(session) {
  return session.execute(
    "return [...document.querySelectorAll('[data-testid=hunk]')].map((h) => ({id: h.dataset.hunkId, state: h.dataset.state, path: h.dataset.path}));",
  );
}

async function waitState(session, id, state) {
  return waitFor(
    async () => (await hunks(session)).find((h) => h.id === id)?.state === state,
    `hunk ${id} ${state}`,
    10000,
  );
}

export default async function review({ log }) {
  const dirs = tempDirs();
  const mock = await startAimock(FIXTURES, join(outDir(), "aimock-review.log"));
  let session = null;
  try {
    const workspace = dirs.make("workspace");
    const before = NAMES.map((n, i) => `${n} = ${i + 1}\n`).join("");
    writeFileSync(join(workspace, "f.py"), before);
    writeFileSync(join(workspace, "g.txt"), "keep\nold line\nkeep too\n");
    const config = join(dirs.make("config"), "bridle.toml");
    writeFileSync(
      config,
      `mode = "auto"\n[provider]\nkind = "openai"\nbase_url = "${mock.url}/v1"\nmodel = "mock-model"\ncontext_window = 128000\n`,
    );
    session = await launchApp({ dataDir: dirs.make("data"), workspace, extraArgs: ["--config", config] });
    await sendAndWait(session, "review the hunks of this turn", "The file is tidied.");
    assert.equal(readFileSync(join(workspace, "g.txt"), "utf8"), "keep\nnew line\nkeep too\n", "the sed landed");
    // The user edits a line of their own after the turn: never shown as the agent's.
    const turnLeft = readFileSync(join(workspace, "f.py"), "utf8");
    writeFileSync(join(workspace, "f.py"), turnLeft.replace("twenty = 20\n", "twenty = 200\n"));

    await (await session.find("[data-testid=nav-changes]")).click();
    await waitFor(async () => (await hunks(session)).length === 4, "the turn's four hunks", 15000);
    const shown = await hunks(session);
    assert.deepEqual(
      shown.map((h) => [h.path, h.state]),
      [["f.py", "pending"], ["f.py", "pending"], ["f.py", "pending"], ["g.txt", "pending"]],
    );
    const sedCard = await session.find(`[data-testid=hunk][data-hunk-id="${shown[3].id}"]`);
    assert.match(await sedCard.text(), /bash sed -i 's\/old\/new\/' g\.txt/);
    assert.match(await (await session.find("[data-testid=review-progress]")).text(), /0 of 4 hunks reviewed/);

    // Reject the second hunk of f.py by click.
    await (await session.find(`[data-testid=hunk][data-hunk-id="${shown[1].id}"] [data-testid=hunk-reject]`)).click();
    await waitState(session, shown[1].id, "rejected");
    const expected = before
      .replace("three = 3\n", "three = 33\n")
      .replace("fifteen = 15\n", "fifteen = 1515\n")
      .replace("twenty = 20\n", "twenty = 200\n");
    assert.equal(readFileSync(join(workspace, "f.py"), "utf8"), expected);

    // Keep the first by keyboard, jump on with j, reject the sed's hunk with r.
    const first = await session.find(`[data-testid=hunk][data-hunk-id="${shown[0].id}"]`);
    await first.click();
    await first.type("k");
    await waitState(session, shown[0].id, "kept");
    const third = await session.find(`[data-testid=hunk][data-hunk-id="${shown[2].id}"]`);
    await third.click();
    await third.type("j");
    const sed = await session.find(`[data-testid=hunk][data-hunk-id="${shown[3].id}"]`);
    await sed.type("r");
    await waitState(session, shown[3].id, "rejected");
    assert.equal(readFileSync(join(workspace, "g.txt"), "utf8"), "keep\nold line\nkeep too\n");
    assert.match(await (await session.find("[data-testid=review-progress]")).text(), /3 of 4 hunks reviewed/);
    const shot = await screenshot(session, "review.png");
    log(`screenshot ${shot.file}, ${shot.colours} colours`);

    // The next message: the model's request holds one note naming both rejected hunks.
    await (await session.find("[data-testid=nav-chat]")).click();
    await sendAndWait(session, "after the review", "Noted the rejected hunks.");
    const journal = await mock.journal();
    const last = journal.filter((e) => JSON.stringify(e.body).includes("after the review")).at(-1);
    const notes = last.body.messages
      .filter((m) => m.role === "user" && typeof m.content === "string")
      .map((m) => m.content)
      .filter((c) => c.startsWith("[Bridle] The user reviewed your changes"));
    assert.equal(notes.length, 1, JSON.stringify(notes));
    assert.match(notes[0], /- f\.py: line 9 \(as your turn left the file\), made by edit_file/);
    assert.match(notes[0], /- g\.txt: line 2 \(as your turn left the file\), made by bash/);
  } catch (err) {
    const window = session ? await describeWindow(session, "review") : "(not started)";
    throw new Error(`${err.message}\nwindow: ${window}`, { cause: err });
  } finally {
    await session?.close().catch(() => {});
    await mock.stop();
    dirs.cleanup();
  }
}
