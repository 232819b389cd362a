// The window's whole React tree, once: the prerendered first screen (prerender.tsx, at build
// time) and the live window (boot.tsx) render this same element, so hydration adopts the HTML.
import { StrictMode } from "react";
import { App } from "./App";

export function Root() {
  return (
    <StrictMode>
      <App />
    </StrictMode>
  );
}
