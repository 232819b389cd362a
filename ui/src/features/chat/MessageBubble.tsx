// One user or assistant message. The user's text is plain; the assistant's is markdown rendered
// without raw HTML (Markdown.tsx): nothing in it can become live markup. The markdown renderer
// and its code highlighter are loaded on first use, not at launch (a window with no answer yet
// never parses them); until then the text shows as it is.
import { Suspense, lazy, memo } from "react";

/** The markdown renderer's module, loaded once: for the bubbles, and for the transcript, which
 * parses the answers about to scroll into view ahead of them. */
let loading: Promise<typeof import("./Markdown")> | null = null;
export const markdownModule = () => {
  loading ??= import("./Markdown");
  return loading;
};

const Markdown = lazy(() => markdownModule().then((m) => ({ default: m.Markdown })));

// A message the stream cut off for good says so under its text.
interface Props {
  role: "user" | "assistant";
  text: string;
  streaming?: boolean;
  cutOff?: boolean;
}

function MessageBubbleView({ role, text, streaming = false, cutOff = false }: Props) {
  return (
    <article className={`message ${role}`} data-testid="message" data-role={role} aria-busy={streaming}>
      <div className="message-role">{role === "user" ? "You" : "Assistant"}</div>
      <div className="message-text">
        {role === "assistant" ? (
          <Suspense fallback={<div className="markdown plain">{text}</div>}>
            <Markdown text={text} />
          </Suspense>
        ) : (
          text
        )}
        {streaming && <span className="caret" aria-hidden="true" />}
      </div>
      {cutOff && (
        <div className="message-cut-off" data-testid="message-cut-off">
          cut off: the connection to the model broke here
        </div>
      )}
    </article>
  );
}

/** Memoised: only the bubble whose text changes re-renders while a message streams. */
export const MessageBubble = memo(MessageBubbleView);
