// A call waiting for a human: what it would do, what the guardians found, and the four answers.
// Buttons act only on a user's click; nothing in the model's text can press them.
import type { ApprovalAnswer, ApprovalRequest } from "../../api/types";

interface Props {
  request: ApprovalRequest;
  onAnswer: (approvalId: string, decision: ApprovalAnswer) => void;
}

const ANSWERS: { decision: ApprovalAnswer; testId: string; label: string; hint: string }[] = [
  { decision: "approveOnce", testId: "approve-once", label: "Approve once", hint: "Run this call" },
  { decision: "approveSession", testId: "approve-session", label: "For this session", hint: "Run it and the same call for the rest of the session" },
  { decision: "approveAlways", testId: "approve-always", label: "Always", hint: "Run it and add an allow rule to the config" },
  { decision: "deny", testId: "deny", label: "Deny", hint: "Do not run it; the model is told" },
];

export function ApprovalCard({ request, onAnswer }: Props) {
  return (
    <div className="approval-card" data-testid="approval-card" data-tool={request.tool}>
      <div className="approval-title">
        Approve <code>{request.tool}</code>?
      </div>
      <pre className="code">{request.arguments}</pre>
      {request.findings.length > 0 && (
        <ul className="findings">
          {request.findings.map((f, i) => (
            <li key={`${f.guardian}-${f.rule}-${i}`} className={`finding ${f.severity}`}>
              <span className="finding-severity">{f.severity}</span> {f.message}{" "}
              <span className="muted">
                ({f.guardian}/{f.rule})
              </span>
            </li>
          ))}
        </ul>
      )}
      {request.preview && <pre className="code diff-preview">{request.preview}</pre>}
      <div className="approval-actions">
        {ANSWERS.map((a) => (
          <button
            key={a.decision}
            type="button"
            className={a.decision === "deny" ? "button danger" : "button"}
            data-testid={a.testId}
            title={a.hint}
            onClick={() => onAnswer(request.id, a.decision)}
          >
            {a.label}
          </button>
        ))}
      </div>
    </div>
  );
}
