// The window's code, fetched by main.tsx: hydrates the first screen index.html already shows
// (prerendered at build time, see prerender.tsx) or, with no prerendered HTML (the dev server),
// renders it.
import { createRoot, hydrateRoot } from "react-dom/client";
import { Root } from "./Root";

/** `releaseClicks` stops holding the first screen's clicks (earlyClicks.ts) as React takes it over;
 * what it gives runs once the screen is hydrated (or, with no prerendered HTML, rendered). */
export function boot(root: HTMLElement, releaseClicks?: () => () => void) {
  const hydrated = releaseClicks?.();
  // The benchmark's mark: every module of the first screen is fetched and run (bench-app/run.mjs).
  performance.mark?.("bridle: modules run");
  if (root.firstElementChild) {
    performance.mark?.("bridle: first screen from HTML");
    hydrateRoot(root, <Root hydrated={hydrated} />, {
      // React renders the tree anew where the HTML differed; the mark lets the e2e tests fail on it.
      onRecoverableError: (error) => {
        performance.mark?.("bridle: hydration mismatch");
        console.error("the prerendered first screen did not match its first render", error);
      },
    });
  } else {
    createRoot(root).render(<Root hydrated={hydrated} />);
  }
}
