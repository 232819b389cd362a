// The network, by host, in the window: launched with `[sandbox.network] mode = "ask"` (and
// `127.0.0.1` listed, so the loopback address is reached once a person allows the name), a pinned
// name `new.test` for a page the test serves on loopback, and a rule letting `curl` run in auto.
// The model (aimock) runs `curl http://new.test:PORT/`; the connection waits on a network approval
// card inside the bash card (`data-kind="network"`, `data-host`). Allowed for the session, the
// command gets the page, its card lists the host as reached, Settings lists `new.test:PORT` among
// the session's hosts, and the Audit view has the connection as a `network` row.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { startAimock } from "./lib/aimock.mjs";
import { describeWindow, launchApp, screenshot } from "./lib/app.mjs";
import { messageTexts, send, waitUnlessError } from "./lib/chat.mjs";
import { outDir, tempDirs } from "./lib/env.mjs";
import { fatal, waitFor } from "./lib/webdriver.mjs";

const PROMPT = "fetch the pinned page";
const ANSWER = "The pinned page says hello.";
const BASH = "[data-testid=tool-call][data-tool=bash]";
const NETWORK_CARD = `${BASH} [data-testid=approval-card][data-kind=network]`;

/** A plain HTTP server on a free loopback port answering every request with a greeting. */
function servePage() {
  let served = 0;
  const server = createServer((_req, res) => {
    served++;
    res.writeHead(200, { "content-type": "text/plain", connection: "close" });
    res.end("hello from ok.test\n");
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () =>
      resolve({
        port: server.address().port,
        served: () => served,
        close: () =>
          new Promise((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      }),
    );
  });
}

/** The model's script: run `command` with bash, then answer; written at run time (the port is the server's). */
function fixtures(command) {
  return {
    fixtures: [
      {
        match: { userMessage: PROMPT, hasToolResult: false },
        response: { toolCalls: [{ id: "call_fetch", name: "bash", arguments: { command } }] },
      },
      { match: { userMessage: PROMPT, hasToolResult: true }, response: { content: ANSWER } },
    ],
  };
}

export default async function network({ log }) {
  const dirs = tempDirs();
  const page = await servePage();
  let mock = null;
  let session = null;
  try {
    const command = `curl -sS http://new.test:${page.port}/`;
    const script = join(dirs.make("fixtures"), "network.json");
    writeFileSync(script, JSON.stringify(fixtures(command), null, 2));
    mock = await startAimock(script, join(outDir(), "aimock-network.log"));

    const workspace = dirs.make("workspace");
    const config = join(dirs.make("config"), "bridle.toml");
    // `curl` is a medium finding (network-download), which auto asks about: the rule lets the
    // command itself run, so the only question is the one about the host.
    writeFileSync(
      config,
      `mode = "auto"\n[rules]\nallow = ["bash(curl *)"]\n` +
        `[sandbox.network]\nmode = "ask"\nallow = ["127.0.0.1"]\n` +
        `[provider]\nkind = "openai"\nbase_url = "${mock.url}/v1"\nmodel = "mock-model"\ncontext_window = 128000\n`,
    );
    session = await launchApp({
      dataDir: dirs.make("data"),
      workspace,
      extraArgs: ["--config", config],
      env: { BRIDLE_NET_RESOLVE: "new.test=127.0.0.1" },
    });

    await send(session, `please ${PROMPT}`);
    const card = await waitUnlessError(session, async () => {
      const card = await session.find(NETWORK_CARD);
      if (card) return card;
      if (await session.find("[data-testid=approval-card][data-tool=bash]")) {
        throw fatal("the bash call itself asked for approval: the rule allowing curl did not apply");
      }
      const ended = await session.find(`${BASH}:not([data-status=running]):not([data-status=pending])`);
      if (ended) throw fatal(`the bash call ended "${await ended.attribute("data-status")}" without asking about the host`);
      return null;
    }, "the network approval card", 45000);
    assert.equal(await card.attribute("data-kind"), "network");
    assert.equal(await card.attribute("data-tool"), null, "a host question is no tool call");
    assert.equal(await card.attribute("data-host"), "new.test");
    assert.equal(await card.attribute("data-port"), String(page.port));
    assert.match(await card.text(), new RegExp(`Connect to new\\.test:${page.port}\\?`));
    assert.equal(await (await session.find(`${NETWORK_CARD} [data-testid=approval-command]`)).text(), command);
    const call = await session.find(BASH);
    assert.equal(await call.attribute("data-status"), "pending", "the command waits while its connection does");
    assert.equal(page.served(), 0, "nothing reached the page before the answer");
    const pending = await screenshot(session, "network-pending.png");
    log(`screenshot ${pending.file}, ${pending.colours} colours`);

    await (await session.find(`${NETWORK_CARD} [data-testid=approve-session]`)).click();
    await waitUnlessError(
      session,
      async () => (await messageTexts(session, "assistant")).some((t) => t.includes(ANSWER)),
      "the model's final answer",
      45000,
    );
    assert.equal(await call.attribute("data-status"), "ok");
    assert.equal(await session.find(NETWORK_CARD), null, "the network card is gone once answered");
    assert.ok(page.served() >= 1, "the page was served");
    const host = await session.find(`${BASH} [data-testid=bash-host][data-host="new.test"]`);
    assert.ok(host, "the bash card lists new.test");
    assert.equal(await host.attribute("data-allowed"), "true");
    assert.equal(await host.attribute("data-port"), String(page.port));
    assert.match(await host.text(), new RegExp(`^reached new\\.test:${page.port} — \\d+ connections?, `));
    // The command's output is the page.
    await (await session.find(`${BASH} .tool-call-head`)).click();
    await waitFor(async () => (await call.text()).includes("hello from ok.test"), "the page in the bash card's output", 10000);
    const shot = await screenshot(session, "network.png");
    log(`screenshot ${shot.file}, ${shot.colours} colours`);

    // Settings: the config's network, and the host allowed for this session.
    await (await session.find("[data-testid=nav-settings]")).click();
    await session.waitForElement(`[data-testid=session-host][data-host="new.test:${page.port}"]`, 15000);
    assert.equal(await (await session.find("[data-testid=settings-network-mode]")).property("value"), "ask");
    assert.equal(await (await session.find("[data-testid=settings-network-allow]")).property("value"), "127.0.0.1");
    const settings = await screenshot(session, "network-settings.png");
    log(`screenshot ${settings.file}, ${settings.colours} colours`);

    // Audit: the connection is on the record, allowed, with its host.
    await (await session.find("[data-testid=nav-audit]")).click();
    const row = await waitFor(() => session.find("[data-testid=audit-row][data-kind=network]"), "a network audit row", 20000);
    assert.equal(await row.attribute("data-decision"), "allow");
    // A row's cell, not the <tr>: WebKitWebDriver calls a table row not interactable.
    await (await session.find("[data-testid=audit-row][data-kind=network] td")).click();
    const payload = await (await session.waitForElement("[data-testid=audit-details] [data-testid=audit-payload]", 5000)).text();
    assert.match(payload, /"host": ?"new\.test"/, payload);
    assert.match(payload, new RegExp(`"port": ?${page.port}`), payload);
    const audit = await screenshot(session, "network-audit.png");
    log(`screenshot ${audit.file}, ${audit.colours} colours`);
  } catch (err) {
    const window = session ? await describeWindow(session, "network") : "(not started)";
    const journal = JSON.stringify(await mock?.journal().catch(() => null)).slice(0, 3000);
    throw new Error(`${err.message}\nwindow: ${window}\naimock journal: ${journal}`, { cause: err });
  } finally {
    await session?.close().catch(() => {});
    await mock?.stop();
    await page.close();
    dirs.cleanup();
  }
}
