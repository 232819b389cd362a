// Chat view tests: the whole App against a mocked engine bridge (src/api/engine.ts), so what is
// checked is what a user sees and what reaches the engine.
import { render, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Event, SandboxKind } from "../../api/types";
import { App } from "../../App";
import { SUMMARY, approvalRequest, emit, fakeEngine } from "../../test/fakeEngine";
import { bashResult, shellDetails } from "../../test/results";

vi.mock("../../api/engine", () => import("../../test/fakeEngine").then((m) => m.engineModule));

const engine = fakeEngine;

async function renderApp() {
  render(<App />);
  await screen.findByText("/home/dev/project");
}

const S = "s1";
const T = "t1";

describe("Chat view", () => {
  afterEach(() => {
    engine.listener = null;
  });

  it("sends the typed message on Enter and shows it", async () => {
    const user = userEvent.setup();
    await renderApp();
    const input = screen.getByTestId("chat-input");
    await user.type(input, "hello bridle{Enter}");
    expect(engine.submit).toHaveBeenCalledExactlyOnceWith({ type: "userMessage", text: "hello bridle" });
    expect(input).toHaveProperty("value", "");
    const sent = screen.getAllByTestId("message").filter((m) => m.dataset.role === "user");
    expect(sent.map((m) => m.textContent)).toEqual(["Youhello bridle"]);
  });

  it("completes a slash command as it is typed and shows what the command did", async () => {
    const user = userEvent.setup();
    await renderApp();
    const input = screen.getByTestId("chat-input");
    await user.type(input, "/sk");
    const offered = await screen.findAllByTestId("command-suggestion");
    expect(offered.map((o) => o.dataset.name)).toEqual(["skills"]);
    await user.keyboard("{Tab}");
    expect(input).toHaveProperty("value", "/skills");
    expect(screen.queryByTestId("command-suggestions")).toBeNull();
    await user.keyboard("{Enter}");
    expect(engine.submit).toHaveBeenCalledExactlyOnceWith({ type: "userMessage", text: "/skills" });
    emit({ type: "commandDone", sessionId: S, command: "/skills", output: "mine (user): trusted", ok: true });
    expect((await screen.findByTestId("notice")).textContent).toBe("mine (user): trusted");
    // The composer is free again: no turn started.
    expect(screen.queryByTestId("stop-button")).toBeNull();
  });

  it("inserts a new line on Shift+Enter without sending", async () => {
    const user = userEvent.setup();
    await renderApp();
    const input = screen.getByTestId("chat-input");
    await user.type(input, "line one{Shift>}{Enter}{/Shift}line two");
    expect(engine.submit).not.toHaveBeenCalled();
    expect(input).toHaveProperty("value", "line one\nline two");
    await user.click(screen.getByTestId("send-button"));
    expect(engine.submit).toHaveBeenCalledWith({ type: "userMessage", text: "line one\nline two" });
  });

  it("streams the answer, shows tool cards, and offers Stop while the turn runs", async () => {
    const user = userEvent.setup();
    await renderApp();
    expect(screen.queryByTestId("stop-button")).toBeNull();
    emit({ type: "turnStarted", sessionId: S, turnId: T }, { type: "assistantDelta", sessionId: S, turnId: T, text: "Reading" });
    const assistant = () => screen.getAllByTestId("message").filter((m) => m.dataset.role === "assistant");
    expect(assistant()[0]?.textContent).toContain("Reading");

    emit(
      { type: "assistantMessage", sessionId: S, turnId: T, text: "Reading the file." },
      { type: "toolCallBegin", sessionId: S, turnId: T, call: { id: "c1", providerId: "p1", name: "read_file", arguments: '{"path":"a.txt"}' } },
    );
    const card = screen.getByTestId("tool-call");
    expect(card.dataset.tool).toBe("read_file");
    expect(card.dataset.status).toBe("running");
    emit({
      type: "toolCallEnd",
      sessionId: S,
      turnId: T,
      status: "ok",
      durationMs: 1530,
      result: { toolCallId: "c1", output: "file contents here", isError: false, details: null, data: null, diff: null },
    });
    expect(card.dataset.status).toBe("ok");
    expect(within(card).getByText("1.5 s")).toBeTruthy();
    expect(within(card).queryByText("file contents here")).toBeNull();
    await user.click(within(card).getByRole("button", { expanded: false }));
    expect(within(card).getByText("file contents here")).toBeTruthy();

    // While the turn runs, a new message waits in the composer: Enter and Send do nothing.
    await user.type(screen.getByTestId("chat-input"), "next question{Enter}");
    expect(screen.getByTestId("send-button")).toHaveProperty("disabled", true);
    expect(engine.submit).not.toHaveBeenCalledWith({ type: "userMessage", text: "next question" });

    await user.click(screen.getByTestId("stop-button"));
    expect(engine.submit).toHaveBeenCalledWith({ type: "interrupt" });
    emit({ type: "turnAborted", sessionId: S, turnId: T, reason: "interrupted" });
    expect(screen.queryByTestId("stop-button")).toBeNull();
    expect(assistant().map((m) => m.textContent)).toEqual(["AssistantReading the file."]);
    await user.click(screen.getByTestId("send-button"));
    expect(engine.submit).toHaveBeenCalledWith({ type: "userMessage", text: "next question" });
  });

  it("shows token usage and the context meter in tokens", async () => {
    await renderApp();
    const meter = screen.getByTestId("context-meter");
    expect(meter.dataset.window).toBe("128000");
    expect(meter.dataset.used).toBe("0");
    emit({
      type: "tokenUsage",
      sessionId: S,
      turnId: T,
      usage: { inputTokens: 3000, cachedInputTokens: 0, outputTokens: 120 },
      total: { inputTokens: 12345, cachedInputTokens: 0, outputTokens: 678 },
      contextUsed: 32000,
      contextWindow: 128000,
    });
    expect(meter.dataset.used).toBe("32000");
    expect(meter.textContent).toContain("25%");
    expect(screen.getByTestId("token-usage").textContent).toBe("in 12.3kout 678");
  });

  it("shows engine errors in a banner that can be dismissed", async () => {
    const user = userEvent.setup();
    await renderApp();
    emit({ type: "error", sessionId: S, info: { code: "provider_rejected", message: "The API key was rejected.", retryable: false } });
    const alert = screen.getByRole("alert");
    expect(alert.textContent).toContain("The API key was rejected.");
    await user.click(within(alert).getByRole("button", { name: "Dismiss error" }));
    expect(screen.queryByRole("alert")).toBeNull();
  });

  it("answers an approval request from its card", async () => {
    const user = userEvent.setup();
    await renderApp();
    emit(
      { type: "turnStarted", sessionId: S, turnId: T },
      { type: "toolCallBegin", sessionId: S, turnId: T, call: { id: "c9", providerId: "p9", name: "shell", arguments: '{"command":"ls"}' } },
      {
        type: "approvalRequested",
        sessionId: S,
        request: approvalRequest({ id: "a9", callId: "c9", tool: "shell", arguments: '{"command":"ls"}', callHash: "h" }),
      },
    );
    expect(screen.getByTestId("tool-call").dataset.status).toBe("pending");
    expect(screen.getByTestId("approval-card").dataset.tool).toBe("shell");
    expect(screen.getByTestId("nav-approvals").textContent).toContain("1");
    await user.click(screen.getByTestId("approve-once"));
    expect(engine.submit).toHaveBeenCalledWith({
      type: "resolveApproval",
      approvalId: "a9",
      decision: "approveOnce",
      feedback: null,
      editedArguments: null,
      callHash: "h",
    });
    // Until the engine resolves it, the card cannot send a second answer.
    expect(screen.getByTestId("approve-once")).toHaveProperty("disabled", true);
    emit({ type: "approvalResolved", sessionId: S, approvalId: "a9", decision: "approveOnce", source: "user" });
    expect(screen.queryByTestId("approval-card")).toBeNull();
    expect(screen.getByTestId("tool-call").dataset.status).toBe("running");
  });

  it("shows requests left waiting before the window listened, once", async () => {
    const left = approvalRequest({ id: "a-old", tool: "edit_file" });
    engine.pendingApprovals.mockResolvedValueOnce([left]);
    await renderApp();
    await screen.findByTestId("approval-card");
    emit({ type: "approvalRequested", sessionId: S, request: left });
    expect(screen.getAllByTestId("approval-card").map((c) => c.dataset.tool)).toEqual(["edit_file"]);
    expect(screen.getByTestId("nav-approvals").textContent).toContain("1");
  });

  it("shows a refused answer in the banner and lets the card answer again", async () => {
    const user = userEvent.setup();
    await renderApp();
    emit({ type: "approvalRequested", sessionId: S, request: approvalRequest() });
    await user.click(screen.getByTestId("deny"));
    expect(screen.getByTestId("deny")).toHaveProperty("disabled", true);
    emit({ type: "error", sessionId: S, info: { code: "approval_refused", message: "the call changed", retryable: false } });
    expect(screen.getByRole("alert").textContent).toContain("the call changed");
    expect(screen.getByTestId("deny")).toHaveProperty("disabled", false);
  });

  it("says so when the engine cannot be reached", async () => {
    engine.sessionInfo.mockRejectedValueOnce(new Error("command session_info not found"));
    render(<App />);
    expect((await screen.findByRole("alert")).textContent).toContain("command session_info not found");
    expect(screen.getByTestId("session-workspace").textContent).toBe("Not connected to the engine");
  });

  it("has every view in the nav, and Chat keeps its draft while another view is open", async () => {
    const user = userEvent.setup();
    await renderApp();
    await user.type(screen.getByTestId("chat-input"), "half a thought");
    for (const id of ["sessions", "approvals", "changes", "usage", "audit", "settings"]) {
      await user.click(screen.getByTestId(`nav-${id}`));
      // A view's chunk comes first, then the view shows.
      await waitFor(() => expect(screen.getByTestId(`nav-${id}`).getAttribute("aria-current")).toBe("page"));
      expect(screen.getByTestId("chat-view").className).toContain("parked");
      expect(screen.getByTestId("chat-view").hasAttribute("inert")).toBe(true);
    }
    expect(screen.queryByText("This view arrives in a later version.")).toBeNull();
    await user.click(screen.getByTestId("nav-chat"));
    expect(screen.getByTestId("chat-view").className).not.toContain("parked");
    expect(screen.getByTestId("chat-view").hasAttribute("inert")).toBe(false);
    expect(screen.getByTestId<HTMLTextAreaElement>("chat-input").value).toBe("half a thought");
  });

  it("names the instruction files the model was given and their token cost", async () => {
    engine.sessionInfo.mockResolvedValueOnce({
      ...SUMMARY,
      instructions: [
        { path: "/home/dev/.local/share/bridle/AGENTS.md", tokens: 40 },
        { path: "/home/dev/project/AGENTS.md", tokens: 1210 },
      ],
    });
    await renderApp();
    const chip = await screen.findByTestId("instruction-files");
    expect(chip.textContent).toBe("AGENTS.md + AGENTS.md · 1.25k tokens");
    expect(chip.getAttribute("title")).toContain("/home/dev/project/AGENTS.md (1210 tokens)");
  });

  it("shows the model's plan as a checklist that updates live", async () => {
    await renderApp();
    expect(screen.queryByTestId("plan-panel")).toBeNull();
    emit({
      type: "planUpdated",
      sessionId: S,
      turnId: T,
      items: [
        { step: "read the parser", status: "done" },
        { step: "fix the offsets", status: "in_progress" },
        { step: "run the tests", status: "pending" },
      ],
    });
    const items = () => screen.getAllByTestId("plan-item").map((i) => [i.dataset.status, i.textContent]);
    expect(items()).toEqual([
      ["done", "●read the parser (done)"],
      ["in_progress", "◐fix the offsets (in progress)"],
      ["pending", "○run the tests (pending)"],
    ]);
    expect(screen.getByTestId("plan-panel").textContent).toContain("1 of 3 done");
    emit({ type: "planUpdated", sessionId: S, turnId: T, items: [{ step: "read the parser", status: "done" }] });
    expect(items()).toEqual([["done", "●read the parser (done)"]]);
  });

  it("colours the diff inside a tool card as everywhere else", async () => {
    const user = userEvent.setup();
    await renderApp();
    emit(
      { type: "turnStarted", sessionId: S, turnId: T },
      { type: "toolCallBegin", sessionId: S, turnId: T, call: { id: "w1", providerId: "w1", name: "edit_file", arguments: "{}" } },
      {
        type: "toolCallEnd",
        sessionId: S,
        turnId: T,
        status: "ok",
        durationMs: 3,
        result: { toolCallId: "w1", output: "Updated a.txt", isError: false, details: null, data: null, diff: "@@ -1 +1 @@\n-old\n+new\n" },
      },
    );
    const card = screen.getByTestId("tool-call");
    await user.click(within(card).getByRole("button", { expanded: false }));
    const diff = within(card).getByTestId("tool-call-diff");
    expect(diff.querySelector(".diff-line.add")?.textContent).toContain("+new");
    expect(diff.querySelector(".diff-line.del")?.textContent).toContain("-old");
  });

  it("shows each turn's file changes as coloured diffs and asks the engine to undo a turn or a file", async () => {
    const user = userEvent.setup();
    await renderApp();
    emit(
      { type: "turnStarted", sessionId: S, turnId: "t1" },
      { type: "fileChanged", sessionId: S, turnId: "t1", callId: "c1", path: "src/a.rs", diff: "@@ -1 +1 @@\n-old\n+new\n" },
      { type: "turnCompleted", sessionId: S, turnId: "t1" },
      { type: "turnStarted", sessionId: S, turnId: "t2" },
      { type: "fileChanged", sessionId: S, turnId: "t2", callId: "c2", path: "b.txt", diff: "@@ -0,0 +1 @@\n+hi\n" },
      { type: "turnCompleted", sessionId: S, turnId: "t2" },
    );
    await user.click(screen.getByTestId("nav-changes"));
    const turns = await screen.findAllByTestId("changes-turn");
    expect(turns.map((t) => t.dataset.turnId)).toEqual(["t2", "t1"]);
    const diff = screen.getAllByTestId("diff-view").find((d) => d.dataset.path === "src/a.rs");
    expect(diff?.querySelector(".diff-line.add")?.textContent).toContain("+new");
    expect(diff?.querySelector(".diff-line.del")?.textContent).toContain("-old");
    await user.click(turns[1]!.querySelector<HTMLElement>("[data-testid=undo-turn]")!);
    expect(engine.submit).toHaveBeenLastCalledWith({ type: "undo", checkpointId: "t1", paths: null });
    await user.click(screen.getAllByTestId("undo-file").find((b) => b.dataset.path === "b.txt")!);
    expect(engine.submit).toHaveBeenLastCalledWith({ type: "undo", checkpointId: "t2", paths: ["b.txt"] });
    // The engine's answer takes the undone file off the list.
    emit({ type: "undone", sessionId: S, turnId: "t2", restored: [], removed: ["b.txt"], refused: [] });
    expect(screen.getAllByTestId("changes-turn").map((t) => t.dataset.turnId)).toEqual(["t1"]);
  });

  it("shows each turn's tokens as a chart and a table in Usage", async () => {
    const user = userEvent.setup();
    await renderApp();
    const usage = (turnId: string, input: number, output: number): Event => ({
      type: "tokenUsage",
      sessionId: S,
      turnId,
      usage: { inputTokens: input, cachedInputTokens: 10, outputTokens: output },
      total: { inputTokens: 0, cachedInputTokens: 0, outputTokens: 0 },
      contextUsed: input + output,
      contextWindow: 128000,
    });
    emit(usage("t1", 100, 20), usage("t1", 150, 30), usage("t2", 400, 50));
    await user.click(screen.getByTestId("nav-usage"));
    const rows = await screen.findAllByTestId("usage-row");
    expect(rows.map((r) => r.dataset.turnId)).toEqual(["t1", "t2"]);
    expect(rows[0]!.textContent).toBe("12502050");
    expect(screen.getByTestId("usage-chart").querySelectorAll("rect.bar-input")).toHaveLength(2);
  });

  it("switches the mode from the header and shows the engine's confirmation", async () => {
    const user = userEvent.setup();
    await renderApp();
    const picker = screen.getByTestId("session-mode");
    expect(picker).toHaveProperty("value", "ask");
    await user.selectOptions(picker, "plan");
    expect(engine.submit).toHaveBeenLastCalledWith({ type: "setMode", mode: "plan" });
    // Idle: the engine switches at once, so no "after this turn" hint.
    expect(screen.queryByTestId("session-mode-pending")).toBeNull();
    emit({ type: "modeChanged", sessionId: S, mode: "plan", sandbox: "bwrap", unsandboxedBecause: null, sandboxHome: null });
    expect(screen.getByTestId("session-mode")).toHaveProperty("value", "plan");
    const status = screen.getByTestId("sandbox-status");
    expect(status.dataset.sandbox).toBe("bwrap");
    expect(status.textContent).toBe("bash: sandboxed (bwrap)");
  });

  it("offers every mode, review between ask and auto-edit", async () => {
    const user = userEvent.setup();
    await renderApp();
    const picker = screen.getByTestId("session-mode");
    expect([...picker.querySelectorAll("option")].map((o) => o.value)).toEqual(["read-only", "plan", "ask", "review", "auto-edit", "auto", "bypass"]);
    expect(picker.querySelector<HTMLOptionElement>("option[value=review]")?.title).toContain("wait for you as a diff");
    await user.selectOptions(picker, "review");
    expect(engine.submit).toHaveBeenLastCalledWith({ type: "setMode", mode: "review" });
  });

  it("says a mode picked during a turn waits for the turn to end", async () => {
    const user = userEvent.setup();
    await renderApp();
    emit({ type: "turnStarted", sessionId: S, turnId: T });
    const picker = screen.getByTestId("session-mode");
    await user.selectOptions(picker, "plan");
    expect(engine.submit).toHaveBeenLastCalledWith({ type: "setMode", mode: "plan" });
    // Not in force yet: the select keeps the engine's mode, the hint says what comes.
    expect(picker).toHaveProperty("value", "ask");
    expect(screen.getByTestId("session-mode-pending").textContent).toBe("plan after this turn");
    emit(
      { type: "turnCompleted", sessionId: S, turnId: T },
      { type: "modeChanged", sessionId: S, mode: "plan", sandbox: "bwrap", unsandboxedBecause: null, sandboxHome: null },
    );
    expect(screen.getByTestId("session-mode")).toHaveProperty("value", "plan");
    expect(screen.queryByTestId("session-mode-pending")).toBeNull();
  });

  it("warns when bash runs unsandboxed, with the reason", async () => {
    engine.sessionInfo.mockResolvedValueOnce({
      ...SUMMARY,
      sandbox: "none",
      unsandboxedBecause: "bubblewrap (bwrap) is not installed",
    });
    render(<App />);
    const status = await screen.findByTestId("sandbox-status");
    expect(status.dataset.sandbox).toBe("none");
    expect(status.textContent).toContain("unsandboxed — bubblewrap (bwrap) is not installed");
    expect(status.className).toContain("unsandboxed");
  });

  it("says when the sandbox does not hold everything, and what it leaves open", async () => {
    engine.sessionInfo.mockResolvedValueOnce({
      ...SUMMARY,
      sandbox: "landlock",
      unsandboxedBecause: "Landlock shares /tmp and /dev/shm with the host",
    });
    render(<App />);
    const status = await screen.findByTestId("sandbox-status");
    expect(status.dataset.partial).toBe("true");
    expect(status.textContent).toBe("bash: sandboxed (landlock) · partial");
    expect(status.title).toContain("Landlock shares /tmp");
  });

  it("says the sandbox hides home, from the summary and then from modeChanged", async () => {
    const home = "home is hidden but for (read-only) ~/.cargo/bin, ~/.rustup, ~/.gitconfig";
    engine.sessionInfo.mockResolvedValueOnce({ ...SUMMARY, sandboxHome: home });
    render(<App />);
    const status = await screen.findByTestId("sandbox-status");
    expect(status.textContent).toBe("bash: sandboxed (bwrap) · home hidden");
    expect(status.dataset.home).toBe(home);
    expect(status.title).toContain(home);
    emit({ type: "modeChanged", sessionId: S, mode: "auto", sandbox: "bwrap", unsandboxedBecause: null, sandboxHome: null });
    expect(screen.getByTestId("sandbox-status").textContent).toBe("bash: sandboxed (bwrap)");
    expect(screen.getByTestId("sandbox-status").hasAttribute("data-home")).toBe(false);
  });

  it("says on each bash card how the command ran", async () => {
    await renderApp();
    const call = (id: string, escalate: boolean) => ({
      id,
      providerId: id,
      name: "bash",
      arguments: JSON.stringify({ command: "make", escalate }),
    });
    const end = (id: string, sandbox: SandboxKind, escalated: boolean) => ({
      type: "toolCallEnd" as const,
      sessionId: S,
      turnId: T,
      status: "ok" as const,
      durationMs: 12,
      result: {
        toolCallId: id,
        output: "exit code 0\n",
        isError: false,
        details: { type: "shell" as const, ...shellDetails({ sandbox, escalated, checkpointed: false }) },
        data: null,
        diff: null,
      },
    });
    emit(
      { type: "turnStarted", sessionId: S, turnId: T },
      { type: "toolCallBegin", sessionId: S, turnId: T, call: call("b1", false) },
      { type: "toolCallBegin", sessionId: S, turnId: T, call: call("b2", true) },
    );
    expect(screen.queryAllByTestId("bash-sandbox")).toEqual([]);
    emit(end("b1", "bwrap", false), end("b2", "none", true));
    const badges = screen.getAllByTestId("bash-sandbox");
    expect(badges.map((b) => [b.dataset.sandbox, b.textContent])).toEqual([
      ["bwrap", "sandboxed · bwrap"],
      ["none", "escalated · unsandboxed"],
    ]);
    expect(badges[1]?.className).toContain("unsandboxed");
    // What a command changed is not in a checkpoint: each card says undo cannot restore it.
    const notUndoable = screen.getAllByTestId("bash-not-checkpointed");
    expect(notUndoable.map((b) => b.textContent)).toEqual(["not undoable", "not undoable"]);
  });
  it("asks about a host inside the bash card whose command wants it, then lists the hosts it reached and was refused", async () => {
    const user = userEvent.setup();
    await renderApp();
    const command = "curl -sS http://new.test:8080/ https://blocked.test/";
    emit(
      { type: "turnStarted", sessionId: S, turnId: T },
      { type: "toolCallBegin", sessionId: S, turnId: T, call: { id: "b1", providerId: "b1", name: "bash", arguments: JSON.stringify({ command }) } },
      {
        type: "approvalRequested",
        sessionId: S,
        request: approvalRequest({
          id: "n1",
          callId: "b1",
          subject: { type: "host", host: "new.test", port: 8080, command },
          callHash: "hash-n1",
        }),
      },
    );
    const card = screen.getByTestId("tool-call");
    expect(card.dataset.status).toBe("pending");
    const approval = within(card).getByTestId("approval-card");
    expect(approval.dataset).toMatchObject({ kind: "network", host: "new.test", port: "8080" });
    await user.click(within(approval).getByTestId("approve-once"));
    expect(engine.submit).toHaveBeenLastCalledWith(expect.objectContaining({ type: "resolveApproval", approvalId: "n1", decision: "approveOnce" }));
    emit({ type: "approvalResolved", sessionId: S, approvalId: "n1", decision: "approveOnce", source: "user" });
    expect(card.dataset.status).toBe("running");
    expect(within(card).queryByTestId("bash-hosts")).toBeNull();

    const hosts = [
      { host: "new.test", port: 8080, allowed: true, connections: 2, sent: 156, received: 2_048, reason: null },
      { host: "blocked.test", port: 443, allowed: false, connections: 1, sent: 0, received: 0, reason: "blocked.test:443 is in [sandbox.network] deny" },
      { host: "one.test", port: 80, allowed: true, connections: 1, sent: 78, received: 1_530_000, reason: null },
    ];
    emit({
      type: "toolCallEnd",
      sessionId: S,
      turnId: T,
      status: "ok",
      durationMs: 40,
      result: bashResult({ hosts }),
    });
    const rows = within(within(card).getByTestId("bash-hosts")).getAllByTestId("bash-host");
    expect(rows.map((r) => [r.dataset.host, r.dataset.port, r.dataset.allowed, r.textContent])).toEqual([
      ["new.test", "8080", "true", "reached new.test:8080 — 2 connections, 156 B sent / 2.05 kB received"],
      ["blocked.test", "443", "false", "refused blocked.test:443 — blocked.test:443 is in [sandbox.network] deny"],
      ["one.test", "80", "true", "reached one.test:80 — 1 connection, 78 B sent / 1.53 MB received"],
    ]);
    expect(rows[1]?.className).toContain("refused");
  });

  it("shows no host list for a bash result without hosts", async () => {
    await renderApp();
    emit(
      { type: "turnStarted", sessionId: S, turnId: T },
      { type: "toolCallBegin", sessionId: S, turnId: T, call: { id: "b1", providerId: "b1", name: "bash", arguments: '{"command":"ls"}' } },
      {
        type: "toolCallEnd",
        sessionId: S,
        turnId: T,
        status: "ok",
        durationMs: 5,
        result: bashResult({ hosts: [] }),
      },
    );
    expect(screen.getByTestId("tool-call").dataset.status).toBe("ok");
    expect(screen.queryByTestId("bash-hosts")).toBeNull();
  });
});
