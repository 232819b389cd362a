// A lazy view's chunk is fetched once, whether fetched before the view is shown or shown first;
// one shown after its chunk has come renders at once (no Suspense fallback), one shown before
// shows the fallback and then the view, and keeps its state when the chunk arrives.
import { act, render, screen } from "@testing-library/react";
import { Suspense, useState } from "react";
import { describe, expect, it, vi } from "vitest";
import { lazyView } from "./lazyView";

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
    const View = lazyView("Counter", load);
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
    const View = lazyView("Counter", load);
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
});
