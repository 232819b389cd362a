// Settings and first run, through the whole App against the mocked shell: what the user sees,
// and exactly what reaches the shell when they save (the key only as the form's `apiKey`).
import { act, render, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";
import { App } from "../../App";
import type { McpServerList } from "../../api/types";
import { MCP_SERVER, SETTINGS, emitMcp, fakeEngine } from "../../test/fakeEngine";

vi.mock("../../api/engine", () => import("../../test/fakeEngine").then((m) => m.engineModule));

describe("Settings", () => {
  it("opens by itself on first run, lists the server's models, and saves the form with the key", async () => {
    const user = userEvent.setup();
    fakeEngine.settingsGet.mockResolvedValue({ ...SETTINGS, configured: false, provider: { ...SETTINGS.provider, model: "" } });
    fakeEngine.modelsList.mockResolvedValueOnce([
      { id: "m-small", contextWindow: 8192 },
      { id: "m-large", contextWindow: null },
    ]);
    render(<App />);
    expect(await screen.findByTestId("settings-first-run")).toBeTruthy();

    await user.selectOptions(screen.getByTestId("settings-provider-kind"), "ollama");
    expect(screen.getByTestId<HTMLInputElement>("settings-base-url").value).toBe("http://127.0.0.1:4010/v1");
    await user.selectOptions(screen.getByTestId("settings-provider-kind"), "openai");
    await user.clear(screen.getByTestId("settings-base-url"));
    await user.type(screen.getByTestId("settings-base-url"), "http://127.0.0.1:9999/v1");
    await user.type(screen.getByTestId("settings-api-key"), "sk-typed-key");
    await user.click(screen.getByTestId("settings-test-connection"));
    expect((await screen.findByTestId("settings-connection-status")).textContent).toContain("2 models");
    expect(fakeEngine.modelsList).toHaveBeenCalledWith(
      { kind: "openai", baseUrl: "http://127.0.0.1:9999/v1", model: "", contextWindow: null },
      "sk-typed-key",
    );
    // The first model is chosen; another can be picked from the server's own list.
    await user.selectOptions(screen.getByTestId("settings-model"), "m-large");
    await user.type(screen.getByTestId("settings-context-window"), "16384");
    await user.selectOptions(screen.getByTestId("settings-mode"), "auto-edit");
    await user.type(screen.getByTestId("settings-rules-deny-input"), "bash(git push*)");
    await user.click(screen.getByTestId("settings-save"));

    await waitFor(() => expect(fakeEngine.settingsSave).toHaveBeenCalledTimes(1));
    expect(fakeEngine.settingsSave.mock.calls[0]![0]).toEqual({
      provider: { kind: "openai", baseUrl: "http://127.0.0.1:9999/v1", model: "m-large", contextWindow: 16384 },
      apiKey: "sk-typed-key",
      mode: "auto-edit",
      rules: { allow: [], ask: [], deny: ["bash(git push*)"] },
      network: SETTINGS.network,
      limits: SETTINGS.limits,
    });
    expect((await screen.findByTestId("settings-status")).textContent).toContain("Saved");
    // The key field never shows a key back.
    expect(screen.getByTestId<HTMLInputElement>("settings-api-key").value).toBe("");
    fakeEngine.settingsGet.mockResolvedValue(SETTINGS);
  });

  it("shows what each rule means and why an invalid one is refused", async () => {
    const user = userEvent.setup();
    fakeEngine.rulesExplain.mockImplementation(async (_list, patterns) =>
      patterns.map((pattern) =>
        pattern.endsWith(")") || !pattern.includes("(")
          ? { pattern, meaning: `matches ${pattern}`, error: null }
          : { pattern, meaning: null, error: "must end with `)`" },
      ),
    );
    render(<App />);
    await user.click(await screen.findByTestId("nav-settings"));
    await user.type(await screen.findByTestId("settings-rules-allow-input"), "bash(cargo test*){Enter}bash(git status");
    await waitFor(() => expect(screen.getAllByTestId("settings-rule-meaning")).toHaveLength(2));
    const [ok, bad] = screen.getAllByTestId("settings-rule-meaning");
    expect(ok!.dataset.valid).toBe("true");
    expect(ok!.textContent).toContain("matches bash(cargo test*)");
    expect(bad!.dataset.valid).toBe("false");
    expect(bad!.textContent).toContain("must end with `)`");
  });

  it("shows each MCP server's live status and restarts, switches off, adds and removes servers", async () => {
    const user = userEvent.setup();
    const time = { ...MCP_SERVER, name: "time", command: "mcp-server-time", args: ["--local-timezone", "UTC"], envNames: ["TZ_TOKEN"] };
    const web = { ...MCP_SERVER, name: "web", command: "", args: [], url: "http://127.0.0.1:3001/mcp" };
    fakeEngine.settingsGet.mockResolvedValue({ ...SETTINGS, mcpServers: [time, web] });
    fakeEngine.mcpStatus.mockResolvedValue({
      seq: 1,
      servers: [
        { name: "time", status: "ready", error: null, tools: ["mcp__time__get_current_time", "mcp__time__convert_time"] },
        { name: "web", status: "starting", error: null, tools: [] },
      ],
    });
    render(<App />);
    await user.click(await screen.findByTestId("nav-settings"));
    const row = async (name: string) => (await screen.findAllByTestId("settings-mcp-server")).find((r) => r.dataset.name === name)!;
    await waitFor(async () => expect((await row("time")).dataset.status).toBe("ready"));
    expect((await row("time")).textContent).toContain("mcp-server-time --local-timezone UTC");
    expect(within(await row("time")).getByTestId("settings-mcp-status").textContent).toBe("ready · 2 tools");

    // The shell pushes a change: web failed, with why.
    emitMcp({
      seq: 2,
      servers: [
        { name: "time", status: "ready", error: null, tools: ["mcp__time__get_current_time"] },
        { name: "web", status: "failed", error: "initialize at http://127.0.0.1:3001/mcp failed: connection refused", tools: [] },
      ],
    });
    await waitFor(async () => expect((await row("web")).dataset.status).toBe("failed"));
    expect(within(await row("web")).getByTestId("settings-mcp-error").textContent).toContain("connection refused");

    await user.click(within(await row("web")).getByTestId("settings-mcp-restart"));
    expect(fakeEngine.mcpRestart).toHaveBeenCalledWith("web");

    // Switching off saves the same server, disabled, under its own name.
    fakeEngine.mcpSave.mockResolvedValueOnce({ ...SETTINGS, mcpServers: [{ ...time, enabled: false }, web] });
    await user.click(within(await row("time")).getByTestId("settings-mcp-toggle"));
    expect(fakeEngine.mcpSave).toHaveBeenLastCalledWith({ ...time, enabled: false }, "time");
    await waitFor(async () => expect(within(await row("time")).getByTestId("settings-mcp-toggle").textContent).toBe("Enable"));

    // A new stdio server, its arguments one per line; a refusal is shown and the form kept.
    await user.click(screen.getByTestId("settings-mcp-add"));
    await user.type(screen.getByTestId("settings-mcp-name"), "git");
    await user.type(screen.getByTestId("settings-mcp-command"), "uvx");
    await user.type(screen.getByTestId("settings-mcp-args"), "mcp-server-git{Enter}--repository{Enter}.");
    fakeEngine.mcpSave.mockRejectedValueOnce({ code: "settings_invalid", message: "an MCP server named `git` already exists", retryable: false });
    await user.click(screen.getByTestId("settings-mcp-form-save"));
    expect((await screen.findByTestId("settings-mcp-failure")).textContent).toContain("already exists");
    expect(screen.getByTestId("settings-mcp-form")).toBeTruthy();
    const git = { ...MCP_SERVER, name: "git", command: "uvx", args: ["mcp-server-git", "--repository", "."] };
    fakeEngine.mcpSave.mockResolvedValue({ ...SETTINGS, mcpServers: [{ ...time, enabled: false }, web, git] });
    await user.click(screen.getByTestId("settings-mcp-form-save"));
    expect(fakeEngine.mcpSave).toHaveBeenLastCalledWith({ ...MCP_SERVER, name: "git", command: "uvx", args: ["mcp-server-git", "--repository", "."] }, null);
    await waitFor(() => expect(screen.queryByTestId("settings-mcp-form")).toBeNull());

    // Editing keeps what the form does not show (the names of its secret variables are shown).
    await user.click(within(await row("web")).getByTestId("settings-mcp-edit"));
    expect(screen.getByTestId<HTMLSelectElement>("settings-mcp-transport").value).toBe("http");
    await user.clear(screen.getByTestId("settings-mcp-url"));
    await user.type(screen.getByTestId("settings-mcp-url"), "http://127.0.0.1:3002/mcp");
    await user.clear(screen.getByTestId("settings-mcp-timeout"));
    await user.type(screen.getByTestId("settings-mcp-timeout"), "30");
    await user.click(screen.getByTestId("settings-mcp-form-save"));
    expect(fakeEngine.mcpSave).toHaveBeenLastCalledWith({ ...web, url: "http://127.0.0.1:3002/mcp", startupTimeoutSecs: 30 }, "web");
    await waitFor(() => expect(screen.queryByTestId("settings-mcp-form")).toBeNull());

    // Removing needs a second click.
    await user.click(within(await row("web")).getByTestId("settings-mcp-remove"));
    expect(fakeEngine.mcpRemove).not.toHaveBeenCalled();
    await user.click(within(await row("web")).getByTestId("settings-mcp-remove"));
    expect(fakeEngine.mcpRemove).toHaveBeenCalledWith("web");
    fakeEngine.settingsGet.mockResolvedValue(SETTINGS);
    fakeEngine.mcpStatus.mockResolvedValue({ seq: 0, servers: [] });
    fakeEngine.mcpSave.mockResolvedValue(SETTINGS);
  });

  it("keeps the newest MCP list: an answer that arrives after a newer push is ignored", async () => {
    const user = userEvent.setup();
    fakeEngine.settingsGet.mockResolvedValue({ ...SETTINGS, mcpServers: [{ ...MCP_SERVER, name: "time", command: "mcp-server-time" }] });
    // The shell read the list (starting, seq 3) and its answer is slow to arrive.
    let answer: (list: McpServerList) => void = () => {};
    fakeEngine.mcpStatus.mockImplementationOnce(() => new Promise<McpServerList>((resolve) => (answer = resolve)));
    render(<App />);
    await user.click(await screen.findByTestId("nav-settings"));
    const status = async () => (await screen.findByTestId("settings-mcp-server")).dataset.status;
    await waitFor(() => expect(fakeEngine.mcpStatus).toHaveBeenCalled());

    // Meanwhile the server became ready and the shell pushed that (seq 4).
    const ready = { name: "time", status: "ready" as const, error: null, tools: ["mcp__time__get_current_time"] };
    emitMcp({ seq: 4, servers: [ready] });
    await waitFor(async () => expect(await status()).toBe("ready"));
    await act(async () => answer({ seq: 3, servers: [{ name: "time", status: "starting", error: null, tools: [] }] }));
    expect(await status()).toBe("ready");

    // A restart's answer is newer than the push: it is kept.
    const failed = { name: "time", status: "failed" as const, error: "it stopped (its connection closed)", tools: [] };
    fakeEngine.mcpRestart.mockResolvedValueOnce({ seq: 6, servers: [failed] });
    await user.click(screen.getByTestId("settings-mcp-restart"));
    await waitFor(async () => expect(await status()).toBe("failed"));
    // And a push older than that answer changes nothing.
    emitMcp({ seq: 5, servers: [ready] });
    expect(await status()).toBe("failed");
    fakeEngine.settingsGet.mockResolvedValue(SETTINGS);
  });

  it("edits the sandbox's network: the mode and the host patterns, one per line", async () => {
    const user = userEvent.setup();
    fakeEngine.settingsGet.mockResolvedValue({ ...SETTINGS, network: { mode: "off", allow: ["crates.io"], deny: [] } });
    render(<App />);
    await user.click(await screen.findByTestId("nav-settings"));
    const mode = await screen.findByTestId<HTMLSelectElement>("settings-network-mode");
    expect([...mode.options].map((o) => [o.value, o.textContent])).toEqual([
      ["off", "Off: no network"],
      ["ask", "Ask about unlisted hosts"],
      ["allow", "Only listed hosts"],
    ]);
    expect(mode.value).toBe("off");
    expect(screen.getByTestId<HTMLTextAreaElement>("settings-network-allow").value).toBe("crates.io");
    // No session host allowed yet.
    expect(screen.getByTestId("settings-session-hosts").textContent).toBe("none");
    expect(screen.queryAllByTestId("session-host")).toEqual([]);

    await user.selectOptions(mode, "ask");
    // Blank lines and spaces around a pattern are the user's; the list saved is the patterns.
    await user.type(screen.getByTestId("settings-network-allow"), "{Enter}  *.npmjs.org {Enter}{Enter}github.com:22");
    await user.type(screen.getByTestId("settings-network-deny"), "tracker.example.com");
    await user.click(screen.getByTestId("settings-save"));

    await waitFor(() => expect(fakeEngine.settingsSave).toHaveBeenCalledTimes(1));
    expect(fakeEngine.settingsSave.mock.calls[0]![0]).toEqual({
      provider: SETTINGS.provider,
      apiKey: "",
      mode: SETTINGS.mode,
      rules: SETTINGS.rules,
      network: { mode: "ask", allow: ["crates.io", "*.npmjs.org", "github.com:22"], deny: ["tracker.example.com"] },
      limits: SETTINGS.limits,
    });
    fakeEngine.settingsGet.mockResolvedValue(SETTINGS);
  });

  it("lists the hosts allowed for the open session", async () => {
    const user = userEvent.setup();
    fakeEngine.settingsGet.mockResolvedValue({ ...SETTINGS, sessionHosts: ["new.test:8080", "[::1]:443"] });
    render(<App />);
    await user.click(await screen.findByTestId("nav-settings"));
    const list = await screen.findByTestId("settings-session-hosts");
    expect(within(list).getAllByTestId("session-host").map((h) => [h.dataset.host, h.textContent])).toEqual([
      ["new.test:8080", "new.test:8080"],
      ["[::1]:443", "[::1]:443"],
    ]);
    fakeEngine.settingsGet.mockResolvedValue(SETTINGS);
  });

  it("keeps the form and says why when the shell refuses to save", async () => {
    const user = userEvent.setup();
    fakeEngine.settingsSave.mockRejectedValueOnce({ code: "settings_invalid", message: "the base URL must start with http://", retryable: false });
    render(<App />);
    await user.click(await screen.findByTestId("nav-settings"));
    await user.clear(await screen.findByTestId("settings-base-url"));
    await user.type(screen.getByTestId("settings-base-url"), "localhost:1");
    await user.click(screen.getByTestId("settings-save"));
    const status = await screen.findByTestId("settings-status");
    await waitFor(() => expect(status.textContent).toContain("must start with http://"));
    expect(screen.getByTestId<HTMLInputElement>("settings-base-url").value).toBe("localhost:1");
  });

  it("lists the skills found with their source, trust and error, and trusts the workspace's", async () => {
    const user = userEvent.setup();
    const alpha = {
      name: "alpha",
      description: "Greets.",
      source: "workspace",
      path: "/w/.agents/skills/alpha/SKILL.md",
      trusted: false,
      error: null,
      userInvocable: true,
      modelInvocable: true,
    };
    const broken = { ...alpha, name: "broken", description: "", path: "/w/.agents/skills/broken/SKILL.md", error: "the front matter has no `description`" };
    const mine = { ...alpha, name: "mine", source: "user", path: "/h/.agents/skills/mine/SKILL.md", trusted: true };
    fakeEngine.skillsList.mockResolvedValueOnce([alpha, broken, mine]);
    fakeEngine.skillsTrust.mockResolvedValueOnce([{ ...alpha, trusted: true }, broken, mine]);
    render(<App />);
    await user.click(await screen.findByTestId("nav-settings"));
    const rows = await screen.findAllByTestId("skill-row");
    expect(rows.map((r) => [r.dataset.name, r.dataset.source, r.dataset.trusted])).toEqual([
      ["alpha", "workspace", "false"],
      ["broken", "workspace", "false"],
      ["mine", "user", "true"],
    ]);
    expect(screen.getByTestId("skill-error").textContent).toContain("no `description`");
    await user.click(screen.getByTestId("skills-trust"));
    expect(fakeEngine.skillsTrust).toHaveBeenCalledOnce();
    await waitFor(() => expect(screen.getAllByTestId("skill-row")[0]?.dataset.trusted).toBe("true"));
    expect(screen.queryByTestId("skills-trust")).toBeNull();
  });
});
