// Entry point: the stylesheets (linked, as the CSP allows no inline styles), then the window's code
// (boot.tsx), imported dynamically so that the page's load does not wait for it: the first screen
// is already drawn from index.html and its message box takes text meanwhile (prerender.tsx).
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

const root = document.getElementById("root");
if (!root) throw new Error("index.html has no #root element");
import("./boot").then(
  ({ boot }) => boot(root),
  (error) => {
    // The prerendered screen would look alive and do nothing: say what happened instead.
    root.textContent = `Bridle's window could not load its code: ${error}`;
    throw error;
  },
);
