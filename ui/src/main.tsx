// Entry point: styles (a linked stylesheet, as the CSP allows no inline styles) and the React root.
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./App";
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
createRoot(root).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
