// Approvals view tests: the App with the fake engine bridge, opened on the Approvals view. What
// is checked is what the user sees and the exact answer that reaches the engine.
import { render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, describe, expect, it, vi } from "vitest";
import { App } from "../../App";
import { approvalRequest, emit, fakeEngine } from "../../test/fakeEngine";

vi.mock("../../api/engine", () => import("../../test/fakeEngine").then((m) => m.engineModule));

const S = "s1";
const PREVIEW = "--- a/notes/a.txt\n+++ b/notes/a.txt\n@@ -1 +1 @@\n-old line\n+hi\n";

async function openApprovals() {
  const user = userEvent.setup();
  render(<App />);
  await screen.findByText("/home/dev/project");
  await user.click(screen.getByTestId("nav-approvals"));
  // The view's code is fetched when it is first opened.
  await screen.findByRole("region", { name: "Approvals" });
  return user;
}

/** The Approvals view (Chat stays mounted, hidden, with the same cards inline). */
const view = () => within(screen.getByRole("region", { name: "Approvals" }));
/** A sandboxed command's request for `host:port`, as the engine makes it. */
function networkRequest({ host = "new.test", port = 8080 }: { host?: string; port?: number } = {}) {
  const command = `curl -sS http://${host.includes(":") ? `[${host}]` : host}:${port}/`;
  return approvalRequest({
    id: "n1",
    callId: "b1",
    subject: { type: "host", host, port, command },
    findings: [
      {
        guardian: "network",
        rule: "unlisted-host",
        severity: "medium",
        message: `the command wants to connect to ${host}:${port}, which [sandbox.network] does not name`,
        contained: false,
      },
    ],
    callHash: "hash-n1",
  });
}
/** What `command` changed, held for the user (review mode), as the engine asks about it. */
function effectsRequest(command = "sed -i s/old line/hi/ notes/a.txt && touch b.txt") {
  return approvalRequest({
    id: "e1",
    callId: "b1",
    subject: { type: "changes", command, files: ["notes/a.txt", "b.txt"] },
    preview: `${PREVIEW}--- /dev/null\n+++ b/b.txt\n@@ -0,0 +1 @@\n+new\n`,
    findings: [{ guardian: "effects", rule: "review", severity: "low", message: "review mode: every change waits for you", contained: false }],
    callHash: "hash-e1",
  });
}
const resolveOps = () => fakeEngine.submit.mock.calls.map(([op]) => op).filter((op) => op.type === "resolveApproval");

