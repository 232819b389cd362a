// Vitest setup: unmount what each test rendered (Testing Library only does it by itself with globals).
import { cleanup } from "@testing-library/react";
import { afterEach } from "vitest";

afterEach(() => cleanup());

// jsdom lays nothing out, so every box would measure 0 and a virtualised list would show no
// row. Give elements a viewport-sized client box (as a window of 1200×800 would): lists render
// their first window of rows, as in the real webview.
Object.defineProperty(HTMLElement.prototype, "clientHeight", { configurable: true, get: () => 800 });
Object.defineProperty(HTMLElement.prototype, "clientWidth", { configurable: true, get: () => 1200 });
