// Syntax colours for diff lines: highlight.js grammars (the ones react-markdown's highlighter
// already ships, so the bundle does not grow) picked by the file's extension, rendered as class
// names only (the CSP allows no inline styles). A line is highlighted on its own, so a construct
// spanning lines (a block comment) may be coloured as code; big diffs are not highlighted at all.
import { toJsxRuntime } from "hast-util-to-jsx-runtime";
import { common, createLowlight } from "lowlight";
import type { ReactNode } from "react";
import { Fragment, jsx, jsxs } from "react/jsx-runtime";

const lowlight = createLowlight(common);

/** The grammar for `path`, by its extension or name, if highlight.js knows it. */
export function languageOf(path: string | undefined): string | null {
  if (!path) return null;
  const name = path.split("/").pop() ?? "";
  const ext = name.includes(".") ? name.split(".").pop()!.toLowerCase() : name.toLowerCase();
  const alias: Record<string, string> = { toml: "ini", mjs: "javascript", cjs: "javascript", mts: "typescript", tsx: "typescript", jsx: "javascript", dockerfile: "dockerfile", makefile: "makefile" };
  const lang = alias[ext] ?? ext;
  const plain = lang === "txt" || lang === "text" || lang === "plaintext";
  return !plain && lowlight.registered(lang) ? lang : null;
}

/** One line of code as highlighted React nodes. */
export function highlightLine(text: string, language: string): ReactNode {
  return toJsxRuntime(lowlight.highlight(language, text), { Fragment, jsx, jsxs });
}
