// One user or assistant message. Model text is shown as plain text: nothing in it can become markup.
interface Props {
  role: "user" | "assistant";
  text: string;
  streaming?: boolean;
}

export function MessageBubble({ role, text, streaming = false }: Props) {
  return (
    <article className={`message ${role}`} data-testid="message" data-role={role} aria-busy={streaming}>
      <div className="message-role">{role === "user" ? "You" : "Assistant"}</div>
      <div className="message-text">
        {text}
        {streaming && <span className="caret" aria-hidden="true" />}
      </div>
    </article>
  );
}
