// A managed policy as the window meets it (DESIGN §17): with a managed file (named by
// BRIDLE_MANAGED_CONFIG) that allows every mode but `bypass` and denies `bash(git push*)`, the
// session's mode picker does not offer `bypass`, Settings lists the deny rule as managed
// (read-only, with the file as the reason) and offers no `bypass` either; and the Audit view's
// Export writes this session with its proof into the data dir.
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { launchApp, screenshot } from "./lib/app.mjs";
import { tempDirs } from "./lib/env.mjs";
import { waitFor } from "./lib/webdriver.mjs";

const ALLOWED = ["read-only", "plan", "ask", "review", "auto-edit", "auto"];

const options = (session, testId) =>
  session.execute(`return Array.from(document.querySelector('[data-testid=${testId}]').options).map((o) => o.value)`);

export default async function managed({ log }) {
  const dirs = tempDirs();
  let session = null;
  try {
    const workspace = dirs.make("workspace");
    const dataDir = dirs.make("data");
    const policyDir = dirs.make("policy");
    const policy = join(policyDir, "managed.toml");
    writeFileSync(
      policy,
      `allowed_modes = ${JSON.stringify(ALLOWED)}\n[rules]\ndeny = ["bash(git push*)"]\n`,
    );
    writeFileSync(
      join(dataDir, "config.toml"),
      'mode = "ask"\n[provider]\nkind = "openai"\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"\n',
    );
    session = await launchApp({ dataDir, workspace, env: { BRIDLE_MANAGED_CONFIG: policy } });

    await waitFor(() => session.find("[data-testid=session-mode]"), "the mode picker", 15000);
    const picker = await options(session, "session-mode");
    log(`mode picker offers ${picker.join(", ")}`);
    assert.deepEqual(picker, ALLOWED, "the picker offers every allowed mode and not bypass");

    await (await session.find("[data-testid=nav-settings]")).click();
    const section = await waitFor(() => session.find("[data-testid=managed-settings]"), "the managed settings", 10000);
    const text = await section.text();
    assert.ok(text.includes("bash(git push*)"), text);
    assert.ok(text.includes(policy), `the reason names ${policy}: ${text}`);
    assert.deepEqual(await options(session, "settings-mode"), ALLOWED, "Settings offers no bypass either");
    // The user's own deny list stays empty: the managed rule is not theirs to remove.
    const own = await session.execute("return document.querySelector('[data-testid=settings-rules-deny-input]').value");
    assert.equal(own, "", "the managed rule is not in the user's editable list");
    const shot = await screenshot(session, "managed-settings.png");
    log(`screenshot ${shot.file} ${shot.width}x${shot.height}, ${shot.colours} colours`);

    await (await session.find("[data-testid=nav-audit]")).click();
    await (await waitFor(() => session.find("[data-testid=session-export-md]"), "the session export button")).click();
    const path = await waitFor(async () => {
      const el = await session.find("[data-testid=session-export-path]");
      return el ? el.text() : null;
    }, "the export's path", 15000);
    const exported = readFileSync(path, "utf8");
    assert.ok(exported.startsWith("# Session "), exported.slice(0, 200));
    assert.ok(exported.includes("Chain head at export: row "), exported.slice(0, 400));
    log(`session exported to ${path}`);
    const shotAudit = await screenshot(session, "managed-audit-export.png");
    log(`screenshot ${shotAudit.file}`);
  } finally {
    await session?.close().catch(() => {});
    dirs.cleanup();
  }
}
