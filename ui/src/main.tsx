// Entry point: the stylesheets (linked, as the CSP allows no inline styles), then the window's code
// (boot.tsx), imported dynamically after the first paint so that neither the page's load nor its
// first screen waits for it: that screen is drawn from index.html and its message box takes text
// meanwhile (prerender.tsx).
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

import { holdClicks } from "./earlyClicks";

// The latest the window's code is fetched, painted or not.
const AT_THE_LATEST_MS = 250;

const root = document.getElementById("root");
if (!root) throw new Error("index.html has no #root element");
// A button clicked before the window's code has run is clicked again once it has.
const releaseClicks = holdClicks(root);

let loading = false;
const load = () => {
  if (loading) return;
  loading = true;
  // The smoke test's mark: asked after the first paint.
  performance.mark?.("bridle: window code asked");
  import("./boot").then(
    ({ boot }) => boot(root, releaseClicks),
    (error) => {
      // The prerendered screen would look alive and do nothing: say what happened instead.
      root.textContent = `Bridle's window could not load its code: ${error}`;
      throw error;
    },
  );
};

// The window's code is fetched once the first screen is painted: running it holds the page's
// thread for tens of milliseconds, which would otherwise fall before the paint and the message
// box's first keystrokes. A frame's callback runs just before its paint, a timer set there just
// after. A window that paints no frame (hidden at launch) loads it after a while all the same.
requestAnimationFrame(() => setTimeout(load));
setTimeout(load, AT_THE_LATEST_MS);
