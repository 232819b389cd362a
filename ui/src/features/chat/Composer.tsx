// The message box: Enter sends, Shift+Enter starts a new line; Stop interrupts a running turn.
import { type KeyboardEvent, useState } from "react";

interface Props {
  busy: boolean;
  onSend: (text: string) => void;
  onStop: () => void;
}

export function Composer({ busy, onSend, onStop }: Props) {
  const [draft, setDraft] = useState("");
  const text = draft.trim();
  const canSend = text !== "" && !busy;

  const send = () => {
    if (!canSend) return;
    onSend(text);
    setDraft("");
  };

  const onKeyDown = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    // isComposing: Enter that confirms an IME composition is not a send.
    if (e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) {
      e.preventDefault();
      send();
    }
  };

  return (
    <div className="composer">
      <textarea
        className="composer-input"
        data-testid="chat-input"
        aria-label="Message"
        placeholder={busy ? "The agent is working… (Stop to interrupt)" : "Message the agent (Enter to send, Shift+Enter for a new line)"}
        rows={3}
        autoFocus
        value={draft}
        onChange={(e) => setDraft(e.currentTarget.value)}
        onKeyDown={onKeyDown}
      />
      <div className="composer-actions">
        {busy && (
          <button type="button" className="button danger" data-testid="stop-button" onClick={onStop}>
            Stop
          </button>
        )}
        <button type="button" className="button primary" data-testid="send-button" disabled={!canSend} onClick={send}>
          Send
        </button>
      </div>
    </div>
  );
}
