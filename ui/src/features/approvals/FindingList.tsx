// What the guardians found about a call: severity badge, message, and which guardian and rule.
import type { Finding } from "../../api/types";

export function FindingList({ findings }: { findings: Finding[] }) {
  if (findings.length === 0) return null;
  return (
    <ul className="findings">
      {findings.map((f, i) => (
        <li key={`${f.guardian}-${f.rule}-${i}`} className={`finding ${f.severity}`} data-testid="approval-finding" data-severity={f.severity}>
          <span className="severity-badge">{f.severity}</span> {f.message}{" "}
          <span className="muted">
            ({f.guardian}/{f.rule})
          </span>
        </li>
      ))}
    </ul>
  );
}
