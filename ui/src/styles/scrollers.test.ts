// The rules for boxes that scroll: square corners (a rounded one is redrawn through a mask at every
// scrolled frame when WebKit has no GPU, base.css), and the long virtualised lists contained, so
// the rows a scroll brings in are laid out and painted within their box. Read from the
// stylesheets as written.
import { readFileSync, readdirSync } from "node:fs";
import { describe, expect, it } from "vitest";

const dir = import.meta.dirname;
const sheets: Record<string, string> = Object.fromEntries(
  readdirSync(dir)
    .filter((f) => f.endsWith(".css"))
    .map((f) => [f, readFileSync(`${dir}/${f}`, "utf8")]),
);

/** Each rule of `css` as [selector, declarations], comments left out. */
function rules(css: string): [string, string][] {
  const bare = css.replace(/\/\*[\s\S]*?\*\//g, "");
  return [...bare.matchAll(/([^{}]+)\{([^{}]*)\}/g)].map((m) => [(m[1] ?? "").trim(), m[2] ?? ""]);
}

const scrolls = (body: string) => /overflow(-x|-y)?\s*:\s*(auto|scroll)/.test(body);
const rounded = (body: string) => [...body.matchAll(/border-radius\s*:([^;]+)/g)].some((m) => (m[1] ?? "").trim() !== "0");

describe("stylesheets", () => {
  it("are all read", () => {
    expect(Object.keys(sheets).length).toBeGreaterThan(5);
    expect(rules(sheets["chat.css"] ?? "").length).toBeGreaterThan(20);
  });

  it("give no scrolling box rounded corners", () => {
    const both = Object.entries(sheets).flatMap(([file, css]) =>
      rules(css)
        .filter(([, body]) => scrolls(body) && rounded(body))
        .map(([selector]) => `${file}: ${selector}`),
    );
    expect(both).toEqual([]);
  });

  it("would see one", () => {
    const [selector, body] = rules(".list {\n  overflow-y: auto;\n  border-radius: 6px;\n}")[0] ?? ["", ""];
    expect(selector).toBe(".list");
    expect(scrolls(body) && rounded(body)).toBe(true);
    expect(rounded("border-radius: 0;")).toBe(false);
  });

  it("contain the long lists' scrolling boxes", () => {
    const contained = (file: string, selector: string) =>
      rules(sheets[file] ?? "").some(([s, body]) => s === selector && scrolls(body) && /contain\s*:\s*strict/.test(body));
    expect(contained("chat.css", ".message-list")).toBe(true);
    expect(contained("audit.css", ".audit-scroll")).toBe(true);
    expect(contained("chat.css", ".chat")).toBe(false);
  });
});
