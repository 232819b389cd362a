// The Approvals view, the one inbox (DESIGN §16): every question waiting in any session, oldest
// first, each under the name and branch of the session that asked. An answer resumes only that
// session. The focused card (the first when none is) takes the shortcut keys y / s / a / n, so
// the keyboard path is: the first request, answer, and the next one is first.
import { useState } from "react";
import type { ApprovalRequest, SessionInfo } from "../../api/types";
import { type AnswerFn, ApprovalCard } from "./ApprovalCard";

interface Props {
  approvals: ApprovalRequest[];
  /** Every session, for the name and branch of the one that asked. */
  sessions?: SessionInfo[];
  /** The session the window shows. */
  currentId?: string | null;
  answering: string[];
  onAnswer: AnswerFn;
}

export function ApprovalsView({ approvals, sessions = [], currentId = null, answering, onAnswer }: Props) {
  const [focused, setFocused] = useState<string | null>(null);
  const active = approvals.find((a) => a.id === focused) ?? approvals[0] ?? null;
  const from = (id: string) => {
    const s = sessions.find((x) => x.id === id);
    // A child's question names the agent and the session that started it (DESIGN §16.1).
    const parent = s?.agent ? sessions.find((x) => x.id === s.agent?.parentId) : undefined;
    const name = s?.agent
      ? `${s.agent.role ?? "agent"} ${s.id.slice(0, 8)} of ${parent?.title || "its parent"}`
      : s?.title || "Untitled session";
    const where = s?.branch ?? s?.workspace.split("/").pop() ?? "";
    return `${name}${where ? ` · ${where}` : ""}${id === currentId ? " · shown" : ""}`;
  };
  return (
    <section className="approvals" aria-label="Approvals">
      <header className="view-header">
        <h1>Approvals</h1>
        <span className="muted">
          {approvals.length === 0
            ? "Nothing is waiting for you."
            : `${approvals.length} waiting. Keys on the highlighted card: y approve once, s for this session, a twice for always, n deny.`}
        </span>
      </header>
      <div className="approvals-list">
        {approvals.map((request) => (
          <div key={request.id} className="inbox-item">
            <div className="inbox-from" data-testid="inbox-from">
              {from(request.sessionId)}
            </div>
            <ApprovalCard
              request={request}
              onAnswer={onAnswer}
              answering={answering.includes(request.id)}
              shortcuts={request.id === active?.id}
              onFocusCard={setFocused}
            />
          </div>
        ))}
      </div>
    </section>
  );
}
