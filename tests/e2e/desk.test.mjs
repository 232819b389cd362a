// Many sessions at one desk in the real window (DESIGN §16): two sessions in worktrees of their
// own; while the first runs a slow command the second is opened and asks about a host; the
// first, shown again, finishes; the sidebar says each one's state; the inbox answers the
// question of the session not shown, which then finishes its turn in its own worktree; the
// first is archived and restored from Sessions, its file back in place.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startAimock } from "./lib/aimock.mjs";
import { describeWindow, launchApp, rail, screenshot } from "./lib/app.mjs";
import { messageTexts, send, waitUnlessError } from "./lib/chat.mjs";
import { outDir, tempDirs } from "./lib/env.mjs";
import { waitFor } from "./lib/webdriver.mjs";

/** A model that runs `command` with bash when asked `prompt`, then says `said`. */
function script(dir) {
  const turn = (prompt, id, command, said) => [
    { match: { userMessage: prompt, hasToolResult: false }, response: { toolCalls: [{ id, name: "bash", arguments: { command } }] } },
    { match: { userMessage: prompt, hasToolResult: true }, response: { content: said } },
  ];
  const fixtures = [
    ...turn("run the slow job", "c1", "sleep 6 && echo slow > slow.txt", "The slow job is done"),
    ...turn("fetch the page", "c2", "curl -sS --max-time 30 http://new.test:9/; echo fetched > fetched.txt", "Fetched, or tried"),
  ];
  writeFileSync(join(dir, "desk.json"), JSON.stringify({ fixtures }));
  return dir;
}


async function stateOf(session, id) {
  return (await rail(session)).find((s) => s.id === id)?.state;
}

/** Opens Sessions and starts a new session in a worktree; answers its id once it is shown. */
async function newWorktreeSession(session, before) {
  await (await session.find("[data-testid=nav-sessions]")).click();
  await (await waitFor(() => session.find("[data-testid=session-new-worktree]"), "New session in a worktree", 10000)).click();
  return waitFor(async () => {
    const current = (await rail(session)).find((s) => s.current);
    const chat = await session.find("[data-testid=nav-chat][aria-current=page]");
    return chat && current && !before.includes(current.id) && (await session.find("[data-testid=session-mode]")) ? current.id : null;
  }, "the new worktree session, shown", 20000);
}

