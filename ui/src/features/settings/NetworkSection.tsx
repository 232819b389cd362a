// The sandbox's network in Settings (`[sandbox.network]`): what a host no pattern names gets, the
// allow and deny patterns one per line, and the hosts a person allowed for the open session.
// Those last ones are shown, not edited: they end with the session and are never saved.
import type { NetworkMode, NetworkSettings } from "../../api/types";
import { Field } from "./Field";
import { LinesInput } from "./LinesInput";

export const NETWORK_MODES: { mode: NetworkMode; label: string }[] = [
  { mode: "off", label: "Off: no network" },
  { mode: "ask", label: "Ask about unlisted hosts" },
  { mode: "allow", label: "Only listed hosts" },
];

interface Props {
  network: NetworkSettings;
  /** `host:port` entries allowed for the open session. */
  sessionHosts: string[];
  onChange: (network: NetworkSettings) => void;
}

export function NetworkSection({ network, sessionHosts, onChange }: Props) {
  const modeHint =
    network.mode === "off"
      ? "Sandboxed commands reach no host at all, listed or not."
      : network.mode === "ask"
        ? "A host neither list names waits for your answer, like a tool call."
        : "A host the allow list does not name is refused.";
  return (
    <>
      <Field label="Mode" hint={modeHint}>
        <select
          data-testid="settings-network-mode"
          value={network.mode}
          onChange={(e) => onChange({ ...network, mode: e.target.value as NetworkMode })}
        >
          {NETWORK_MODES.map((m) => (
            <option key={m.mode} value={m.mode}>
              {m.label}
            </option>
          ))}
        </select>
      </Field>
      <Field
        label="Allowed hosts"
        hint={
          <>
            One pattern per line: <code>crates.io</code>, <code>*.npmjs.org</code>, <code>github.com:22</code>. A private
            or loopback address is reached only when listed as an address, e.g. <code>10.0.0.5</code>.
          </>
        }
      >
        <LinesInput
          testId="settings-network-allow"
          values={network.allow}
          placeholder="one host pattern per line, e.g. crates.io"
          onChange={(allow) => onChange({ ...network, allow })}
        />
      </Field>
      <Field label="Refused hosts" hint="Refused without asking, even when the allow list names them.">
        <LinesInput
          testId="settings-network-deny"
          values={network.deny}
          placeholder="e.g. *.example.com"
          onChange={(deny) => onChange({ ...network, deny })}
        />
      </Field>
      <div className="settings-field">
        <span>Allowed this session</span>
        <ul className="session-hosts" data-testid="settings-session-hosts">
          {sessionHosts.length === 0 ? (
            <li className="muted">none</li>
          ) : (
            sessionHosts.map((h) => (
              <li key={h} data-testid="session-host" data-host={h}>
                <code>{h}</code>
              </li>
            ))
          )}
        </ul>
        <small className="muted">Answered &ldquo;for the session&rdquo; in an approval; they end with the session.</small>
      </div>
    </>
  );
}
