// Smoke: the real app starts with its own data dir and workspace (and no config: a first run, so
// it opens on Settings), shows the chat under the CSP with its stylesheet applied, is attached
// to an engine session, and paints a non-blank window. The prerendered first screen is painted
// before the window's code is fetched, and adopted by hydration as it is. A view's code is
// fetched when the view is first opened, never while the window idles.
import assert from "node:assert/strict";
import { basename } from "node:path";
import { launchApp, screenshot } from "./lib/app.mjs";
import { tempDirs } from "./lib/env.mjs";
import { sleep, waitFor } from "./lib/webdriver.mjs";

/** The view chunks the page has fetched (e.g. "SettingsView"), sorted: the page marks each one's
 * arrival (WebKitGTK keeps no resource timing for the app's own scheme). */
const VIEW_CHUNKS = `return performance.getEntriesByType('mark')
  .map((e) => /^bridle: view chunk (\\w+)$/.exec(e.name)?.[1]).filter(Boolean).sort()`;

const NAV = ["chat", "sessions", "approvals", "changes", "usage", "audit", "settings"];

export default async function smoke({ log }) {
  const dirs = tempDirs();
  const workspace = dirs.make("workspace");
  const session = await launchApp({ dataDir: dirs.make("data"), workspace });
  try {
    await waitFor(() => session.find("[data-testid=settings-first-run]"), "the first-run Settings panel", 10000);
    // Idle well past a frame: only the view on screen has had its code fetched.
    await sleep(2500);
    assert.deepEqual(await session.execute(VIEW_CHUNKS), ["SettingsView"], "only the open view's chunk is fetched");
    await (await session.find("[data-testid=nav-usage]")).click();
    await waitFor(() => session.find("section.usage"), "the Usage view", 10000);
    assert.deepEqual(await session.execute(VIEW_CHUNKS), ["SettingsView", "UsageView"], "opening Usage fetched its chunk");
    await (await session.find("[data-testid=nav-chat]")).click();
    const input = await session.find("[data-testid=chat-input]");
    assert.equal(await input.isDisplayed(), true, "chat-input is visible");
    assert.equal(await input.isEnabled(), true, "chat-input is enabled");
    assert.ok(await session.find("[data-testid=send-button]"), "send-button exists");
    for (const view of NAV) assert.ok(await session.find(`[data-testid=nav-${view}]`), `nav-${view} exists`);

    // index.html held the first screen, and it matched the first render (boot.tsx marks both).
    const marked = (name) => session.execute(`return performance.getEntriesByName('bridle: ${name}').length`);
    assert.equal(await marked("first screen from HTML"), 1, "index.html holds the prerendered first screen");
    assert.equal(await marked("hydration mismatch"), 0, "the prerendered first screen was hydrated as it is");
    // That screen was painted before the window's code was even asked for (main.tsx).
    const [painted, asked] = await session.execute(`const at = (name) => performance.getEntriesByName(name)[0]?.startTime ?? null;
      return [at('first-contentful-paint'), at('bridle: window code asked')]`);
    assert.ok(painted !== null && asked !== null && painted <= asked, `first paint at ${painted} ms, the window's code asked at ${asked} ms`);
    // The real Tauri webview, not a browser page.
    assert.equal(await session.execute("return typeof window.__TAURI_INTERNALS__"), "object");
    // The linked stylesheet loaded under the CSP (the dark theme's body background).
    assert.equal(await session.execute("return getComputedStyle(document.body).backgroundColor"), "rgb(27, 29, 34)");
    // session_info answered: the header names the workspace the app was given.
    let seen = "";
    const header = await waitFor(async () => {
      seen = (await (await session.find("[data-testid=session-workspace]"))?.text()) ?? "(no header)";
      return seen !== "Connecting…" ? seen : null;
    }, "the session header to leave 'Connecting…'").catch(async (err) => {
      const alert = await session.find("[role=alert]");
      throw new Error(`${err.message}; header "${seen}"; banner: ${alert ? await alert.text() : "none"}`);
    });
    assert.ok(header.includes(basename(workspace)), `header "${header}" names ${workspace}`);
    const alert = await session.find("[role=alert]");
    assert.equal(alert && (await alert.text()), null, "no error banner");

    const shot = await screenshot(session, "smoke.png");
    log(`screenshot ${shot.file} ${shot.width}x${shot.height}, ${shot.colours} colours`);
  } finally {
    await session.close().catch(() => {});
    dirs.cleanup();
  }
}
