// A unified diff as coloured lines (added, removed, hunk headers, file headers), the code in them
// syntax-coloured when the file's language is known. Text only: the diff comes from files the
// model may have written, so it is never parsed as HTML (the highlighter makes elements with
// class names from the text, never markup from it).
import { memo } from "react";
import { HIGHLIGHT_LIMIT } from "./limits";
import { useHighlighter } from "./useHighlighter";

interface Props {
  diff: string;
  /** The file's path, for syntax colours. */
  path?: string;
  /** Extra test hook, e.g. `approval-preview`. */
  testId?: string;
}

type LineKind = "add" | "del" | "hunk" | "meta" | "ctx";

function lineKind(line: string): LineKind {
  if (line.startsWith("+++") || line.startsWith("---") || line.startsWith("diff ") || line.startsWith("\\")) return "meta";
  if (line.startsWith("@@")) return "hunk";
  if (line.startsWith("+")) return "add";
  if (line.startsWith("-")) return "del";
  return "ctx";
}

export const DiffLines = memo(function DiffLines({ diff, path, testId }: Props) {
  const lines = diff.endsWith("\n") ? diff.slice(0, -1).split("\n") : diff.split("\n");
  const highlighter = useHighlighter(Boolean(path) && lines.length <= HIGHLIGHT_LIMIT);
  const language = highlighter && lines.length <= HIGHLIGHT_LIMIT ? highlighter.languageOf(path) : null;
  return (
    <pre className={language ? "code diff highlighted" : "code diff"} data-testid={testId}>
      {lines.map((line, i) => {
        const kind = lineKind(line);
        const code = language && (kind === "add" || kind === "del" || kind === "ctx");
        return (
          <span key={i} className={`diff-line ${kind}`}>
            {code ? (
              <>
                <span className="diff-sign">{line.slice(0, 1)}</span>
                {highlighter?.highlightLine(line.slice(1), language)}
              </>
            ) : (
              line
            )}
            {"\n"}
          </span>
        );
      })}
    </pre>
  );
});
