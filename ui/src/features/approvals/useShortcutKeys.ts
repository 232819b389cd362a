// Single-key shortcuts on the whole window while `enabled`; keys typed into a field, or with a
// modifier held, are the user's text and never answer anything.
import { useEffect, useRef } from "react";

function isTyping(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  return target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName);
}

/** Calls `onKey(key)` for plain key presses (lower-cased) while `enabled`. */
export function useShortcutKeys(enabled: boolean, onKey: (key: string) => void): void {
  // The latest handler, so the listener is added once per enable and still sees fresh state.
  const handler = useRef(onKey);
  useEffect(() => {
    handler.current = onKey;
  });
  useEffect(() => {
    if (!enabled) return;
    const listener = (e: KeyboardEvent) => {
      if (e.repeat || e.ctrlKey || e.metaKey || e.altKey || e.defaultPrevented || isTyping(e.target)) return;
      handler.current(e.key.toLowerCase());
    };
    document.addEventListener("keydown", listener);
    return () => document.removeEventListener("keydown", listener);
  }, [enabled]);
}
