// What the guardians found about a call: severity badge, message, and which guardian and rule.
// A finding the call's sandbox holds (`contained`) is shown too, marked as held, so the user can
// tell what only needs noting from what the question is about.
import type { Finding } from "../../api/types";

export function FindingList({ findings }: { findings: Finding[] }) {
  if (findings.length === 0) return null;
  return (
    <ul className="findings">
      {findings.map((f, i) => (
        <li
          key={`${f.guardian}-${f.rule}-${i}`}
          className={`finding ${f.severity}`}
          data-testid="approval-finding"
          data-severity={f.severity}
          data-contained={f.contained ? "true" : undefined}
        >
          <span className="severity-badge">{f.severity}</span> {f.message}{" "}
          <span className="muted">
            ({f.guardian}/{f.rule})
          </span>
          {f.contained && (
            <>
              {" "}
              <span className="finding-contained" title="The call's sandbox holds this: recorded, not asked about in auto-edit, auto and bypass">
                held by the sandbox
              </span>
            </>
          )}
        </li>
      ))}
    </ul>
  );
}
