// A question waiting for a human, the same card in Chat and in Approvals, shaped by what it is
// about (`request.subject`, switched on exhaustively). A call: tool, editable arguments, findings,
// the diff it would make, time left, and the four answers. A host (a sandboxed command asking to
// reach one) is the same card about a host (`data-kind="network"`): where, and the command that
// asked, with answers worded for hosts and no arguments to edit. Held changes (what a sandboxed
// command changed, waiting to land) are a card about that command's diff (`data-kind="effects"`):
// nothing to edit, and only keep or discard.
// Buttons act only on the user's click or shortcut key; nothing in the model's text can press
// them. "Always" writes to the config for good, so its key asks to be pressed twice: a stray `a`
// never does that alone.
import { useMemo, useState } from "react";
import type { ApprovalAnswer, ApprovalRequest, ApprovalSubject } from "../../api/types";
import type { AnswerDetails } from "../../store/useSession";
import { DiffLines } from "../diff/DiffLines";
import { CALL_ANSWERS, EFFECTS_ANSWERS, hostAnswers } from "./answers";
import { checkEdit, prettyArguments } from "./args";
import { shortCommand } from "./effectsRequest";
import { ExpiryClock } from "./ExpiryClock";
import { FindingList } from "./FindingList";
import { hostPort } from "./hostRequest";
import { useShortcutKeys } from "./useShortcutKeys";

export type AnswerFn = (request: ApprovalRequest, decision: ApprovalAnswer, details?: AnswerDetails) => void;

interface Props {
  request: ApprovalRequest;
  onAnswer: AnswerFn;
  /** An answer was sent and its resolution has not arrived: the buttons wait. */
  answering?: boolean;
  /** This card takes the y / s / a / n shortcut keys. */
  shortcuts?: boolean;
  /** Called when focus enters the card, so the view can give it the shortcuts. */
  onFocusCard?: (approvalId: string) => void;
}

/** The parts of a subject the card shows, each kind its own. */
interface Shown {
  call: Extract<ApprovalSubject, { type: "call" }> | null;
  host: Extract<ApprovalSubject, { type: "host" }> | null;
  effects: Extract<ApprovalSubject, { type: "changes" }> | null;
}

function shownOf(subject: ApprovalSubject): Shown {
  switch (subject.type) {
    case "call":
      return { call: subject, host: null, effects: null };
    case "host":
      return { call: null, host: subject, effects: null };
    case "changes":
      return { call: null, host: null, effects: subject };
    default: {
      const never: never = subject;
      return never;
    }
  }
}

export function ApprovalCard({ request, onAnswer, answering = false, shortcuts = false, onFocusCard }: Props) {
  const { call, host, effects } = useMemo(() => shownOf(request.subject), [request.subject]);
  const answers = useMemo(() => (host ? hostAnswers(host) : effects ? EFFECTS_ANSWERS : CALL_ANSWERS), [host, effects]);
  const argumentsText = call?.arguments ?? "{}";
  const original = useMemo(() => prettyArguments(argumentsText), [argumentsText]);
  const [text, setText] = useState(original);
  const [feedback, setFeedback] = useState("");
  // `a` pressed once: the next `a` answers "always"; any other key or Escape cancels.
  const [alwaysArmed, setAlwaysArmed] = useState(false);
  const edit = checkEdit(argumentsText, text);
  const error = edit.ok ? null : edit.error;

  const answer = (decision: ApprovalAnswer) => {
    if (answering) return;
    if (decision === "deny") return onAnswer(request, decision, { feedback: feedback.trim() || null });
    // The buttons are disabled meanwhile; this stops the shortcut keys.
    if (!edit.ok) return;
    onAnswer(request, decision, { editedArguments: edit.edited });
  };
  useShortcutKeys(shortcuts, (key) => {
    const match = answers.find((a) => a.key === key);
    if (match?.decision === "approveAlways" && !alwaysArmed) {
      if (!answering && edit.ok) setAlwaysArmed(true);
      return;
    }
    setAlwaysArmed(false);
    if (match) answer(match.decision);
  });

  const rows = Math.min(14, Math.max(2, text.split("\n").length));
  return (
    <div
      className={shortcuts ? "approval-card active" : "approval-card"}
      data-testid="approval-card"
      data-tool={call?.tool}
      data-kind={host ? "network" : effects ? "effects" : undefined}
      data-host={host?.host}
      data-port={host?.port}
      data-approval-id={request.id}
      data-session-id={request.sessionId}
      onFocus={() => onFocusCard?.(request.id)}
    >
      <div className="approval-head">
        <span className="approval-title">
          {host ? (
            <>
              Connect to <code>{hostPort(host)}</code>?
            </>
          ) : effects ? (
            <>
              Keep what <code>{shortCommand(effects.command) || "the command"}</code> changed?
            </>
          ) : (
            <>
              Approve <code>{call?.tool}</code>?
            </>
          )}
        </span>
        <ExpiryClock expiresAt={request.expiresAt} />
      </div>
      <FindingList findings={request.findings} />
      {host ? (
        <>
          <div className="approval-label">asked by the command</div>
          <pre className="code approval-command" data-testid="approval-command">
            {host.command || "(not known)"}
          </pre>
        </>
      ) : effects ? (
        <>
          <div className="approval-label">the command</div>
          <pre className="code approval-command" data-testid="approval-command">
            {effects.command || "(not known)"}
          </pre>
          {!request.preview && effects.files.length > 0 && (
            <p className="approval-files" data-testid="approval-files">
              held: {effects.files.join(", ")}
            </p>
          )}
        </>
      ) : (
        <>
          <label className="approval-label">
            arguments{text !== original && <span className="muted"> (edited: approving sends your version, judged again)</span>}
            <textarea
              className="code approval-arguments"
              data-testid="approval-arguments"
              spellCheck={false}
              rows={rows}
              value={text}
              aria-invalid={error !== null}
              onChange={(e) => setText(e.target.value)}
            />
          </label>
          {error && (
            <p className="field-error" role="status" data-testid="approval-arguments-error">
              {error}
            </p>
          )}
          {text !== original && (
            <button type="button" className="link-button" onClick={() => setText(original)}>
              Undo my edits
            </button>
          )}
        </>
      )}
      {request.preview && (
        <>
          <div className="approval-label">{effects ? "changed (held: not in the workspace until you keep it)" : "would change"}</div>
          <DiffLines diff={request.preview} testId="approval-preview" />
        </>
      )}
      {alwaysArmed && shortcuts && (
        <p className="approval-confirm" role="status" data-testid="approve-always-confirm">
          Press <kbd>a</kbd> again to{" "}
          {host ? `allow ${hostPort(host)} for good (added to [sandbox.network] allow)` : "run it and add an allow rule to the config for good"}; any
          other key cancels.
        </p>
      )}
      <div className="approval-actions">
        {answers.map((a) => (
          <button
            key={a.decision}
            type="button"
            className={a.decision === "deny" ? "button danger" : "button"}
            data-testid={a.testId}
            title={shortcuts ? `${a.hint} (${a.key})` : a.hint}
            disabled={answering || (a.decision !== "deny" && error !== null)}
            onClick={() => answer(a.decision)}
          >
            {a.label}
            {shortcuts && <kbd>{a.key}</kbd>}
          </button>
        ))}
        <input
          className="deny-feedback"
          data-testid="deny-feedback"
          placeholder={
            host || effects ? "Why, for the model, when denying (optional)" : "Feedback for the model when denying (optional)"
          }
          value={feedback}
          onChange={(e) => setFeedback(e.target.value)}
        />
      </div>
    </div>
  );
}
