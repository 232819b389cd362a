// Subagents in the real window (DESIGN §16.1): a parent turn starts two children, one reads and
// one writes; each shows as a card on the call that started it; the writer's question, asked in
// `ask` mode, is in the inbox under the child's name and the sidebar says the child needs you;
// answered there, the child writes, the parent's wait returns both answers, and the reader's
// card opens the child's own session.
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startAimock } from "./lib/aimock.mjs";
import { describeWindow, launchApp, rail, screenshot } from "./lib/app.mjs";
import { messageTexts, send, waitUnlessError } from "./lib/chat.mjs";
import { outDir, tempDirs } from "./lib/env.mjs";
import { waitFor } from "./lib/webdriver.mjs";

const call = (id, name, args) => ({ id, name, arguments: args });

function script(dir) {
  const child = (task, id, name, args, said) => [
    { match: { userMessage: task, toolCallId: id }, response: { content: said } },
    { match: { userMessage: task, hasToolResult: false }, response: { toolCalls: [call(id, name, args)] } },
  ];
  const fixtures = [
    { match: { userMessage: "delegate to two agents", toolCallId: "w1" }, response: { content: "Both agents reported back." } },
    {
      match: { userMessage: "delegate to two agents", toolCallId: "s2" },
      response: { toolCalls: [call("w1", "wait_agent", { timeout_secs: 120 })] },
    },
    {
      match: { userMessage: "delegate to two agents", hasToolResult: false },
      response: {
        toolCalls: [
          call("s1", "spawn_agent", { task: "Read notes.txt and report" }),
          call("s2", "spawn_agent", { task: "Write result.txt with done" }),
        ],
      },
    },
    ...child("Read notes.txt", "r1", "read_file", { path: "notes.txt" }, "The notes say alpha."),
    ...child("Write result.txt", "e1", "write_file", { path: "result.txt", content: "done\n" }, "result.txt is written."),
  ];
  writeFileSync(join(dir, "agents.json"), JSON.stringify({ fixtures }));
  return dir;
}

/** The agent cards of the shown transcript: task, state and the child's id. */
function cards(session) {
  return session.execute(
    "return [...document.querySelectorAll('[data-testid=agent-card]')].map((e) => ({ id: e.dataset.agentId, state: e.dataset.state, text: e.textContent }));",
  );
}

export default async function agents({ log }) {
  const dirs = tempDirs();
  const mock = await startAimock(script(dirs.make("fixtures")), join(outDir(), "aimock-agents.log"));
  let session = null;
  try {
    const workspace = dirs.make("workspace");
    writeFileSync(join(workspace, "notes.txt"), "alpha\n");
    const dataDir = dirs.make("data");
    const config = join(dirs.make("config"), "config.toml");
    writeFileSync(config, `mode = "ask"\n[provider]\nkind = "openai"\nbase_url = "${mock.url}/v1"\nmodel = "mock-model"\n`);
    session = await launchApp({ dataDir, workspace, extraArgs: ["--config", config] });
    await waitFor(() => session.find("[data-testid=session-mode]"), "the session", 20000);

    await send(session, "delegate to two agents");
    const byTask = async () => {
      const all = await cards(session);
      return { reader: all.find((c) => c.text.includes("Read notes.txt")), writer: all.find((c) => c.text.includes("Write result.txt")) };
    };
    // The writer asks (the session is in `ask`); its card and the sidebar say it needs you.
    const { writer } = await waitUnlessError(
      session,
      async () => {
        const found = await byTask();
        return found.reader && found.writer?.state === "needs-you" ? found : null;
      },
      "two agent cards, the writer needing you",
      30000,
    );
    await waitFor(async () => (await rail(session)).find((s) => s.id === writer.id)?.state === "needs-you", "the writer needing you in the sidebar", 15000);
    assert.equal(existsSync(join(workspace, "result.txt")), false, "nothing written before the answer");
    const shot = await screenshot(session, "agents-cards.png");
    log(`screenshot ${shot.file}, ${shot.colours} colours`);

    // The inbox has the child's question under its name; approving it lets the child write.
    await (await session.find("[data-testid=nav-approvals]")).click();
    const card = `section[aria-label=Approvals] [data-testid=approval-card][data-session-id="${writer.id}"]`;
    await waitFor(() => session.find(card), "the writer's question in the inbox", 15000);
    const from = await session.execute(
      `return [...document.querySelectorAll('[data-testid=inbox-from]')].map((e) => e.textContent).join(' | ');`,
    );
    assert.match(from, new RegExp(`agent ${writer.id.slice(0, 8)} of delegate to two agents`), from);
    await screenshot(session, "agents-inbox.png");
    await (await session.find(`${card} [data-testid=approve-once]`)).click();
    await waitFor(() => existsSync(join(workspace, "result.txt")), "the writer's file", 30000);
    assert.equal(readFileSync(join(workspace, "result.txt"), "utf8"), "done\n");

    // The parent's wait returns; both cards are done, each with its answer.
    await (await session.find("[data-testid=nav-chat]")).click();
    await waitUnlessError(
      session,
      async () => {
        const texts = await messageTexts(session, "assistant");
        return texts.some((t) => t.includes("Both agents reported back."));
      },
      "the parent's answer",
      30000,
    );
    const done = await byTask();
    assert.equal(done.reader.state, "idle");
    assert.equal(done.writer.state, "idle");
    assert.match(done.reader.text, /The notes say alpha\./);
    assert.match(done.writer.text, /result\.txt is written\./);
    await screenshot(session, "agents-done.png");

    // The reader's card opens the child's own session: its call and its answer.
    const open = await session.find(`[data-testid=agent-card][data-agent-id="${done.reader.id}"] [data-testid=agent-open]`);
    await open.click();
    await waitFor(async () => (await rail(session)).find((s) => s.current)?.id === done.reader.id, "the reader shown", 15000);
    await waitFor(() => session.find("[data-testid=tool-call][data-tool=read_file]"), "the reader's read_file call", 15000);
    const texts = await messageTexts(session, "assistant");
    assert.ok(texts.some((t) => t.includes("The notes say alpha.")), texts.join(" | "));
    await screenshot(session, "agents-child.png");
  } catch (err) {
    const window = session ? await describeWindow(session, "agents") : "(not started)";
    const calls = session
      ? await session
          .execute("document.querySelectorAll('.tool-call-head[aria-expanded=false]').forEach((b) => b.click()); return [...document.querySelectorAll('[data-testid=tool-call]')].map((e) => e.textContent).join(' || ');")
          .catch(() => "")
      : "";
    log(`calls: ${calls}`);
    throw new Error(`${err.message}\nwindow: ${window}`, { cause: err });
  } finally {
    await session?.close().catch(() => {});
    await mock.stop();
    dirs.cleanup();
  }
}
