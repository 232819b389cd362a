// Clicks on the prerendered first screen before the window's code has run (main.tsx): React
// attaches its handlers only when it hydrates the screen, so such a click would do nothing, on a
// window that looks ready. The last button clicked meanwhile is clicked again once the screen is
// hydrated.
// Rule: only the last click is kept, and only on a button that is still enabled and in the page
// then; hydration adopts the prerendered elements as they are, so it is the same element.

/** Starts holding clicks inside `root`; the function returned stops and clicks the last one. */
export function holdClicks(root: HTMLElement): () => void {
  let last: HTMLButtonElement | null = null;
  const held = (event: MouseEvent) => {
    const button = event.target instanceof Element ? event.target.closest("button") : null;
    if (button && root.contains(button)) last = button;
  };
  root.addEventListener("click", held, true);
  return () => {
    root.removeEventListener("click", held, true);
    const button = last;
    last = null;
    if (button?.isConnected && !button.disabled) button.click();
  };
}
