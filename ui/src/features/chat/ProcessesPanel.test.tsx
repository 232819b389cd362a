// The Processes panel through the whole App against a mocked engine bridge: the processes the
// session had when the window loaded, one started later (an event), Stop, the header's count, and
// the refresh every second while one runs.
import { render, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { ProcessInfo } from "../../api/types";
import { App } from "../../App";
import { emit, fakeEngine, processInfo } from "../../test/fakeEngine";

vi.mock("../../api/engine", () => import("../../test/fakeEngine").then((m) => m.engineModule));

const engine = fakeEngine;
const S = "s1";
const T0 = 1_700_000_000_000;

async function renderApp() {
  render(<App />);
  await screen.findByText("/home/dev/project");
  // The processes are asked for last when the session loads.
  await waitFor(() => expect(engine.processesList).toHaveBeenCalled());
}

const rows = () => screen.queryAllByTestId("process-row");
const row = (id: string) => rows().find((r) => r.dataset.processId === id)!;

describe("Processes panel", () => {
  afterEach(() => {
    engine.listener = null;
    engine.processesList.mockImplementation(async () => []);
    engine.processStop.mockImplementation(async (id: string) => processInfo({ id, state: "stopped", endedAt: Date.now() }));
  });

  it("shows nothing, and no count, while the session has no process", async () => {
    await renderApp();
    expect(screen.queryByTestId("processes-panel")).toBeNull();
    expect(screen.queryByTestId("processes-count")).toBeNull();
  });

  it("lists the processes with state, uptime, output and what a finished one changed", async () => {
    engine.processesList.mockImplementation(async () => [
      processInfo({ id: "p1", command: "npm run dev", tail: "tick 1\ntick 2\n" }),
      processInfo({ id: "p2", command: "make", state: "exited", exitCode: 0, startedAt: T0, endedAt: T0 + 3_400, changed: ["out/app.js", "out/app.css"] }),
      processInfo({ id: "p3", command: "<b>sleep</b> 60", state: "stopped", startedAt: T0, endedAt: T0 + 40_000, tail: "**not markdown**" }),
    ]);
    await renderApp();
    await screen.findByTestId("processes-panel");
    expect(rows().map((r) => [r.dataset.processId, r.dataset.state])).toEqual([
      ["p2", "exited"],
      ["p3", "stopped"],
      ["p1", "running"],
    ]);
    expect(within(row("p1")).getByTestId("process-state").textContent).toMatch(/^running · \d+ s$/);
    expect(within(row("p1")).getByTestId("process-output").textContent).toBe("tick 1\ntick 2\n");
    expect(within(row("p1")).getByTestId("process-stop")).toHaveProperty("disabled", false);
    expect(within(row("p1")).queryByTestId("process-changed")).toBeNull();

    expect(within(row("p2")).getByTestId("process-state").textContent).toBe("exited 0 · 3 s");
    expect(within(row("p2")).queryByTestId("process-stop")).toBeNull();
    const changed = within(row("p2")).getByTestId("process-changed");
    expect(changed.textContent).toContain("not undoable");
    expect(within(changed).getAllByRole("listitem").map((li) => li.textContent)).toEqual(["out/app.js", "out/app.css"]);

    // The model's text is shown as it is: no HTML, no markdown.
    expect(within(row("p3")).getByTestId("process-state").textContent).toBe("stopped · 40 s");
    expect(row("p3").textContent).toContain("<b>sleep</b> 60");
    expect(row("p3").querySelector("b, strong")).toBeNull();
    expect(within(row("p3")).getByTestId("process-output").textContent).toBe("**not markdown**");

    expect(screen.getByTestId("processes-count").textContent).toBe("1 running");
  });

  it("stops a running process: the button waits for the engine, then the row is stopped", async () => {
    const user = userEvent.setup();
    engine.processesList.mockImplementation(async () => [processInfo({ id: "p1" })]);
    let answer: (p: ProcessInfo) => void = () => {};
    engine.processStop.mockImplementation(() => new Promise((resolve) => (answer = resolve)));
    await renderApp();
    const stop = await screen.findByTestId("process-stop");
    await user.click(stop);
    expect(engine.processStop).toHaveBeenCalledExactlyOnceWith("p1");
    expect(stop).toHaveProperty("disabled", true);
    expect(screen.getByTestId("processes-count").textContent).toBe("1 running");

    answer(processInfo({ id: "p1", state: "stopped", endedAt: Date.now() }));
    await waitFor(() => expect(row("p1").dataset.state).toBe("stopped"));
    expect(screen.queryByTestId("process-stop")).toBeNull();
    expect(screen.queryByTestId("processes-count")).toBeNull();
    expect(within(row("p1")).getByTestId("process-state").textContent).toMatch(/^stopped · \d+ s$/);
  });

  it("says why a stop failed and lets it be tried again", async () => {
    const user = userEvent.setup();
    engine.processesList.mockImplementation(async () => [processInfo({ id: "p1" })]);
    engine.processStop.mockRejectedValueOnce({ code: "no_such_process", message: "no background process p1", retryable: false });
    await renderApp();
    await user.click(await screen.findByTestId("process-stop"));
    const alert = await within(row("p1")).findByRole("alert");
    expect(alert.textContent).toContain("no background process p1");
    expect(screen.getByTestId("process-stop")).toHaveProperty("disabled", false);
    expect(row("p1").dataset.state).toBe("running");

    await user.click(screen.getByTestId("process-stop"));
    await waitFor(() => expect(row("p1").dataset.state).toBe("stopped"));
    expect(within(row("p1")).queryByRole("alert")).toBeNull();
  });

  it("adds a process the engine reports, and updates it when it ends", async () => {
    await renderApp();
    expect(screen.queryByTestId("processes-panel")).toBeNull();
    emit({ type: "processChanged", sessionId: S, process: processInfo({ id: "p4", command: "cargo watch" }) });
    expect(rows().map((r) => [r.dataset.processId, r.dataset.state])).toEqual([["p4", "running"]]);
    expect(row("p4").textContent).toContain("cargo watch");
    expect(screen.getByTestId("processes-count").textContent).toBe("1 running");

    emit({ type: "processChanged", sessionId: S, process: processInfo({ id: "p5", command: "npm test" }) });
    expect(screen.getByTestId("processes-count").textContent).toBe("2 running");

    emit({
      type: "processChanged",
      sessionId: S,
      process: processInfo({ id: "p4", command: "cargo watch", state: "exited", exitCode: 1, startedAt: T0, endedAt: T0 + 2_000 }),
    });
    expect(rows()).toHaveLength(2);
    expect(row("p4").dataset.state).toBe("exited");
    expect(within(row("p4")).getByTestId("process-state").textContent).toBe("exited 1 · 2 s");
    expect(screen.getByTestId("processes-count").textContent).toBe("1 running");
  });

  it("refreshes the output every second while a process runs, and stops when none does", async () => {
    await renderApp();
    const calls = engine.processesList.mock.calls.length;
    engine.processesList.mockImplementation(async () => [processInfo({ id: "p1", tail: "tick 7\n" })]);
    emit({ type: "processChanged", sessionId: S, process: processInfo({ id: "p1" }) });
    await waitFor(() => expect(within(row("p1")).getByTestId("process-output").textContent).toBe("tick 7\n"), { timeout: 2500 });
    expect(engine.processesList.mock.calls.length).toBeGreaterThan(calls);

    // Once it has ended, the refreshing stops (the list would still say running: nothing asks).
    emit({ type: "processChanged", sessionId: S, process: processInfo({ id: "p1", state: "exited", exitCode: 0, endedAt: Date.now(), tail: "tick 8\n" }) });
    expect(row("p1").dataset.state).toBe("exited");
    const after = engine.processesList.mock.calls.length;
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(engine.processesList.mock.calls.length).toBe(after);
    expect(row("p1").dataset.state).toBe("exited");
    expect(within(row("p1")).getByTestId("process-output").textContent).toBe("tick 8\n");
  });
});
