// What the managed policy (an administrator's file the user cannot write) fixes: each setting
// with its value and why it cannot be changed here. Read-only: the form never holds these, so a
// save cannot write them into the user's config.
import type { ManagedSetting } from "../../api/types";

export function ManagedSection({ managed }: { managed: ManagedSetting[] }) {
  if (managed.length === 0) return null;
  return (
    <section className="settings-section managed" data-testid="managed-settings">
      <h3>Managed by your organisation</h3>
      <ul className="managed-list">
        {managed.map((m) => (
          <li key={m.key} data-testid="managed-setting" data-key={m.key} title={m.reason}>
            <code>{m.key}</code> = <code>{m.value}</code> <span className="chip">managed</span>
            <div className="muted">{m.reason}; you cannot change or loosen it.</div>
          </li>
        ))}
      </ul>
    </section>
  );
}
