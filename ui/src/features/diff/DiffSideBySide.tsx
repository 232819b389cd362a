// A unified diff shown side by side: the old lines on the left, the new on the right, each with
// its line number, changed rows tinted. Text only, like DiffLines: never parsed as HTML. A long
// diff is virtualised like DiffLines: the rows in view, between spacers as tall as the rest.
import { useVirtualizer } from "@tanstack/react-virtual";
import { memo, useMemo, useRef } from "react";
import type { highlightLine as HighlightLine } from "./highlight";
import { HIGHLIGHT_LIMIT, LINE_HEIGHT, VIRTUAL_FROM } from "./limits";
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
  const rows = useMemo(() => sideBySide(diff), [diff]);
  const highlighter = useHighlighter(Boolean(path) && rows.length <= HIGHLIGHT_LIMIT);
  const language = highlighter && rows.length <= HIGHLIGHT_LIMIT ? highlighter.languageOf(path) : null;
  const scroller = useRef<HTMLDivElement>(null);
  // A long diff is virtualised as DiffLines is: the rows in view between two spacers.
  const virtual = rows.length > VIRTUAL_FROM;
  const virtualizer = useVirtualizer({
    count: virtual ? rows.length : 0,
    getScrollElement: () => scroller.current,
    estimateSize: () => LINE_HEIGHT,
    overscan: 20,
  });
  const shown = virtual ? virtualizer.getVirtualItems() : rows.map((_, index) => ({ index }));
  const before = virtual ? (virtualizer.getVirtualItems()[0]?.start ?? 0) : 0;
  const after = virtual ? virtualizer.getTotalSize() - before - shown.length * LINE_HEIGHT : 0;
  const className = `code diff diff-split${language ? " highlighted" : ""}${virtual ? " diff-virtual" : ""}`;
  return (
    <div ref={scroller} className={className} role="table" aria-label="Side-by-side diff" data-lines={virtual ? rows.length : undefined}>
      {/* Styles set from script (CSSOM), which the CSP allows; no style attribute is parsed. */}
      {virtual && <div className="diff-split-gap" style={{ height: before }} />}
      {shown.map(({ index: i }) => {
        const row = rows[i];
        if (!row) return null;
        return row.kind === "hunk" ? (
          <div key={i} className="diff-split-hunk diff-line hunk">
            {row.text}
          </div>
        ) : (
          <div key={i} className="diff-split-row" role="row">
            <Side cell={row.left} tone={row.changed ? "del" : "ctx"} language={language} highlight={highlighter?.highlightLine} />
            <Side cell={row.right} tone={row.changed ? "add" : "ctx"} language={language} highlight={highlighter?.highlightLine} />
          </div>
        );
      })}
      {virtual && <div className="diff-split-gap" style={{ height: Math.max(0, after) }} />}
    </div>
  );
});
