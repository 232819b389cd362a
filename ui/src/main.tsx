// Entry point: styles (a linked stylesheet, as the CSP allows no inline styles) and the React root,
// which hydrates the first screen index.html already shows (prerendered at build time, see
// prerender.tsx) or, with no prerendered HTML (the dev server), renders it.
import { createRoot, hydrateRoot } from "react-dom/client";
import { Root } from "./Root";
import "./styles/base.css";
import "./styles/layout.css";
import "./styles/chat.css";
import "./styles/approvals.css";
import "./styles/audit.css";
import "./styles/changes.css";
import "./styles/usage.css";
import "./styles/markdown.css";
import "./styles/settings.css";
import "./styles/errors.css";

// The benchmark's mark: every module of the first screen is fetched and run (bench-app/run.mjs).
performance.mark?.("bridle: modules run");
const root = document.getElementById("root");
if (!root) throw new Error("index.html has no #root element");
if (root.firstElementChild) {
  performance.mark?.("bridle: first screen from HTML");
  hydrateRoot(root, <Root />, {
    // React renders the tree anew where the HTML differed; the mark lets the e2e tests fail on it.
    onRecoverableError: (error) => {
      performance.mark?.("bridle: hydration mismatch");
      console.error("the prerendered first screen did not match its first render", error);
    },
  });
} else {
  createRoot(root).render(<Root />);
}
