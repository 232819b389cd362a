// One rule list of the Settings view (deny, ask or allow): one pattern per line, and beside each
// what it matches, as the guard reads it (an invalid pattern says why, before anything is saved).
import { useEffect, useState } from "react";
import { rulesExplain } from "../../api/engine";
import { describeError } from "../../api/errors";
import type { RuleMeaning } from "../../api/types";
import { Field } from "./Field";
import { LinesInput } from "./LinesInput";

const TITLES = {
  deny: "Deny: always refused",
  ask: "Ask: always asked",
  allow: "Allow: run without asking",
} as const;

interface Props {
  list: keyof typeof TITLES;
  patterns: string[];
  onChange: (patterns: string[]) => void;
}

export function RuleEditor({ list, patterns, onChange }: Props) {
  const [meanings, setMeanings] = useState<RuleMeaning[]>([]);
  const [error, setError] = useState<string | null>(null);
  const key = patterns.join("\n");

  useEffect(() => {
    let stale = false;
    const timer = setTimeout(() => {
      rulesExplain(list, key ? key.split("\n") : []).then(
        (m) => !stale && (setMeanings(m), setError(null)),
        (err: unknown) => !stale && setError(describeError(err)),
      );
    }, 150);
    return () => {
      stale = true;
      clearTimeout(timer);
    };
  }, [list, key]);

  return (
    <div className="rule-editor" data-testid={`settings-rules-${list}`}>
      <Field label={TITLES[list]}>
        <LinesInput
          testId={`settings-rules-${list}-input`}
          values={patterns}
          placeholder={
            list === "allow" ? "one rule per line, e.g. bash(cargo test*) or edit_file(src/**)" : list === "deny" ? "e.g. bash(git push*)" : "e.g. bash(npm publish*)"
          }
          onChange={onChange}
        />
      </Field>
      {error && <p className="settings-status error">{error}</p>}
      {meanings.length > 0 && (
        <ul className="rule-meanings">
          {meanings.map((m, i) => (
            <li key={`${i}-${m.pattern}`} className={m.error ? "invalid" : ""} data-testid="settings-rule-meaning" data-valid={m.error ? "false" : "true"}>
              <code>{m.pattern}</code> {m.error ?? m.meaning}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