describe("Approvals view", () => {
  afterEach(() => {
    fakeEngine.listener = null;
  });

  it("is one inbox: another session's question is listed under its name and branch, and answered", async () => {
    fakeEngine.sessionsList.mockResolvedValue([
      { id: "s9", workspace: "/data/worktrees/s9", title: "Fix the parser", createdAt: 0, updatedAt: 0, totalTokens: 0, state: "needs-you", waitingFor: "approval", waiting: 1, branch: "bridle/parser", worktree: null, agent: null },
    ]);
    fakeEngine.inbox.mockResolvedValue([approvalRequest({ id: "o1", sessionId: "s9", callHash: "hash-o1" })]);
    const user = await openApprovals();
    const card = await view().findByTestId("approval-card");
    expect(card.dataset.sessionId).toBe("s9");
    expect(view().getByTestId("inbox-from").textContent).toBe("Fix the parser · bridle/parser");
    expect(screen.getByTestId("inbox-badge").dataset.count).toBe("1");
    await user.keyboard("y");
    expect(resolveOps()).toEqual([expect.objectContaining({ approvalId: "o1", decision: "approveOnce", callHash: "hash-o1" })]);
    fakeEngine.inbox.mockResolvedValue([]);
    fakeEngine.sessionsList.mockResolvedValue([]);
  });

  it("lists every pending request with findings, diff preview and time left", async () => {
    await openApprovals();
    expect(view().getByText("Nothing is waiting for you.")).toBeTruthy();
    emit(
      {
        type: "approvalRequested",
        sessionId: S,
        request: approvalRequest({
          findings: [{ guardian: "config", rule: "exec_config", severity: "medium", message: "writes a file that runs later", contained: false }],
          preview: PREVIEW,
          expiresAt: Date.now() + 5 * 60_000,
        }),
      },
      { type: "approvalRequested", sessionId: S, request: approvalRequest({ id: "a2", callId: "c2", tool: "bash", arguments: '{"command":"ls"}' }) },
    );
    const cards = view().getAllByTestId("approval-card");
    expect(cards.map((c) => c.dataset.tool)).toEqual(["write_file", "bash"]);
    expect(screen.getByTestId("nav-approvals").textContent).toContain("2");

    const first = within(cards[0]!);
    const finding = first.getByTestId("approval-finding");
    expect(finding.dataset.severity).toBe("medium");
    expect(finding.textContent).toBe("medium writes a file that runs later (config/exec_config)");
    const preview = first.getByTestId("approval-preview");
    expect([...preview.querySelectorAll(".diff-line.add")].map((l) => l.textContent)).toEqual(["+hi\n"]);
    expect([...preview.querySelectorAll(".diff-line.del")].map((l) => l.textContent)).toEqual(["-old line\n"]);
    expect(first.getByTestId("approval-expiry").textContent).toMatch(/^expires in [45]:\d\d$/);
    expect(first.getByTestId<HTMLTextAreaElement>("approval-arguments").value).toBe('{\n  "path": "notes/a.txt",\n  "content": "hi"\n}');

    emit({ type: "approvalResolved", sessionId: S, approvalId: "a1", decision: "deny", source: "timeout" });
    expect(view().getAllByTestId("approval-card").map((c) => c.dataset.tool)).toEqual(["bash"]);
  });

  it("sends edited arguments as editedArguments, with the request's call hash", async () => {
    const user = await openApprovals();
    emit({ type: "approvalRequested", sessionId: S, request: approvalRequest({ callHash: "hash-42" }) });
    const args = view().getByTestId("approval-arguments");
    await user.clear(args);
    await user.click(args);
    await user.paste('{"path":"notes/b.txt","content":"hi"}');
    await user.click(view().getByTestId("approve-session"));
    expect(resolveOps()).toEqual([
      {
        type: "resolveApproval",
        approvalId: "a1",
        decision: "approveSession",
        feedback: null,
        editedArguments: '{"path":"notes/b.txt","content":"hi"}',
        callHash: "hash-42",
      },
    ]);
  });

  it("sends no edit when the arguments were not changed, and deny carries the feedback", async () => {
    const user = await openApprovals();
    emit(
      { type: "approvalRequested", sessionId: S, request: approvalRequest() },
      { type: "approvalRequested", sessionId: S, request: approvalRequest({ id: "a2", callId: "c2", callHash: "hash-a2" }) },
    );
    const [first, second] = view().getAllByTestId("approval-card");
    await user.click(within(first!).getByTestId("approve-always"));
    await user.type(within(second!).getByTestId("deny-feedback"), "use notes/c.txt instead");
    await user.click(within(second!).getByTestId("deny"));
    expect(resolveOps()).toEqual([
      { type: "resolveApproval", approvalId: "a1", decision: "approveAlways", feedback: null, editedArguments: null, callHash: "hash-a1" },
      { type: "resolveApproval", approvalId: "a2", decision: "deny", feedback: "use notes/c.txt instead", editedArguments: null, callHash: "hash-a2" },
    ]);
  });

  it("blocks approving while the edited arguments are not valid JSON, but still allows deny", async () => {
    const user = await openApprovals();
    emit({ type: "approvalRequested", sessionId: S, request: approvalRequest() });
    const args = view().getByTestId("approval-arguments");
    await user.type(args, "{backspace}");
    expect(view().getByTestId("approval-arguments-error").textContent).toContain("not valid JSON");
    expect(args.getAttribute("aria-invalid")).toBe("true");
    for (const id of ["approve-once", "approve-session", "approve-always"]) {
      expect(view().getByTestId(id)).toHaveProperty("disabled", true);
    }
    args.blur();
    await user.keyboard("y");
    expect(resolveOps()).toEqual([]);

    await user.type(args, "}");
    expect(view().queryByTestId("approval-arguments-error")).toBeNull();
    await user.click(view().getByTestId("deny"));
    expect(resolveOps()).toMatchObject([{ decision: "deny", editedArguments: null }]);
  });

  it("answers the first card, or the focused one, with y / s / a / n, but not while typing", async () => {
    const user = await openApprovals();
    emit(
      { type: "approvalRequested", sessionId: S, request: approvalRequest() },
      { type: "approvalRequested", sessionId: S, request: approvalRequest({ id: "a2", callId: "c2", callHash: "hash-a2" }) },
      { type: "approvalRequested", sessionId: S, request: approvalRequest({ id: "a3", callId: "c3", callHash: "hash-a3" }) },
    );
    await user.type(view().getAllByTestId("deny-feedback")[0]!, "nays");
    expect(resolveOps()).toEqual([]);
    view().getAllByTestId("deny-feedback")[0]!.blur();

    await user.keyboard("y");
    expect(resolveOps()).toMatchObject([{ approvalId: "a1", decision: "approveOnce", callHash: "hash-a1" }]);

    // The third card takes the keys once focus is inside it.
    const third = view().getAllByTestId("approval-card")[2]!;
    within(third).getByTestId("approve-once").focus();
    await user.keyboard("s");
    expect(resolveOps()[1]).toMatchObject({ approvalId: "a3", decision: "approveSession" });

    emit(
      { type: "approvalResolved", sessionId: S, approvalId: "a1", decision: "approveOnce", source: "user" },
      { type: "approvalResolved", sessionId: S, approvalId: "a3", decision: "approveSession", source: "user" },
    );
    await user.keyboard("n");
    expect(resolveOps()[2]).toMatchObject({ approvalId: "a2", decision: "deny", feedback: null });
    // A second key before the engine answers sends nothing more.
    await user.keyboard("a");
    expect(resolveOps()).toHaveLength(3);
  });

  it("shows a network request as a question about its host, with answers worded for hosts", async () => {
    const user = await openApprovals();
    emit({ type: "approvalRequested", sessionId: S, request: networkRequest() });
    const card = view().getByTestId("approval-card");
    expect(card.dataset).toMatchObject({ kind: "network", host: "new.test", port: "8080" });
    expect(card.dataset.tool).toBeUndefined();
    expect(within(card).getByText(/^Connect to/).textContent).toBe("Connect to new.test:8080?");
    expect(within(card).getByTestId("approval-command").textContent).toBe("curl -sS http://new.test:8080/");
    expect(within(card).getByTestId("approval-finding").textContent).toContain("which [sandbox.network] does not name");
    // Nothing to edit: the answer is about the host, not about the command's arguments.
    expect(within(card).queryByTestId("approval-arguments")).toBeNull();
    expect(["approve-once", "approve-session", "approve-always", "deny"].map((id) => within(card).getByTestId(id).textContent)).toEqual([
      "Allow for this commandy",
      "Allow for the sessions",
      "Always allow (adds new.test:8080 to [sandbox.network] allow)a",
      "Denyn",
    ]);

    await user.click(within(card).getByTestId("approve-session"));
    expect(resolveOps()).toEqual([
      { type: "resolveApproval", approvalId: "n1", decision: "approveSession", feedback: null, editedArguments: null, callHash: "hash-n1" },
    ]);
  });

  it("puts an IPv6 host in brackets, says what the second `a` writes, and denies with the feedback", async () => {
    const user = await openApprovals();
    emit({ type: "approvalRequested", sessionId: S, request: networkRequest({ host: "::1", port: 443 }) });
    const card = view().getByTestId("approval-card");
    expect(card.dataset.host).toBe("::1");
    expect(within(card).getByTestId("approve-always").textContent).toContain("adds [::1]:443 to [sandbox.network] allow");
    await user.keyboard("a");
    expect(view().getByTestId("approve-always-confirm").textContent).toContain("allow [::1]:443 for good");
    await user.keyboard("x");
    await user.type(within(card).getByTestId("deny-feedback"), "no local services");
    await user.click(within(card).getByTestId("deny"));
    expect(resolveOps()).toMatchObject([{ approvalId: "n1", decision: "deny", feedback: "no local services", editedArguments: null }]);
  });

  it("shows a held change as its command's diff, to keep or discard, with nothing to edit", async () => {
    const user = await openApprovals();
    emit({ type: "approvalRequested", sessionId: S, request: effectsRequest() });
    const card = view().getByTestId("approval-card");
    expect(card.dataset).toMatchObject({ kind: "effects" });
    expect(card.dataset.tool).toBeUndefined();
    expect(within(card).getByText(/^Keep what/).textContent).toBe("Keep what sed -i s/old line/hi/ notes/a.txt && touch b.txt changed?");
    expect(within(card).queryByTestId("approval-arguments")).toBeNull();
    const preview = within(card).getByTestId("approval-preview");
    expect([...preview.querySelectorAll(".diff-line.add")].map((l) => l.textContent)).toEqual(["+hi\n", "+new\n"]);
    expect([...preview.querySelectorAll(".diff-line.del")].map((l) => l.textContent)).toEqual(["-old line\n"]);
    // Only keep or discard: what one command wrote is never approved for the session or for good.
    expect(within(card).queryByTestId("approve-session")).toBeNull();
    expect(within(card).queryByTestId("approve-always")).toBeNull();
    expect(within(card).getByTestId("approve-once").textContent).toBe("Keep these changesy");
    await user.keyboard("s");
    await user.keyboard("a");
    await user.keyboard("a");
    expect(resolveOps()).toEqual([]);
    await user.type(within(card).getByTestId("deny-feedback"), "do not touch b.txt");
    await user.click(within(card).getByTestId("deny"));
    expect(resolveOps()).toEqual([
      { type: "resolveApproval", approvalId: "e1", decision: "deny", feedback: "do not touch b.txt", editedArguments: null, callHash: "hash-e1" },
    ]);
  });

  it("keeps a held change with y, and shortens a long command in the title", async () => {
    const user = await openApprovals();
    const long = `python3 -c '${"x = 1; ".repeat(30)}'`;
    emit({ type: "approvalRequested", sessionId: S, request: effectsRequest(long) });
    const card = view().getByTestId("approval-card");
    const title = within(card).getByText(/^Keep what/).textContent!;
    expect(title.length).toBeLessThan(90);
    expect(title).toContain("…");
    expect(within(card).getByTestId("approval-command").textContent).toBe(long);
    await user.keyboard("y");
    expect(resolveOps()).toEqual([
      { type: "resolveApproval", approvalId: "e1", decision: "approveOnce", feedback: null, editedArguments: null, callHash: "hash-e1" },
    ]);
  });

  it("asks for `a` twice before answering always, and any other key cancels", async () => {
    const user = await openApprovals();
    emit({ type: "approvalRequested", sessionId: S, request: approvalRequest() });
    await user.keyboard("a");
    expect(resolveOps()).toHaveLength(0);
    expect(view().getByTestId("approve-always-confirm").textContent).toContain("again");
    await user.keyboard("x");
    expect(view().queryByTestId("approve-always-confirm")).toBeNull();
    await user.keyboard("a");
    expect(resolveOps()).toHaveLength(0);
    await user.keyboard("a");
    expect(resolveOps()).toMatchObject([{ approvalId: "a1", decision: "approveAlways", callHash: "hash-a1" }]);
  });
});
