// A managed policy as the window shows it: the mode picker and the Settings mode list offer
// only the allowed modes, and the managed deny rule is listed read-only with its reason.
import { render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";
import { App } from "../../App";
import { SETTINGS, SUMMARY, fakeEngine } from "../../test/fakeEngine";

vi.mock("../../api/engine", () => import("../../test/fakeEngine").then((m) => m.engineModule));

const ALLOWED = ["read-only", "plan", "ask", "review", "auto-edit", "auto"] as const;
const REASON = "set by the managed policy /etc/bridle/managed.toml";

describe("a managed policy", () => {
  it("hides bypass from both mode lists and shows the managed deny rule read-only", async () => {
    const user = userEvent.setup();
    fakeEngine.sessionInfo.mockResolvedValue({ ...SUMMARY, allowedModes: [...ALLOWED] });
    fakeEngine.settingsGet.mockResolvedValue({
      ...SETTINGS,
      allowedModes: [...ALLOWED],
      managed: [{ key: "rules.deny", value: '["bash(git push*)"]', reason: REASON }],
    });
    render(<App />);
    const picker = await screen.findByTestId<HTMLSelectElement>("session-mode");
    const offered = Array.from(picker.options).map((o) => o.value);
    expect(offered).toEqual([...ALLOWED]);

    await user.click(await screen.findByTestId("nav-settings"));
    const section = await screen.findByTestId("managed-settings");
    const item = within(section).getByTestId("managed-setting");
    expect(item.textContent).toContain("bash(git push*)");
    expect(item.textContent).toContain(REASON);
    const modes = Array.from(screen.getByTestId<HTMLSelectElement>("settings-mode").options).map((o) => o.value);
    expect(modes).not.toContain("bypass");
    fakeEngine.sessionInfo.mockResolvedValue(SUMMARY);
    fakeEngine.settingsGet.mockResolvedValue(SETTINGS);
  });
});
