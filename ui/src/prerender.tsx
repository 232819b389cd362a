// The first screen as HTML, rendered at build time (ui/scripts/prerender.mjs writes it into
// index.html): the window draws it, and its message box takes text, while the scripts are still
// being fetched and run; boot.tsx then hydrates it.
// Rule: it is exactly the client's first render — the window with no data yet — and carries no
// inline style (the CSP drops style attributes from HTML), so hydration adopts it as it is.
import { renderToString } from "react-dom/server";
import { Root } from "./Root";

export function render(): string {
  return renderToString(<Root />);
}
