// The prerendered first screen: what the build writes into index.html (scripts/prerender.mjs),
// and the window's hydration of it against a mocked engine bridge.
import { act, screen } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { type Root as ReactRoot, hydrateRoot } from "react-dom/client";
import { afterEach, describe, expect, it, vi } from "vitest";
import { holdClicks } from "./earlyClicks";
import { render } from "./prerender";
import { Root } from "./Root";
import { fakeEngine } from "./test/fakeEngine";

vi.mock("./api/engine", () => import("./test/fakeEngine").then((m) => m.engineModule));

describe("the prerendered first screen", () => {
  let root: ReactRoot | null = null;
  afterEach(() => {
    act(() => root?.unmount());
    root = null;
    document.body.innerHTML = "";
  });

  it("holds the message box and no style attribute (the CSP would drop it)", () => {
    const html = render();
    expect(html).toContain('data-testid="chat-input"');
    expect(html).toContain('data-testid="engine-starting"');
    expect(html).not.toMatch(/\sstyle="/);
  });

  it("is adopted by hydration as it is, keeping what was typed before the scripts ran", async () => {
    const container = document.createElement("div");
    container.innerHTML = render();
    document.body.appendChild(container);
    const box = container.querySelector<HTMLTextAreaElement>("[data-testid=chat-input]");
    if (!box) throw new Error("no message box");
    box.value = "typed early";
    const recoverable: unknown[] = [];
    const logged = vi.spyOn(console, "error");
    await act(async () => {
      root = hydrateRoot(container, <Root />, { onRecoverableError: (e) => recoverable.push(e) });
    });
    await screen.findByText("/home/dev/project");
    expect(recoverable).toEqual([]);
    // React's development build reports differing attributes on the console only.
    expect(logged.mock.calls.filter((c) => /hydrat/i.test(String(c[0])))).toEqual([]);
    expect(container.querySelector("[data-testid=chat-input]")).toBe(box);
    expect(box.value).toBe("typed early");
    await userEvent.setup().type(box, "{Enter}");
    expect(fakeEngine.submit).toHaveBeenCalledExactlyOnceWith({ type: "userMessage", text: "typed early" });
  });

  it("clicks again, once hydrated, the button clicked before the scripts ran", async () => {
    const container = document.createElement("div");
    container.innerHTML = render();
    document.body.appendChild(container);
    const release = holdClicks(container);
    const sessions = container.querySelector<HTMLButtonElement>("[data-testid=nav-sessions]");
    const chat = container.querySelector<HTMLButtonElement>("[data-testid=nav-chat]");
    if (!sessions || !chat) throw new Error("no nav buttons");
    // Two clicks before hydration: the last one counts; React's handlers are not attached yet.
    chat.click();
    sessions.click();
    expect(sessions.getAttribute("aria-current")).toBeNull();
    await act(async () => {
      root = hydrateRoot(container, <Root hydrated={release()} />);
    });
    await vi.waitFor(() => expect(sessions.getAttribute("aria-current")).toBe("page"));
    expect(chat.getAttribute("aria-current")).toBeNull();
    // Done once: a later click goes through React alone.
    await act(async () => chat.click());
    expect(chat.getAttribute("aria-current")).toBe("page");
  });
});
