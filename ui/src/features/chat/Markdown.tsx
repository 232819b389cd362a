// Assistant text as markdown: rendered to React elements by react-markdown with raw HTML left as
// text (no rehype-raw), code highlighted by class names only (the CSP allows no inline styles
// from text), and links shown with their address but never followed inside the window — model
// text can format, never navigate, run or press anything.
import { type ReactElement, memo } from "react";
import toElements, { type Components } from "react-markdown";
import rehypeHighlight from "rehype-highlight";

const components: Components = {
  a: ({ children, href }) => (
    <span className="md-link" title={href}>
      {children}
      {href && <span className="md-href"> ({href})</span>}
    </span>
  ),
  img: ({ alt }) => <span className="md-image">[image: {alt ?? "no description"}]</span>,
};

// rehype-highlight builds its highlighter (every common grammar registered) each time it is
// attached, and react-markdown attaches its plugins at every render: 8 of a message's 9 ms. Built
// once here, every message reuses it.
const highlight = rehypeHighlight({ detect: false });
const rehypePlugins = [() => highlight];

/** Rendered trees of the texts shown last, newest last: a message that scrolls back into view
 * (the transcript is virtualised, so it was unmounted) is not parsed again. */
const rendered = new Map<string, ReactElement>();
/** How many texts' trees are kept. */
const KEPT = 300;

/** `text`'s tree: react-markdown's synchronous renderer is a pure function of its options. */
function tree(text: string): ReactElement {
  const kept = rendered.get(text);
  if (kept) rendered.delete(text);
  const out = kept ?? toElements({ children: text, rehypePlugins, components });
  rendered.set(text, out);
  if (rendered.size > KEPT) {
    const oldest = rendered.keys().next().value;
    if (oldest !== undefined) rendered.delete(oldest);
  }
  return out;
}

/** How long one slice of [`warm`] may hold the page's thread, in ms. */
const SLICE_MS = 3;
/** The warming under way, stopped when another starts. */
let warming: { stop: boolean } | null = null;
const nextSlice = new MessageChannel();

/** Parses `texts` into the kept trees before they are shown (the transcript's rows about to
 * scroll into view), a few ms at a time between frames, so a fast scroll mounts rows whose
 * markdown is already parsed. A later call replaces an earlier one still under way. */
export function warm(texts: string[]): void {
  if (warming) warming.stop = true;
  const job = { stop: false };
  warming = job;
  const queue = texts.filter((t) => !rendered.has(t));
  const slice = () => {
    const until = performance.now() + SLICE_MS;
    while (!job.stop && queue.length && performance.now() < until) tree(queue.shift() ?? "");
    if (!job.stop && queue.length) nextSlice.port2.postMessage(null);
  };
  nextSlice.port1.onmessage = slice;
  nextSlice.port2.postMessage(null);
}

function MarkdownText({ text }: { text: string }) {
  return (
    <div className="markdown" data-testid="markdown">
      {tree(text)}
    </div>
  );
}

/** Memoised: a streaming bubble re-renders, the finished ones above it do not. */
export const Markdown = memo(MarkdownText);
