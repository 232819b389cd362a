// Background processes in the window: launched in `auto`, the model (aimock) runs a ticking loop
// with bash `background: true` and answers. The Chat view's Processes panel lists it running
// (`process-row` with `data-state`), its output's tail (`process-output`) moves on its own, and
// the header counts it (`processes-count`). Stop (`process-stop`) ends it: the row says stopped,
// the count goes, and no process of the loop is left on the machine (bwrap and bash carry the
// command text in their argv, so /proc shows any that stayed). Showing another session leaves
// its ticker running; closing the window ends every session's.
import assert from "node:assert/strict";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { startAimock } from "./lib/aimock.mjs";
import { describeWindow, launchApp, screenshot } from "./lib/app.mjs";
import { messageTexts, send, waitUnlessError } from "./lib/chat.mjs";
import { outDir, tempDirs } from "./lib/env.mjs";
import { fatal, sleep, waitFor } from "./lib/webdriver.mjs";

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), "fixtures", "llm", "processes.json");
const PROMPT = "start the ticker in the background";
const ANSWER = "The ticker runs in the background.";
/** Text of the loop's command line (fixtures/llm/processes.json) that no other process has. */
const NEEDLE = "echo tick";

/** The live processes whose command line holds NEEDLE: pid -> { start, cmdline }. */
function tickProcesses() {
  const found = new Map();
  for (const pid of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
      if (!cmdline.includes(NEEDLE)) continue;
      const stat = processStat(pid);
      // A zombie has no command line any more; one that still shows it is alive.
      if (stat && !["Z", "X"].includes(stat.state)) found.set(pid, { start: stat.start, cmdline: cmdline.trim() });
    } catch {
      // Gone between the listing and the read, or not ours to read.
    }
  }
  return found;
}

/** State and start time (field 22) of a process, or null once it is gone. */
function processStat(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The name (field 2) is in parentheses and may hold spaces or parentheses itself.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return { state: fields[0], start: fields[19] };
  } catch {
    return null;
  }
}

/**
 * Each process row: id, state, command, state line and its output's text (from the DOM, not
 * WebDriver's text: the output box scrolls and the command may be cut short with an ellipsis).
 */
function processRows(session) {
  return session.execute(
    "const text = (r, s) => r.querySelector(s)?.textContent ?? null; " +
      "return [...document.querySelectorAll('[data-testid=process-row]')].map((r) => ({ id: r.dataset.processId, " +
      "state: r.dataset.state, command: text(r, '.process-command'), status: text(r, '[data-testid=process-state]'), " +
      "output: text(r, '[data-testid=process-output]') }));",
  );
}

/** True once no process with NEEDLE runs but those of `before`; throws naming the others. */
function noLoopBut(before) {
  const left = tickProcesses();
  for (const [pid, p] of before) if (left.get(pid)?.start === p.start) left.delete(pid);
  if (left.size === 0) return true;
  throw new Error(`still running: ${[...left].map(([pid, p]) => `${pid} ${p.cmdline}`).join("; ")}`);
}

/** Sends `prompt` and waits for the turn's end and a running process of it whose output has begun. */
async function startTicker(session, prompt) {
  const seen = new Set((await processRows(session)).map((r) => r.id));
  await send(session, prompt);
  const started = await waitUnlessError(session, async () => {
    const rows = await processRows(session);
    return rows.find((r) => !seen.has(r.id) && r.state === "running" && r.output?.includes("tick 1")) ?? null;
  }, `a new running process after "${prompt}"`, 45000);
  await waitFor(async () => (await (await session.find(".session-header .turn-state")).text()) === "Idle", "the turn's end", 20000);
  return started;
}

