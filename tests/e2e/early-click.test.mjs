// A click on the first screen as soon as it shows: the screen is prerendered HTML, drawn before
// the window's code has run (main.tsx), so a button clicked then had no handler yet. The test
// clicks Sessions the moment the button exists, as a quick user would, and the Sessions view
// must open and stay open. Whether the click came before the window's code ran is logged: that
// depends on how fast WebDriver's first command follows the launch.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { screenshot } from "./lib/app.mjs";
import { appBinary, tempDirs, webdriverUrl } from "./lib/env.mjs";
import { sleep, startSession, waitFor } from "./lib/webdriver.mjs";

/** In the page: clicks Sessions if it is there; whether the window's code had run by then. */
const CLICK_AT_ONCE = `
  const button = document.querySelector('[data-testid=nav-sessions]');
  if (!button) return null;
  const ran = performance.getEntriesByName('bridle: modules run').length > 0;
  button.click();
  return { ran };`;

export default async function earlyClick({ log }) {
  const dirs = tempDirs();
  let session = null;
  try {
    const workspace = dirs.make("workspace");
    const config = join(dirs.make("config"), "config.toml");
    // A provider that is never asked: no first-run panel takes the window to Settings.
    writeFileSync(config, `[provider]\nkind = "openai"\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "never-asked"\n`);
    const args = ["--data-dir", dirs.make("data"), "--workspace", workspace, "--config", config];
    session = await startSession(webdriverUrl(), appBinary(), args);
    const clicked = await waitFor(() => session.execute(CLICK_AT_ONCE), "the Sessions button", 30000, 5);
    log(clicked.ran ? "clicked after the window's code ran" : "clicked before the window's code ran");

    await waitFor(() => session.find("[data-testid=sessions-view]"), "the Sessions view", 10000);
    // Still there once the engine has started and the list is filled (nothing took the window
    // back to the chat).
    await waitFor(() => session.find("[data-testid=session-item]"), "the session listed", 30000);
    await sleep(500);
    assert.ok(await session.find("[data-testid=sessions-view]"), "the Sessions view stays open");
    const current = await session.execute(
      "return document.querySelector('[data-testid=nav-sessions]').getAttribute('aria-current')",
    );
    assert.equal(current, "page", "Sessions is the current view in the nav");
    const shot = await screenshot(session, "early-click.png");
    log(`screenshot ${shot.file}`);
  } finally {
    await session?.cmd("DELETE", "").catch(() => {});
    dirs.cleanup();
  }
}
