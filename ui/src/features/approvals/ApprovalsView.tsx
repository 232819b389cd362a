// The Approvals view: every request still waiting, oldest first. The focused card (the first
// when none is) takes the shortcut keys y / s / a / n.
import { useState } from "react";
import type { ApprovalRequest } from "../../api/types";
import { type AnswerFn, ApprovalCard } from "./ApprovalCard";

interface Props {
  approvals: ApprovalRequest[];
  answering: string[];
  onAnswer: AnswerFn;
}

export function ApprovalsView({ approvals, answering, onAnswer }: Props) {
  const [focused, setFocused] = useState<string | null>(null);
  const active = approvals.find((a) => a.id === focused) ?? approvals[0] ?? null;
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
          <ApprovalCard
            key={request.id}
            request={request}
            onAnswer={onAnswer}
            answering={answering.includes(request.id)}
            shortcuts={request.id === active?.id}
            onFocusCard={setFocused}
          />
        ))}
      </div>
    </section>
  );
}
