// The transcript parses the markdown of the rows about to scroll into view before they do, in
// the scroll's direction, nearest first (Markdown.warm does it between frames).
import { act, fireEvent, render } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";
import type { ChatItem } from "../../store/state";
import { MessageList } from "./MessageList";

const warmed: string[][] = [];
vi.mock("./Markdown", () => ({
  Markdown: ({ text }: { text: string }) => <div data-testid="markdown">{text}</div>,
  warm: (texts: string[]) => warmed.push(texts),
}));

const items: ChatItem[] = Array.from({ length: 2000 }, (_, i) =>
  i % 2 === 0
    ? { kind: "user" as const, key: `u${i}`, text: `question ${i}` }
    : { kind: "assistant" as const, key: `a${i}`, turnId: `t${i}`, text: `answer ${i}`, streaming: false },
);

describe("MessageList parses ahead", () => {
  it("scrolled up, the assistant texts just above the rendered rows, nearest first", async () => {
    // Loaded before, as in the window, where the first answer shown loads it.
    await import("./Markdown");
    const { container } = render(<MessageList items={items} approvals={[]} answering={[]} onAnswer={() => {}} workspace="/w" />);
    const el = container.querySelector(".message-list") as HTMLDivElement;
    let top = 64 * 1000;
    Object.defineProperty(el, "scrollTop", { configurable: true, get: () => top, set: (v: number) => void (top = v) });
    act(() => void fireEvent.scroll(el));
    top = 64 * 900;
    warmed.length = 0;
    act(() => void fireEvent.scroll(el));
    const first = Number(container.querySelector(".virtual-row")?.getAttribute("data-index"));
    expect(first).toBeGreaterThan(800);
    const expected = Array.from({ length: 24 }, (_, k) => first - 1 - k).filter((i) => i % 2 === 1).map((i) => `answer ${i}`);
    await vi.waitFor(() => expect(warmed).toContainEqual(expected), { timeout: 5000 });
  });
});
