// A lazy view's chunk is fetched once, whether preloaded or opened first; one opened after its
// chunk has come renders at once (no Suspense fallback), one opened before shows the fallback
// and then the view, and keeps its state when the chunk arrives.
import { act, render, screen } from "@testing-library/react";
import { Suspense, useState } from "react";
import { describe, expect, it, vi } from "vitest";
import { lazyView, preloadWhenIdle } from "./lazyView";

function Counter({ label }: { label: string }) {
  const [n, setN] = useState(0);
  return (
    <button type="button" onClick={() => setN(n + 1)}>
      {label} {n}
    </button>
  );
}

describe("lazyView", () => {
  it("renders at once after a preload, with one fetch", async () => {
    const load = vi.fn(() => Promise.resolve(Counter));
    const View = lazyView(load);
    await View.preload();
    await View.preload();
    render(
      <Suspense fallback={<p>Loading…</p>}>
        <View label="clicks" />
      </Suspense>,
    );
    expect(screen.getByRole("button").textContent).toBe("clicks 0");
    expect(screen.queryByText("Loading…")).toBeNull();
    expect(load).toHaveBeenCalledTimes(1);
  });

  it("shows the fallback until the chunk comes when opened first, and keeps the view's state after", async () => {
    let arrive: (c: typeof Counter) => void = () => {};
    const load = vi.fn(() => new Promise<typeof Counter>((resolve) => (arrive = resolve)));
    const View = lazyView(load);
    const { rerender } = render(
      <Suspense fallback={<p>Loading…</p>}>
        <View label="a" />
      </Suspense>,
    );
    expect(screen.getByText("Loading…")).toBeTruthy();
    await act(async () => arrive(Counter));
    await act(async () => screen.getByRole("button").click());
    rerender(
      <Suspense fallback={<p>Loading…</p>}>
        <View label="b" />
      </Suspense>,
    );
    expect(screen.getByRole("button").textContent).toBe("b 1");
    expect(load).toHaveBeenCalledTimes(1);
  });

  it("preloads the views one after another once the delay has passed, and not after a stop", async () => {
    vi.useFakeTimers();
    try {
      const first = lazyView(vi.fn(() => Promise.resolve(Counter)));
      const second = lazyView(vi.fn(() => Promise.resolve(Counter)));
      const spies = [vi.spyOn(first, "preload"), vi.spyOn(second, "preload")];
      preloadWhenIdle([first, second], 1000);
      await vi.advanceTimersByTimeAsync(999);
      expect(spies[0]).not.toHaveBeenCalled();
      await vi.advanceTimersByTimeAsync(2000);
      expect(spies[0]).toHaveBeenCalledTimes(1);
      expect(spies[1]).toHaveBeenCalledTimes(1);

      const third = lazyView(vi.fn(() => Promise.resolve(Counter)));
      const spy = vi.spyOn(third, "preload");
      const stop = preloadWhenIdle([third], 1000);
      stop();
      await vi.advanceTimersByTimeAsync(3000);
      expect(spy).not.toHaveBeenCalled();
    } finally {
      vi.useRealTimers();
    }
  });
});
