// The Settings view's skills: every skill the open session found (the workspace's, the user's,
// the config's folders), with its source, whether it is offered and what is wrong with it; and
// the question the window asks of a workspace's skills — trust them as their files are now.
// Trusting reopens the session, so the model's catalog and the composer's commands follow.
import { useEffect, useState } from "react";
import { skillsList, skillsTrust } from "../../api/engine";
import { describeError } from "../../api/errors";
import type { SkillInfo } from "../../api/types";

interface Props {
  /** Called once the workspace's skills are trusted and the session reopened with them. */
  onTrusted: () => void;
}

export function SkillsSection({ onTrusted }: Props) {
  const [skills, setSkills] = useState<SkillInfo[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    skillsList().then(setSkills, (err: unknown) => setError(describeError(err)));
  }, []);

  const trust = () => {
    setBusy(true);
    skillsTrust().then(
      (now) => {
        setSkills(now);
        setError(null);
        setBusy(false);
        onTrusted();
      },
      (err: unknown) => {
        setError(describeError(err));
        setBusy(false);
      },
    );
  };

  const untrusted = (skills ?? []).filter((s) => s.source === "workspace" && !s.trusted && s.error === null);
  return (
    <div className="settings-skills" data-testid="settings-skills">
      {error && (
        <p className="settings-error" role="alert">
          {error}
        </p>
      )}
      {skills === null && !error && <p className="muted">Looking for skills…</p>}
      {skills !== null && skills.length === 0 && (
        <p className="muted">No skills found (.agents/skills/NAME/SKILL.md in the workspace, or ~/.agents/skills/).</p>
      )}
      {skills !== null && skills.length > 0 && (
        <ul className="skill-list">
          {skills.map((s) => (
            <li
              key={s.path}
              className="skill-row"
              data-testid="skill-row"
              data-name={s.name}
              data-source={s.source}
              data-trusted={String(s.trusted)}
            >
              <strong>{s.name}</strong> <span className="muted">({s.source})</span>{" "}
              <span className={s.trusted ? "skill-trust ok" : "skill-trust"}>{s.trusted ? "trusted" : "not trusted"}</span>
              {s.error ? (
                <p className="skill-error" data-testid="skill-error">
                  {s.error}
                </p>
              ) : (
                <p className="muted">{s.description}</p>
              )}
              <p className="muted skill-path">{s.path}</p>
            </li>
          ))}
        </ul>
      )}
      {untrusted.length > 0 && (
        <div className="skill-question">
          <p>
            This workspace has {untrusted.length} skill{untrusted.length === 1 ? "" : "s"} someone else wrote (
            {untrusted.map((s) => s.name).join(", ")}). They are offered to the model only once you trust them; a
            file changed later is not offered until trusted again.
          </p>
          <button type="button" className="button" data-testid="skills-trust" disabled={busy} onClick={trust}>
            Trust the workspace's skills
          </button>
        </div>
      )}
    </div>
  );
}
