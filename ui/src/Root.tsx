// The window's whole React tree, once: the prerendered first screen (prerender.tsx, at build
// time) and the live window (boot.tsx) render this same element, so hydration adopts the HTML.
import { StrictMode, useEffect } from "react";
import { App } from "./App";

/** `hydrated` runs once the tree is committed and its effects have run (never at build time). */
export function Root({ hydrated }: { hydrated?: () => void }) {
  useEffect(() => {
    if (!hydrated) return;
    // After the commit's own updates (a view chosen in an effect) are applied.
    const later = setTimeout(hydrated);
    return () => clearTimeout(later);
  }, [hydrated]);
  return (
    <StrictMode>
      <App />
    </StrictMode>
  );
}