export default async function processes({ log }) {
  const dirs = tempDirs();
  const mock = await startAimock(FIXTURES, join(outDir(), "aimock-processes.log"));
  let session = null;
  try {
    const workspace = dirs.make("workspace");
    const config = join(dirs.make("config"), "bridle.toml");
    writeFileSync(
      config,
      `mode = "auto"\n` +
        `[provider]\nkind = "openai"\nbase_url = "${mock.url}/v1"\nmodel = "mock-model"\ncontext_window = 128000\n`,
    );
    session = await launchApp({ dataDir: dirs.make("data"), workspace, extraArgs: ["--config", config] });
    // Loops some other run left behind are not this test's to judge.
    const before = tickProcesses();
    if (before.size > 0) log(`ignoring ${before.size} process(es) with "${NEEDLE}" from before: ${[...before.keys()].join(", ")}`);

    await send(session, `please ${PROMPT}`);
    await waitUnlessError(session, async () => {
      if (await session.find("[data-testid=approval-card]")) {
        throw fatal("the background bash call asked for approval: auto should have run it");
      }
      return (await messageTexts(session, "assistant")).some((t) => t.includes(ANSWER));
    }, "the model's answer after starting the process", 45000);

    await session.waitForElement("[data-testid=processes-panel]", 15000);
    const running = await waitUnlessError(session, async () => {
      const rows = await processRows(session);
      const row = rows.find((r) => r.state === "running" && r.output?.includes("tick 3"));
      if (row) return row;
      const ended = rows.find((r) => r.state !== "running");
      if (ended) throw fatal(`the process ended before the test stopped it: ${JSON.stringify(ended)}`);
      return null;
    }, 'a running process whose output holds "tick 3"', 20000);
    assert.match(running.status, /^running · \d+ s$/, running.status);
    const rows = await processRows(session);
    assert.equal(rows.length, 1, `one process: ${JSON.stringify(rows)}`);
    const row = `[data-testid=process-row][data-process-id="${running.id}"]`;
    assert.equal(running.command, "for i in $(seq 1000); do echo tick $i; sleep 0.2; done");
    assert.equal(await (await session.find("[data-testid=processes-count]")).text(), "1 running");

    // The output moves on its own (the panel asks every second while the process runs).
    const ticks = (output) => Math.max(...[...output.matchAll(/tick (\d+)/g)].map((m) => Number(m[1])));
    const first = ticks(running.output);
    await waitFor(async () => {
      const now = (await processRows(session)).find((r) => r.id === running.id);
      return now && ticks(now.output ?? "") > first + 5;
    }, "the output to move on", 10000);

    // The loop is on the machine (so the check after the stop can see one that stays): its
    // processes, pid -> { start, cmdline }.
    const ours = await waitFor(() => {
      const now = tickProcesses();
      for (const pid of before.keys()) now.delete(pid);
      return now.size > 0 ? now : null;
    }, `a process with "${NEEDLE}" in its command line`, 5000);
    log(`the loop runs as ${[...ours].map(([pid, p]) => `${pid} (${p.cmdline.split(" ")[0]})`).join(", ")}`);
    const shot = await screenshot(session, "processes.png");
    log(`screenshot ${shot.file}, ${shot.colours} colours`);

    await (await session.find(`${row} [data-testid=process-stop]`)).click();
    await waitUnlessError(
      session,
      async () => (await session.find(`${row}[data-state=stopped]`)) !== null,
      "the process row to say stopped",
      15000,
    );
    const after = (await processRows(session)).find((r) => r.id === running.id);
    assert.match(after.status, /^stopped · \d+ s$/, after.status);
    assert.equal(await session.find(`${row} [data-testid=process-stop]`), null, "a stopped process offers no Stop");
    await waitFor(async () => (await session.find("[data-testid=processes-count]")) === null, "the header's count to go", 5000);

    // Nothing of the loop is left: neither a process seen running (same pid and start time) nor
    // any other with its command line. process_stop answers once the group has ended; a moment
    // is allowed for the kernel to reap.
    await waitFor(() => {
      const left = tickProcesses();
      for (const [pid, p] of before) if (left.get(pid)?.start === p.start) left.delete(pid);
      for (const [pid, p] of ours) {
        const stat = processStat(pid);
        if (stat && stat.start === p.start && !["Z", "X"].includes(stat.state)) left.set(pid, p);
      }
      if (left.size === 0) return true;
      throw new Error(`still running: ${[...left].map(([pid, p]) => `${pid} ${p.cmdline}`).join("; ")}`);
    }, "no process of the loop to be left", 5000);
    const stopped = await screenshot(session, "processes-stopped.png");
    log(`screenshot ${stopped.file}, ${stopped.colours} colours`);

    // Showing another session stops none (DESIGN §16): the ticker of the one left runs on.
    await startTicker(session, `again, ${PROMPT}`);
    const left = new Map([...tickProcesses()].filter(([pid]) => !before.has(pid)));
    assert.ok(left.size > 0, "the ticker runs");
    await (await session.find("[data-testid=nav-sessions]")).click();
    await (await waitFor(() => session.find("[data-testid=session-new]"), "New session", 10000)).click();
    await waitFor(async () => (await session.find("[data-testid=processes-panel]")) === null, "the new session's empty panel", 10000);
    await sleep(1500);
    const still = tickProcesses();
    assert.ok([...left].some(([pid, p]) => still.get(pid)?.start === p.start), "the session not shown keeps its ticker");

    // Closing the window ends every live session's processes, the one not shown included.
    await (await session.find("[data-testid=nav-chat]")).click();
    await startTicker(session, `once more, ${PROMPT}`);
    await session.close();
    session = null;
    await waitFor(() => noLoopBut(before), "no process of the loop after the window closed", 10000);
  } catch (err) {
    const window = session ? await describeWindow(session, "processes") : "(not started)";
    const rows = session ? await processRows(session).catch((e) => e.message) : null;
    const journal = JSON.stringify(await mock.journal().catch(() => null)).slice(0, 3000);
    throw new Error(`${err.message}\nwindow: ${window}\nprocess rows: ${JSON.stringify(rows)}\naimock journal: ${journal}`, { cause: err });
  } finally {
    await session?.close().catch(() => {});
    await mock.stop();
    dirs.cleanup();
  }
}
