// A unified diff as coloured lines (added, removed, hunk headers, file headers), the code in them
// syntax-coloured when the file's language is known. Text only: the diff comes from files the
// model may have written, so it is never parsed as HTML (the highlighter makes elements with
// class names from the text, never markup from it). A long diff is virtualised, as the message
// list is: its box scrolls, and only the lines in view are in the DOM (`data-lines` says how many
// it has), so a 10,000-line diff shows as fast as a short one.
import { useVirtualizer } from "@tanstack/react-virtual";
import { type ReactNode, memo, useMemo, useRef } from "react";
import type { highlightLine as HighlightLine } from "./highlight";
import { HIGHLIGHT_LIMIT, LINE_HEIGHT, VIRTUAL_FROM } from "./limits";
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

/** One line, its code syntax-coloured when `language` is known. */
function Line({ line, language, highlight }: { line: string; language: string | null; highlight?: typeof HighlightLine }) {
  const kind = lineKind(line);
  const code = language && highlight && (kind === "add" || kind === "del" || kind === "ctx");
  return (
    <span className={`diff-line ${kind}`}>
      {code ? (
        <>
          <span className="diff-sign">{line.slice(0, 1)}</span>
          {highlight(line.slice(1), language)}
        </>
      ) : (
        line
      )}
      {"\n"}
    </span>
  );
}

export const DiffLines = memo(function DiffLines({ diff, path, testId }: Props) {
  const lines = useMemo(() => (diff.endsWith("\n") ? diff.slice(0, -1).split("\n") : diff.split("\n")), [diff]);
  const highlighter = useHighlighter(Boolean(path) && lines.length <= HIGHLIGHT_LIMIT);
  const language = highlighter && lines.length <= HIGHLIGHT_LIMIT ? highlighter.languageOf(path) : null;
  const className = language ? "code diff highlighted" : "code diff";
  if (lines.length > VIRTUAL_FROM) {
    return <VirtualLines lines={lines} className={className} testId={testId} language={language} highlight={highlighter?.highlightLine} />;
  }
  return (
    <pre className={className} data-testid={testId}>
      {lines.map((line, i) => (
        <Line key={i} line={line} language={language} highlight={highlighter?.highlightLine} />
      ))}
    </pre>
  );
});

interface VirtualProps {
  lines: string[];
  className: string;
  testId?: string;
  language: string | null;
  highlight?: typeof HighlightLine;
}

/** The lines in view of a long diff, in a box as tall as all of them. */
function VirtualLines({ lines, className, testId, language, highlight }: VirtualProps) {
  const scroller = useRef<HTMLPreElement>(null);
  const virtualizer = useVirtualizer({
    count: lines.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => LINE_HEIGHT,
    overscan: 20,
  });
  const shown = virtualizer.getVirtualItems();
  const rows: ReactNode[] = shown.map((v) => <Line key={v.index} line={lines[v.index] ?? ""} language={language} highlight={highlight} />);
  return (
    <pre className={`${className} diff-virtual`} ref={scroller} data-testid={testId} data-lines={lines.length}>
      {/* Styles set from script (CSSOM), which the CSP allows; no style attribute is parsed. */}
      <span className="diff-space" style={{ height: virtualizer.getTotalSize() }}>
        <span className="diff-window" style={{ transform: `translateY(${shown[0]?.start ?? 0}px)` }}>
          {rows}
        </span>
      </span>
    </pre>
  );
}
