// Launches the real Bridle app under WebDriver with its own data dir and workspace.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { decodePng, uniqueColours } from "./png.mjs";
import { appBinary, outDir, webdriverUrl } from "./env.mjs";
import { sleep, startSession, waitFor } from "./webdriver.mjs";

/**
 * Starts the app with `--data-dir`, `--workspace` and any extra args, and `env` added to its
 * environment; returns the WebDriver session once the chat input is on screen and the session is
 * open (or the first-run panel shows).
 */
export async function launchApp({ dataDir, workspace, extraArgs = [], env = {} }) {
  const args = ["--data-dir", dataDir, "--workspace", workspace, ...extraArgs];
  // WebKitWebDriver starts the app with its own environment and takes no variables in the
  // capabilities, so added ones go through env(1): it sets them and execs the app, which keeps
  // env's process id (the one the driver watches and ends) and inherits the driver's sockets.
  const vars = Object.entries(env).map(([name, value]) => `${name}=${value}`);
  const [binary, argv] = vars.length > 0 ? ["/usr/bin/env", [...vars, appBinary(), ...args]] : [appBinary(), args];
  let session;
  try {
    session = await startSession(webdriverUrl(), binary, argv);
  } catch (err) {
    // An app that exits at start-up leaves POST /session hanging; its own words are in the log.
    throw new Error(`${err.message}\napp and WebKitWebDriver output (tail):\n${driverLogTail()}`, { cause: err });
  }
  try {
    await session.waitForElement("[data-testid=chat-input]", 30000);
    // The input shows before the session is open; a test that types at once would race the
    // opening. Ready is the session's mode picker, or the first-run panel when nothing is set up.
    await waitFor(
      async () => (await session.find("[data-testid=session-mode]")) ?? (await session.find("[data-testid=settings-first-run]")),
      "the open session (its mode picker) or the first-run panel",
      30000,
    );
  } catch (err) {
    await session.close().catch(() => {});
    throw err;
  }
  return session;
}

function driverLogTail(lines = 20) {
  const file = join(outDir(), "webkitwebdriver.log");
  if (!existsSync(file)) return "(no log)";
  return readFileSync(file, "utf8").trimEnd().split("\n").slice(-lines).join("\n") || "(empty)";
}

/**
 * Saves a screenshot as OUT_DIR/name and fails when it is blank (fewer than `minColours` distinct
 * colours, as an unrendered or white window would be).
 */
export async function screenshot(session, name, minColours = 10) {
  await sleep(600); // WebKit may still show the previous paint right after a DOM change.
  const png = await session.screenshot();
  const file = join(outDir(), name);
  writeFileSync(file, png);
  const image = decodePng(png);
  const colours = uniqueColours(image);
  if (colours <= minColours) {
    throw new Error(`${file} looks blank: ${colours} distinct colours in ${image.width}x${image.height}`);
  }
  return { file, width: image.width, height: image.height, colours };
}

/**
 * What the window shows, for a failing test's message: the transcript and any error banner as
 * text, with a screenshot saved as OUT_DIR/<name>-failure.png.
 */
export async function describeWindow(session, name) {
  const text = await session
    .execute(
      "const q = (s) => document.querySelector(s); return { header: q('.session-header')?.innerText ?? null, " +
        "transcript: q('.message-list')?.innerText ?? null, alert: q('[role=alert]')?.innerText ?? null };",
    )
    .catch((err) => ({ error: err.message }));
  const png = await session.screenshot().catch(() => null);
  if (png) writeFileSync(join(outDir(), `${name}-failure.png`), png);
  return JSON.stringify(text);
}

/** The sidebar's sessions (DESIGN §16): id, state and whether it is the one shown. */
export function rail(session) {
  return session.execute(
    "return [...document.querySelectorAll('[data-testid=rail-session]')].map((e) => ({ id: e.dataset.sessionId, state: e.dataset.state, current: e.getAttribute('aria-current') === 'true' }));",
  );
}
