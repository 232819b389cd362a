// Settings and first run, through the whole App against the mocked shell: what the user sees,
// and exactly what reaches the shell when they save (the key only as the form's `apiKey`).
import { render, screen, waitFor } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";
import { App } from "../../App";
import { SETTINGS, fakeEngine } from "../../test/fakeEngine";

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
      sandboxNetwork: false,
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

  it("lists the configured MCP servers", async () => {
    const user = userEvent.setup();
    fakeEngine.settingsGet.mockResolvedValue({
      ...SETTINGS,
      mcpServers: [
        { name: "time", target: "mcp-server-time --local-timezone UTC", enabled: true },
        { name: "web", target: "http://127.0.0.1:3001/mcp", enabled: false },
      ],
    });
    render(<App />);
    await user.click(await screen.findByTestId("nav-settings"));
    const servers = await screen.findAllByTestId("settings-mcp-server");
    expect(servers.map((s) => s.textContent)).toEqual(["time mcp-server-time --local-timezone UTC", "web http://127.0.0.1:3001/mcpdisabled"]);
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
});
