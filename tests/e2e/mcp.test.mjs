// MCP servers in the app, as a user configures them: the config names `server-everything` (stdio,
// from npm) and a server that never answers `initialize`. The model (aimock) calls the real
// server's echo from the chat and reads its answer. Settings shows each server's live status:
// ready with its tools, the silent one failed with why. The server is killed from outside: its
// row turns failed by itself; Restart brings it back. A second server is added from the form and
// starts; the silent one is switched off; both edits land in the config file. When the app
// closes, no server process is left.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { startAimock } from "./lib/aimock.mjs";
import { describeWindow, launchApp, screenshot } from "./lib/app.mjs";
import { sendAndWait } from "./lib/chat.mjs";
import { outDir, tempDirs } from "./lib/env.mjs";
import { sleep, waitFor } from "./lib/webdriver.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const FIXTURES = join(HERE, "fixtures", "llm");
const EVERYTHING = resolve(HERE, "../../node_modules/@modelcontextprotocol/server-everything/dist/index.js");

/** Command lines of the live processes that contain `marker`. */
function processesWith(marker) {
  const found = [];
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      if (stat.slice(stat.lastIndexOf(") ") + 2).startsWith("Z")) continue;
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
      if (cmdline.includes(marker)) found.push(`${pid} ${cmdline}`);
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

async function row(session, name) {
  return session.find(`[data-testid=settings-mcp-server][data-name=${name}]`);
}

async function waitForStatus(session, name, status, what, timeoutMs = 30000) {
  await waitFor(async () => (await (await row(session, name))?.attribute("data-status")) === status, what, timeoutMs);
}

export default async function mcp({ log }) {
  const dirs = tempDirs();
  const mock = await startAimock(FIXTURES, join(outDir(), "aimock-mcp.log"));
  const marker = `bridle-e2e-mcp-${process.pid}`;
  let session = null;
  try {
    const workspace = dirs.make("workspace");
    const config = join(dirs.make("config"), "bridle.toml");
    writeFileSync(
      config,
      `mode = "auto"\n` +
        `[provider]\nkind = "openai"\nbase_url = "${mock.url}/v1"\nmodel = "mock-model"\ncontext_window = 128000\n\n` +
        `# the npm reference server, renamed so the test can find it\n` +
        `[mcp.servers.everything]\ncommand = "bash"\nargs = ["-c", "exec -a ${marker}-one node ${EVERYTHING} stdio"]\n\n` +
        `[mcp.servers.silent]\ncommand = "bash"\nargs = ["-c", "exec -a ${marker}-silent sleep 30"]\nstartup_timeout_secs = 1\n`,
    );
    writeFileSync(join(workspace, ".keep"), "");
    session = await launchApp({ dataDir: dirs.make("data"), workspace, extraArgs: ["--config", config] });

    // The model calls the server's echo through the whole pipeline and reads the answer.
    await sendAndWait(session, "echo through mcp", "The MCP server echoed it.");
    const card = await session.find("[data-testid=tool-call][data-tool=mcp__everything__echo]");
    assert.ok(card, "the MCP call has its card");
    assert.equal(await card.attribute("data-status"), "ok");
    await card.click();
    await waitFor(async () => (await card.text()).includes("Echo: from the window"), "the echo in the card", 10000);
    const chat = await screenshot(session, "chat-mcp.png");
    log(`screenshot ${chat.file}, ${chat.colours} colours`);

    // Settings: the live list.
    await (await session.find("[data-testid=nav-settings]")).click();
    await waitForStatus(session, "everything", "ready", "everything ready");
    await waitForStatus(session, "silent", "failed", "silent failed");
    const silentText = await (await row(session, "silent")).text();
    assert.match(silentText, /did not answer `initialize` within 1 s/, silentText);
    const readyText = await (await row(session, "everything")).text();
    assert.match(readyText, /ready · \d+ tools/, readyText);
    await session.execute("document.querySelector('[data-testid=settings-mcp-servers]').scrollIntoView()");
    const shot = await screenshot(session, "settings-mcp.png");
    log(`screenshot ${shot.file}, ${shot.colours} colours`);

    // Killed from outside: the row turns failed by itself.
    assert.equal(processesWith(`${marker}-one`).length, 1, "the server runs once");
    execFileSync("pkill", ["-KILL", "-f", `${marker}-one`]);
    await waitForStatus(session, "everything", "failed", "the killed server shown failed", 15000);
    const failedText = await (await row(session, "everything")).text();
    assert.match(failedText, /stopped/, failedText);
    const killed = await screenshot(session, "settings-mcp-failed.png");
    log(`screenshot ${killed.file}, ${killed.colours} colours`);

    await (await session.find("[data-testid=settings-mcp-server][data-name=everything] [data-testid=settings-mcp-restart]")).click();
    await waitForStatus(session, "everything", "ready", "everything ready again after Restart");
    assert.equal(processesWith(`${marker}-one`).length, 1, "restarted once");

    // A second server from the form.
    await (await session.find("[data-testid=settings-mcp-add]")).click();
    await (await session.find("[data-testid=settings-mcp-name]")).type("second");
    await (await session.find("[data-testid=settings-mcp-command]")).type("bash");
    await (await session.find("[data-testid=settings-mcp-args]")).type(`-c\uE007exec -a ${marker}-two node ${EVERYTHING} stdio`);
    await (await session.find("[data-testid=settings-mcp-form-save]")).click();
    await waitForStatus(session, "second", "ready", "the added server ready");
    assert.equal(processesWith(`${marker}-one`).length, 1, "adding one leaves the others running");

    // The silent one switched off.
    await (await session.find("[data-testid=settings-mcp-server][data-name=silent] [data-testid=settings-mcp-toggle]")).click();
    await waitForStatus(session, "silent", "disabled", "silent disabled");
    const text = readFileSync(config, "utf8");
    assert.match(text, /# the npm reference server, renamed so the test can find it\n\[mcp\.servers\.everything\]/, text);
    assert.match(text, /\[mcp\.servers\.second\]\ncommand = "bash"\nargs = \["-c", "exec -a [^"]+-two node [^"]+ stdio"\]/, text);
    assert.match(text, /\[mcp\.servers\.silent\]\ncommand = "bash"\nargs = .*\nstartup_timeout_secs = 1\nenabled = false\n/, text);
    const edited = await screenshot(session, "settings-mcp-edited.png");
    log(`screenshot ${edited.file}, ${edited.colours} colours`);

    await session.close();
    session = null;
    // The app ends its servers' process groups when it exits.
    await waitFor(async () => processesWith(marker).length === 0, "no server process after the app exits", 10000).catch(() => {
      throw new Error(`servers left after the app exited:\n${processesWith(marker).join("\n")}`);
    });
  } catch (err) {
    const window = session ? await describeWindow(session, "mcp") : "(closed)";
    throw new Error(`${err.message}\nwindow: ${window}`, { cause: err });
  } finally {
    await session?.close().catch(() => {});
    await mock.stop();
    for (const line of processesWith(marker)) {
      try {
        process.kill(Number(line.split(" ")[0]), "SIGKILL");
      } catch {
        // gone
      }
    }
    await sleep(0);
    dirs.cleanup();
  }
}
