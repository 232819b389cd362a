// The transcript is virtualised: a session of thousands of entries puts only a window of them
// in the DOM, and which window follows the scroll position. At the bottom it stays at the bottom
// as entries arrive; scrolled up, it stays where the user put it.
import { act, fireEvent, render, screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { ApprovalRequest } from "../../api/types";
import type { ChatItem } from "../../store/state";
import { approvalRequest } from "../../test/fakeEngine";
import { MessageList } from "./MessageList";

function transcript(n: number): ChatItem[] {
  return Array.from({ length: n }, (_, i) =>
    i % 2 === 0
      ? { kind: "user" as const, key: `u${i}`, text: `question ${i}` }
      : { kind: "assistant" as const, key: `a${i}`, turnId: `t${i}`, text: `answer ${i}`, streaming: false },
  );
}

/** A session's worth of every kind of entry, ending on a call that waits for approval. */
function mixedSession(turns: number): { items: ChatItem[]; approvals: ApprovalRequest[] } {
  const items: ChatItem[] = [];
  for (let t = 0; t < turns; t++) {
    const call = { id: `c${t}`, providerId: `p${t}`, name: t % 2 ? "bash" : "read_file", arguments: `{"n":${t}}` };
    const waiting = t === turns - 1;
    items.push(
      { kind: "user", key: `u${t}`, text: `question ${t}` },
      { kind: "assistant", key: `a${t}`, turnId: `t${t}`, text: `## answer ${t}\n\n- a\n- b`, streaming: false },
      { kind: "tool", key: `c${t}`, turnId: `t${t}`, call, status: waiting ? "pending" : "ok", durationMs: waiting ? null : 12, result: null },
    );
    if (t % 10 === 9) items.push({ kind: "notice", key: `n${t}`, text: `notice ${t}`, tone: "info" });
  }
  return { items, approvals: [approvalRequest({ id: "a-last", callId: `c${turns - 1}`, tool: "read_file" })] };
}

/**
 * Plays the browser's part for the list's scroll box, which jsdom does not lay out: a scroll
 * offset clamped to the content (as tall as the virtual space the list sizes).
 */
function layOut(list: HTMLElement): void {
  let top = 0;
  const height = () => Number.parseFloat((list.querySelector(".virtual-space") as HTMLElement | null)?.style.height ?? "0") || 0;
  Object.defineProperty(list, "scrollHeight", { configurable: true, get: height });
  Object.defineProperty(list, "scrollTop", {
    configurable: true,
    get: () => top,
    set: (v: number) => {
      top = Math.max(0, Math.min(v, height() - list.clientHeight));
    },
  });
}

const props = { answering: [], onAnswer: () => {}, workspace: "/w" };
const list = (container: HTMLElement) => container.querySelector(".message-list") as HTMLDivElement;
/** The browser reports a scroll after the offset moved. */
const scrolled = (el: HTMLElement) => act(() => void fireEvent.scroll(el));
const atBottom = (el: HTMLElement) => el.scrollTop === el.scrollHeight - el.clientHeight;

describe("MessageList", () => {
  it("renders a bounded window of a 5,000-message session", () => {
    render(<MessageList items={transcript(5000)} approvals={[]} {...props} />);
    const shown = screen.getAllByTestId("message");
    expect(shown.length).toBeGreaterThan(5);
    expect(shown.length).toBeLessThan(60);
  });

  it("moves the window with the scroll position", () => {
    const { container } = render(<MessageList items={transcript(5000)} approvals={[]} {...props} />);
    const el = list(container);
    // jsdom keeps no scroll offset of its own: play the browser's part.
    Object.defineProperty(el, "scrollTop", { configurable: true, value: 64 * 2500 });
    fireEvent.scroll(el);
    const texts = screen.getAllByTestId("message").map((m) => m.textContent ?? "");
    expect(texts.some((t) => t.includes(" 2500"))).toBe(true);
    expect(texts.some((t) => t.includes("question 0"))).toBe(false);
    expect(texts.length).toBeLessThan(60);
  });

  it("opens a long session at its newest entry, with the waiting call's approval card and the cards' attributes", () => {
    const { container, rerender } = render(<MessageList items={[]} approvals={[]} {...props} />);
    const el = list(container);
    layOut(el);
    // 5,000 entries: 1,613 turns of question, answer and tool card, and 161 notices.
    const { items, approvals } = mixedSession(1613);
    expect(items).toHaveLength(5000);
    rerender(<MessageList items={items} approvals={approvals} {...props} />);
    scrolled(el);

    expect(atBottom(el)).toBe(true);
    const rows = container.querySelectorAll(".virtual-row");
    expect(rows.length).toBeLessThan(40);
    expect(container.querySelectorAll("*").length).toBeLessThan(600);
    const cards = screen.getAllByTestId("tool-call");
    const waiting = cards[cards.length - 1]!;
    expect([waiting.dataset.tool, waiting.dataset.status]).toEqual(["read_file", "pending"]);
    expect(waiting.querySelector('[data-testid="approval-card"]')).not.toBeNull();
    expect(screen.getAllByTestId("message").every((m) => m.dataset.role === "user" || m.dataset.role === "assistant")).toBe(true);
    expect(screen.queryByText("question 0")).toBeNull();
  });

  it("follows new entries at the bottom, and leaves a user who scrolled up where they are", () => {
    const { container, rerender } = render(<MessageList items={[]} approvals={[]} {...props} />);
    const el = list(container);
    layOut(el);
    let items = transcript(5000);
    rerender(<MessageList items={items} approvals={[]} {...props} />);
    scrolled(el);
    expect(atBottom(el)).toBe(true);

    // An answer streams in at the bottom: the list keeps up with it.
    items = [...items, { kind: "assistant", key: "live", turnId: "tl", text: "streaming", streaming: true }];
    rerender(<MessageList items={items} approvals={[]} {...props} />);
    scrolled(el);
    expect(atBottom(el)).toBe(true);
    expect(screen.getByText("streaming")).toBeTruthy();

    // The user scrolls up to read: more entries arrive, the view does not move.
    el.scrollTop = 64 * 1000;
    scrolled(el);
    items = [...items, { kind: "user", key: "late", text: "late question" }];
    rerender(<MessageList items={items} approvals={[]} {...props} />);
    scrolled(el);
    expect(el.scrollTop).toBe(64 * 1000);
    expect(screen.queryByText("late question")).toBeNull();
    expect(screen.getAllByTestId("message").some((m) => m.textContent?.includes("question 1000"))).toBe(true);

    // Back at the bottom, it follows again.
    el.scrollTop = el.scrollHeight;
    scrolled(el);
    items = [...items, { kind: "assistant", key: "later", turnId: "tl2", text: "later answer", streaming: false }];
    rerender(<MessageList items={items} approvals={[]} {...props} />);
    scrolled(el);
    expect(atBottom(el)).toBe(true);
    expect(screen.getByText("later answer")).toBeTruthy();
  });
});
