// One user or assistant message. Model text is shown as plain text: nothing in it can become markup.
// A message the stream cut off for good says so under its text.
interface Props {
  role: "user" | "assistant";
  text: string;
  streaming?: boolean;
  cutOff?: boolean;
}

export function MessageBubble({ role, text, streaming = false, cutOff = false }: Props) {
  return (
    <article className={`message ${role}`} data-testid="message" data-role={role} aria-busy={streaming}>
      <div className="message-role">{role === "user" ? "You" : "Assistant"}</div>
      <div className="message-text">
        {text}
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
