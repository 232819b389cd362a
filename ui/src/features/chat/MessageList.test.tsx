// The transcript is virtualised: a session of thousands of entries puts only a window of them
// in the DOM, and which window follows the scroll position.
import { fireEvent, render, screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { ChatItem } from "../../store/state";
import { MessageList } from "./MessageList";

function transcript(n: number): ChatItem[] {
  return Array.from({ length: n }, (_, i) =>
    i % 2 === 0
      ? { kind: "user" as const, key: `u${i}`, text: `question ${i}` }
      : { kind: "assistant" as const, key: `a${i}`, turnId: `t${i}`, text: `answer ${i}`, streaming: false },
  );
}

describe("MessageList", () => {
  it("renders a bounded window of a 5,000-message session", () => {
    render(<MessageList items={transcript(5000)} approvals={[]} answering={[]} onAnswer={() => {}} workspace="/w" />);
    const shown = screen.getAllByTestId("message");
    expect(shown.length).toBeGreaterThan(5);
    expect(shown.length).toBeLessThan(60);
  });

  it("moves the window with the scroll position", () => {
    const { container } = render(<MessageList items={transcript(5000)} approvals={[]} answering={[]} onAnswer={() => {}} workspace="/w" />);
    const list = container.querySelector(".message-list") as HTMLDivElement;
    // jsdom keeps no scroll offset of its own: play the browser's part.
    Object.defineProperty(list, "scrollTop", { configurable: true, value: 64 * 2500 });
    fireEvent.scroll(list);
    const texts = screen.getAllByTestId("message").map((m) => m.textContent ?? "");
    expect(texts.some((t) => t.includes(" 2500"))).toBe(true);
    expect(texts.some((t) => t.includes("question 0"))).toBe(false);
    expect(texts.length).toBeLessThan(60);
  });
});