export default async function desk({ log }) {
  const dirs = tempDirs();
  const mock = await startAimock(script(dirs.make("fixtures")), join(outDir(), "aimock-desk.log"));
  let session = null;
  try {
    const workspace = dirs.make("workspace");
    const git = (...args) => execFileSync("git", args, { cwd: workspace }).toString();
    git("init", "-q", "-b", "main");
    git("config", "user.name", "Tester");
    git("config", "user.email", "tester@example.com");
    writeFileSync(join(workspace, "README.md"), "# project\n");
    writeFileSync(join(workspace, ".gitignore"), ".env\n");
    writeFileSync(join(workspace, ".worktreeinclude"), ".env\n");
    git("add", "-A");
    git("commit", "-qm", "start");
    writeFileSync(join(workspace, ".env"), "TOKEN=local\n");
    const status = git("status", "--porcelain", "--ignored");
    const dataDir = dirs.make("data");
    const config = join(dirs.make("config"), "config.toml");
    writeFileSync(
      config,
      `mode = "auto"\n[provider]\nkind = "openai"\nbase_url = "${mock.url}/v1"\nmodel = "mock-model"\n` +
        `[rules]\nallow = ["bash(curl *)"]\n[sandbox.network]\nmode = "ask"\nallow = ["127.0.0.1"]\n`,
    );
    session = await launchApp({ dataDir, workspace, extraArgs: ["--config", config], env: { BRIDLE_NET_RESOLVE: "new.test=127.0.0.1" } });
    const first = (await rail(session)).map((s) => s.id);

    // Session one, in its worktree, starts the slow job.
    const one = await newWorktreeSession(session, first);
    const oneDir = join(dataDir, "worktrees", one);
    assert.equal(readFileSync(join(oneDir, ".env"), "utf8"), "TOKEN=local\n", ".env copied into the worktree");
    await send(session, "run the slow job");
    await waitUnlessError(session, () => session.find("[data-testid=tool-call][data-tool=bash][data-status=running]"), "the slow job running", 30000);

    // Session two opens beside it; one keeps working.
    const two = await newWorktreeSession(session, [...first, one]);
    const twoDir = join(dataDir, "worktrees", two);
    assert.equal(await stateOf(session, one), "working", "opening another session stopped none");
    await send(session, "fetch the page");
    await waitUnlessError(session, () => session.find("[data-testid=approval-card][data-kind=network]"), "two's question about its host", 30000);
    await waitFor(async () => (await stateOf(session, two)) === "needs-you", "two needing you in the sidebar", 10000);

    // One, shown again from the sidebar, finishes its job in its own worktree.
    await (await session.find(`[data-testid=rail-session][data-session-id="${one}"]`)).click();
    await waitUnlessError(session, async () => {
      const texts = await messageTexts(session, "assistant");
      return texts.some((t) => t.includes("The slow job is done"));
    }, "one's turn ending", 30000);
    assert.equal(readFileSync(join(oneDir, "slow.txt"), "utf8"), "slow\n");
    assert.equal(existsSync(join(workspace, "slow.txt")), false, "nothing in the main checkout");
    await waitFor(async () => (await stateOf(session, one)) === "idle", "one idle in the sidebar", 10000);
    assert.equal(await stateOf(session, two), "needs-you", "two still waits");
    const badge = await session.find("[data-testid=inbox-badge]");
    assert.equal(await badge.attribute("data-count"), "1");
    const shot = await screenshot(session, "desk-sidebar.png");
    log(`screenshot ${shot.file}, ${shot.colours} colours`);

    // The inbox answers two's question while one is shown; two finishes in its worktree.
    await (await session.find("[data-testid=nav-approvals]")).click();
    const card = `section[aria-label=Approvals] [data-testid=approval-card][data-session-id="${two}"]`;
    await waitFor(() => session.find(card), "two's question in the inbox", 10000);
    await screenshot(session, "desk-inbox.png");
    await (await session.find(`${card} [data-testid=approve-once]`)).click();
    await waitFor(() => existsSync(join(twoDir, "fetched.txt")), "two's command, run in its worktree", 30000);
    await waitFor(async () => (await stateOf(session, two)) === "idle", "two idle in the sidebar", 20000);
    assert.equal((await rail(session)).find((s) => s.current)?.id, one, "the answer did not change the shown session");

    // Archive one, then restore it, from Sessions.
    await (await session.find("[data-testid=nav-sessions]")).click();
    const item = `[data-testid=session-item][data-session-id="${one}"]`;
    await (await waitFor(() => session.find(`${item} [data-testid=session-archive]`), "one's Archive", 10000)).click();
    await waitFor(async () => (await (await session.find(item))?.attribute("data-state")) === "archived", "one archived", 20000);
    assert.equal(existsSync(oneDir), false, "the archived worktree's folder is gone");
    await screenshot(session, "desk-archived.png");
    await (await session.find(`${item} [data-testid=session-restore]`)).click();
    await waitFor(() => existsSync(join(oneDir, "slow.txt")), "one restored", 20000);
    assert.equal(readFileSync(join(oneDir, "slow.txt"), "utf8"), "slow\n");
    assert.equal(git("status", "--porcelain", "--ignored"), status, "the main checkout is as it was");
    assert.match(git("branch", "--list", "bridle/*"), new RegExp(`bridle/${one.slice(0, 8)}`));
  } catch (err) {
    const window = session ? await describeWindow(session, "desk") : "(not started)";
    throw new Error(`${err.message}\nwindow: ${window}`, { cause: err });
  } finally {
    await session?.close().catch(() => {});
    await mock.stop();
    dirs.cleanup();
  }
}
