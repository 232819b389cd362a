// A unified diff shown side by side: the old lines on the left, the new on the right, each with
// its line number, changed rows tinted. Text only, like DiffLines: never parsed as HTML.
import { memo } from "react";
import type { highlightLine as HighlightLine } from "./highlight";
import { HIGHLIGHT_LIMIT } from "./limits";
import { useHighlighter } from "./useHighlighter";
import { type Cell, sideBySide } from "./rows";

interface SideProps {
  cell: Cell | null;
  tone: "del" | "add" | "ctx";
  language: string | null;
  highlight: typeof HighlightLine | undefined;
}

function Side({ cell, tone, language, highlight }: SideProps) {
  if (!cell) return <><span className="diff-no" /><span className="diff-cell empty" /></>;
  return (
    <>
      <span className="diff-no">{cell.line}</span>
      <span className={`diff-cell ${tone}`}>{language && highlight ? highlight(cell.text, language) : cell.text}</span>
    </>
  );
}

export const DiffSideBySide = memo(function DiffSideBySide({ diff, path }: { diff: string; path?: string }) {
  const rows = sideBySide(diff);
  const highlighter = useHighlighter(Boolean(path) && rows.length <= HIGHLIGHT_LIMIT);
  const language = highlighter && rows.length <= HIGHLIGHT_LIMIT ? highlighter.languageOf(path) : null;
  return (
    <div className={language ? "code diff diff-split highlighted" : "code diff diff-split"} role="table" aria-label="Side-by-side diff">
      {rows.map((row, i) =>
        row.kind === "hunk" ? (
          <div key={i} className="diff-split-hunk diff-line hunk">
            {row.text}
          </div>
        ) : (
          <div key={i} className="diff-split-row" role="row">
            <Side cell={row.left} tone={row.changed ? "del" : "ctx"} language={language} highlight={highlighter?.highlightLine} />
            <Side cell={row.right} tone={row.changed ? "add" : "ctx"} language={language} highlight={highlighter?.highlightLine} />
          </div>
        ),
      )}
    </div>
  );
});
