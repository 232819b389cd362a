// Clicks on the prerendered first screen before the window's code has run (main.tsx): React
// attaches its handlers only when it takes over the screen, so such a click would do nothing, on
// a window that looks ready. The last button clicked meanwhile is clicked again once the screen
// is hydrated.
// Rule: clicks are held only until React takes over the screen (from then on React replays those
// made while it hydrates); only the last one is clicked again, and only on a button still enabled
// and in the page then (hydration adopts the prerendered elements, so it is the same element).

/** Holds clicks inside `root`. The function returned stops holding, just before React takes over
 * the screen, and gives what clicks the held button again, to run once it is hydrated. */
export function holdClicks(root: HTMLElement): () => () => void {
  let last: HTMLButtonElement | null = null;
  const held = (event: MouseEvent) => {
    const button = event.target instanceof Element ? event.target.closest("button") : null;
    if (button && root.contains(button)) last = button;
  };
  root.addEventListener("click", held, true);
  return () => {
    root.removeEventListener("click", held, true);
    const button = last;
    return () => {
      if (button?.isConnected && !button.disabled) button.click();
    };
  };
}
