// Approval: in `ask` mode a file write waits for a human. The model (aimock) asks for
// write_file; the approval card shows in Chat and in the Approvals view (with the diff it would
// make), the test approves once in Chat, the file appears in the workspace, the turn ends with the
// model's answer, and the Audit view lists the approval as resolved with `allow`.
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { startAimock } from "./lib/aimock.mjs";
import { describeWindow, launchApp, screenshot } from "./lib/app.mjs";
import { send, waitUnlessError } from "./lib/chat.mjs";
import { outDir, tempDirs } from "./lib/env.mjs";
import { fatal, waitFor } from "./lib/webdriver.mjs";

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), "fixtures", "llm");
/** The Approvals view; Chat stays mounted (hidden) with the same cards inline. */
const APPROVALS_VIEW = "section[aria-label=Approvals]";

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
    const dataDir = dirs.make("data");
    session = await launchApp({ dataDir, workspace, extraArgs: ["--config", config] });

    await send(session, "please write the welcome note");

    const card = await waitUnlessError(session, async () => {
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

    // The Approvals view shows the same request, with its preview and time left, and the nav counts it.
    await (await session.find("[data-testid=nav-approvals]")).click();
    const listed = await session.waitForElement(`${APPROVALS_VIEW} [data-testid=approval-card][data-tool=write_file]`, 10000);
    assert.match(await (await session.find("[data-testid=nav-approvals]")).text(), /1/);
    const preview = await session.find(`${APPROVALS_VIEW} [data-testid=approval-preview]`);
    assert.ok(preview, "the Approvals view shows the diff preview");
    assert.match(await preview.text(), /\+Welcome to Bridle/);
    assert.match(await (await session.find(`${APPROVALS_VIEW} [data-testid=approval-expiry]`)).text(), /expires in \d+:\d\d/);
    assert.match(await (await session.find(`${APPROVALS_VIEW} [data-testid=approval-arguments]`)).property("value"), /"path": "notes\/welcome.txt"/);
    assert.equal(await listed.isDisplayed(), true);
    await screenshot(session, "approvals-view.png");
    await (await session.find("[data-testid=nav-chat]")).click();

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

    // Nothing waits any more; the audit log has the approval, resolved as allow by the user.
    await (await session.find("[data-testid=nav-approvals]")).click();
    await session.waitForElement(`${APPROVALS_VIEW}`, 10000);
    assert.equal(await session.find(`${APPROVALS_VIEW} [data-testid=approval-card]`), null, "no request left in Approvals");
    await (await session.find("[data-testid=nav-audit]")).click();
    await waitFor(
      () => session.find("[data-testid=audit-row][data-kind=approval_resolved][data-decision=allow]"),
      "an approval_resolved audit row with decision allow",
      20000,
    );
    const kinds = await Promise.all((await session.findAll("[data-testid=audit-row]")).map((r) => r.attribute("data-kind")));
    log("audit kinds (newest first):", kinds.join(" "));
    for (const kind of ["approval_requested", "guard_decision", "tool_completed", "file_changed"]) {
      assert.ok(kinds.includes(kind), `an audit row of kind ${kind} in ${kinds.join(",")}`);
    }
    const asked = await session.find("[data-testid=audit-row][data-kind=guard_decision][data-decision=ask]");
    assert.ok(asked, "the guard's ask decision is in the audit log");
    // A row's cell, not the <tr>: WebKitWebDriver calls a table row not interactable.
    await (await session.find("[data-testid=audit-row][data-kind=approval_resolved][data-decision=allow] td")).click();
    const payload = await (await session.waitForElement("[data-testid=audit-details] [data-testid=audit-payload]", 5000)).text();
    assert.match(payload, /approveOnce/);
    // The columns' widths, by header: all but Kind are set, and stay whatever rows are shown
    // (the details pane, open from here on, takes its share of the width).
    const widths = () =>
      session.execute(`return Object.fromEntries([...document.querySelectorAll('.audit-table th')]
        .filter((th) => th.textContent !== 'Kind')
        .map((th) => [th.textContent, Math.round(th.getBoundingClientRect().width)]))`);
    const withRows = await widths();
    const audit = await screenshot(session, "audit.png");
    log(`screenshot ${audit.file}, ${audit.colours} colours`);

    // Export writes the log as JSON lines into the data dir and shows the path.
    await (await session.find("[data-testid=audit-export]")).click();
    const exported = await (await session.waitForElement("[data-testid=audit-export-path]", 10000)).text();
    assert.ok(exported.startsWith(dataDir), `export path ${exported} is in the data dir ${dataDir}`);
    const lines = readFileSync(exported, "utf8").trim().split("\n").map((l) => JSON.parse(l));
    assert.ok(lines.some((l) => l.kind === "approval_resolved" && l.decision === "allow"), "the export holds the approval");

    // Search goes to the engine: the approval's answer finds its rows, nonsense finds none.
    const search = await session.find("[data-testid=audit-search]");
    await search.click();
    const before = (await session.findAll("[data-testid=audit-row]")).length;
    await search.type("approveOnce");
    const found = await waitFor(async () => {
      const n = (await session.findAll("[data-testid=audit-row]")).length;
      return n > 0 && n < before && n;
    }, "the search to keep the approval's rows only", 10000);
    assert.deepEqual(await widths(), withRows, `the columns keep their widths with ${found} of ${before} rows shown`);
    await search.clear();
    await search.type("zz-no-such-text-zz");
    await waitFor(async () => (await session.find("[data-testid=audit-row]")) === null, "the search to empty the table", 10000);
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
