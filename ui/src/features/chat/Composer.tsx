// The message box: Enter sends, Shift+Enter starts a new line; Stop interrupts a running turn.
// A `/` starts a slash command: the commands the session offers are listed as the name is typed,
// Tab (or a click) completes the highlighted one, the arrow keys move through them. Text typed
// into the prerendered box before the scripts ran (see prerender.tsx) becomes the draft.
import { type KeyboardEvent, useEffect, useRef, useState } from "react";
import type { SlashCommandInfo } from "../../api/types";
import { completed, suggestions } from "./slashCompletion";

interface Props {
  busy: boolean;
  onSend: (text: string) => void;
  onStop: () => void;
  /** The slash commands the session offers (built-ins, then skills). */
  commands?: SlashCommandInfo[];
}

export function Composer({ busy, onSend, onStop, commands = [] }: Props) {
  const [draft, setDraft] = useState("");
  const [highlight, setHighlight] = useState(0);
  const box = useRef<HTMLTextAreaElement>(null);
  useEffect(() => {
    // Hydration keeps what the box holds; the next render would set it back to the draft.
    const early = box.current?.value;
    if (early) setDraft(early);
  }, []);
  const text = draft.trim();
  const canSend = text !== "" && !busy;
  const offered = suggestions(draft, commands);
  const chosen = offered[Math.min(highlight, offered.length - 1)];

  const send = () => {
    if (!canSend) return;
    onSend(text);
    setDraft("");
  };

  const complete = (command: SlashCommandInfo) => {
    setDraft(completed(command));
    setHighlight(0);
  };

  const onKeyDown = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    if (chosen && e.key === "Tab") {
      e.preventDefault();
      complete(chosen);
      return;
    }
    if (offered.length > 0 && (e.key === "ArrowDown" || e.key === "ArrowUp")) {
      e.preventDefault();
      const step = e.key === "ArrowDown" ? 1 : offered.length - 1;
      setHighlight((Math.min(highlight, offered.length - 1) + step) % offered.length);
      return;
    }
    // isComposing: Enter that confirms an IME composition is not a send.
    if (e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) {
      e.preventDefault();
      send();
    }
  };

  return (
    <div className="composer">
      {offered.length > 0 && (
        <ul className="command-suggestions" data-testid="command-suggestions" role="listbox" aria-label="Commands">
          {offered.map((c) => (
            <li
              key={c.name}
              role="option"
              aria-selected={c === chosen}
              className={c === chosen ? "command-suggestion chosen" : "command-suggestion"}
              data-testid="command-suggestion"
              data-name={c.name}
              onMouseDown={(e) => {
                // Keep the focus in the message box.
                e.preventDefault();
                complete(c);
              }}
            >
              <span className="command-name">/{c.name}</span>
              {c.hint && <span className="command-hint"> {c.hint}</span>}
              <span className="command-description"> — {c.description}</span>
            </li>
          ))}
        </ul>
      )}
      <textarea
        ref={box}
        className="composer-input"
        data-testid="chat-input"
        aria-label="Message"
        placeholder={busy ? "The agent is working… (Stop to interrupt)" : "Message the agent (Enter to send, Shift+Enter for a new line, / for commands)"}
        rows={3}
        autoFocus
        value={draft}
        onChange={(e) => {
          setDraft(e.currentTarget.value);
          setHighlight(0);
        }}
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
