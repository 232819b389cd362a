// Writes the prerendered first screen (src/prerender.tsx, built for node by `vite build --ssr`
// into node_modules/.prerender) into dist/index.html's #root. Fails the build when the HTML would
// not be adopted as it is: no #root to fill, or a style attribute (the CSP drops those, so the
// first screen would differ from the first render).
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const ui = join(import.meta.dirname, "..");
const { render } = await import(join(ui, "node_modules/.prerender/prerender.js"));
const html = render();
if (/\sstyle="/.test(html)) {
  throw new Error(`the first screen has a style attribute, which the CSP drops: ${/<[^>]*\sstyle="[^>]*>/.exec(html)[0]}`);
}
if (!html.includes('data-testid="chat-input"')) throw new Error("the first screen has no message box");
const file = join(ui, "dist/index.html");
const page = readFileSync(file, "utf8");
const empty = '<div id="root"></div>';
if (page.split(empty).length !== 2) throw new Error(`${file} has no single empty ${empty}`);
writeFileSync(file, page.replace(empty, `<div id="root">${html}</div>`));
console.log(`prerendered the first screen into dist/index.html (${html.length} characters)`);
