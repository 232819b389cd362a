// The Settings view, also the first-run panel: provider (kind, base URL, model from the server's
// own list, context window, API key into the OS keychain), mode, rules with what each one means,
// the sandbox's network (by host, with the hosts allowed for the open session), limits, and the MCP
// servers (live, saved on their own). Saving writes the config (the shell keeps the user's
// comments) and never the key, which goes to the keychain; the field never shows a stored key back.
import { useEffect, useState } from "react";
import { modelsList, settingsGet, settingsSave } from "../../api/engine";
import { describeError } from "../../api/errors";
import type { ModelInfo, Mode, Settings, SettingsUpdate } from "../../api/types";
import { allowedModes } from "../chat/ModePicker";
import { ManagedSection } from "./ManagedSection";
import { Field } from "./Field";
import { McpServers } from "./McpServers";
import { NetworkSection } from "./NetworkSection";
import { RuleEditor } from "./RuleEditor";
import { SkillsSection } from "./SkillsSection";

type Status = { tone: "ok" | "error" | "busy"; text: string } | null;

interface Props {
  /** Called once the settings are saved and the shell reopened the session under them. */
  onSaved: (settings: Settings) => void;
  /** Called when the shell reopened the session for another reason (skills trusted). */
  onReopened?: () => void;
}

function toForm(s: Settings): SettingsUpdate {
  return { provider: s.provider, apiKey: "", mode: s.mode, rules: s.rules, network: s.network, limits: s.limits };
}

function positive(text: string): number | null {
  const n = Number.parseInt(text, 10);
  return Number.isFinite(n) && n > 0 ? n : null;
}

export function SettingsView({ onSaved, onReopened }: Props) {
  const [settings, setSettings] = useState<Settings | null>(null);
  const [form, setForm] = useState<SettingsUpdate | null>(null);
  const [models, setModels] = useState<ModelInfo[] | null>(null);
  const [connection, setConnection] = useState<Status>(null);
  const [status, setStatus] = useState<Status>(null);
  const [loadError, setLoadError] = useState<string | null>(null);

  useEffect(() => {
    settingsGet().then(
      (s) => {
        setSettings(s);
        setForm(toForm(s));
      },
      (err: unknown) => setLoadError(describeError(err)),
    );
  }, []);

  if (loadError) return <p className="settings-error" role="alert">Cannot read the settings: {loadError}</p>;
  if (!settings || !form) return <p className="muted settings-loading">Loading settings…</p>;

  const provider = form.provider;
  const kindInfo = settings.kinds.find((k) => k.kind === provider.kind);
  const update = (patch: Partial<SettingsUpdate>) => {
    setForm({ ...form, ...patch });
    setStatus(null);
  };
  const setProvider = (patch: Partial<SettingsUpdate["provider"]>) => update({ provider: { ...provider, ...patch } });
  const changeKind = (kind: string) => {
    // A base URL left at the old kind's default follows the kind.
    const wasDefault = !provider.baseUrl || provider.baseUrl === kindInfo?.defaultBaseUrl;
    const next = settings.kinds.find((k) => k.kind === kind);
    setProvider({ kind, baseUrl: wasDefault && next ? next.defaultBaseUrl : provider.baseUrl });
    setModels(null);
    setConnection(null);
  };
  const testConnection = () => {
    setConnection({ tone: "busy", text: "Asking the server…" });
    modelsList(provider, form.apiKey || null).then(
      (list) => {
        setModels(list);
        setConnection({ tone: "ok", text: `Connected: ${list.length} model${list.length === 1 ? "" : "s"} offered.` });
        if (!provider.model && list[0]) setProvider({ model: list[0].id });
      },
      (err: unknown) => {
        setModels(null);
        setConnection({ tone: "error", text: describeError(err) });
      },
    );
  };
  const save = () => {
    setStatus({ tone: "busy", text: "Saving…" });
    settingsSave(form).then(
      (saved) => {
        setSettings(saved);
        setForm(toForm(saved));
        setStatus({ tone: "ok", text: "Saved. The session uses these settings now." });
        onSaved(saved);
      },
      (err: unknown) => setStatus({ tone: "error", text: describeError(err) }),
    );
  };
  const keyHint =
    settings.keySource === "keychain"
      ? "A key is stored in the OS keychain. Type a new one to replace it."
      : settings.keySource === "environment"
        ? `The key comes from ${kindInfo?.keyVariable ?? "the environment"}. A key typed here goes to the OS keychain and is used instead.`
        : "Stored in the OS keychain, never in the config file. Local servers usually need none.";

  return (
    <div className="settings" data-testid="settings-view">
      <form
        className="settings-form"
        onSubmit={(e) => {
          e.preventDefault();
          save();
        }}
      >
        {!settings.configured && (
          <div className="settings-first-run" data-testid="settings-first-run">
            <h2>Welcome to Bridle</h2>
            <p>Choose the model server the agent talks to. You can change everything here later.</p>
          </div>
        )}
        <p className="muted settings-file">
          Saved to <code>{settings.configFile}</code> (your comments in it are kept); keys go to the OS keychain.
        </p>
        <section className="settings-section">
          <h3>Model provider</h3>
          <Field label="Kind">
            <select
              data-testid="settings-provider-kind"
              value={provider.kind}
              onChange={(e) => changeKind(e.target.value)}
            >
              {settings.kinds.map((k) => (
                <option key={k.kind} value={k.kind}>
                  {k.kind}
                </option>
              ))}
            </select>
          </Field>
          <Field label="Base URL">
            <input
              data-testid="settings-base-url"
              type="url"
              spellCheck={false}
              value={provider.baseUrl}
              placeholder={kindInfo?.defaultBaseUrl}
              onChange={(e) => setProvider({ baseUrl: e.target.value })}
            />
          </Field>
          <Field label="API key" hint={keyHint}>
            <input
              data-testid="settings-api-key"
              type="password"
              autoComplete="off"
              spellCheck={false}
              value={form.apiKey ?? ""}
              placeholder={settings.keySource === "keychain" ? "•••••••• (stored)" : ""}
              onChange={(e) => update({ apiKey: e.target.value })}
            />
          </Field>
          <div className="settings-field">
            <span>Connection</span>
            <div className="settings-inline">
              <button type="button" className="button" data-testid="settings-test-connection" onClick={testConnection}>
                Test connection and list models
              </button>
              {connection && (
                <span className={`settings-status ${connection.tone}`} data-testid="settings-connection-status" role="status">
                  {connection.text}
                </span>
              )}
            </div>
          </div>
          <Field label="Model">
            {models && models.length > 0 ? (
              <select data-testid="settings-model" value={provider.model} onChange={(e) => setProvider({ model: e.target.value })}>
                {!models.some((m) => m.id === provider.model) && <option value={provider.model}>{provider.model || "(choose)"}</option>}
                {models.map((m) => (
                  <option key={m.id} value={m.id}>
                    {m.contextWindow ? `${m.id} (${m.contextWindow.toLocaleString("en-US")} tokens)` : m.id}
                  </option>
                ))}
              </select>
            ) : (
              <input
                data-testid="settings-model"
                spellCheck={false}
                value={provider.model}
                placeholder="e.g. gpt-4.1, claude-sonnet-4-5, qwen3:8b"
                onChange={(e) => setProvider({ model: e.target.value })}
              />
            )}
          </Field>
          <Field label="Context window" hint="Tokens. Leave empty to use what the server reports; a larger number than the server serves is corrected.">
            <input
              data-testid="settings-context-window"
              type="number"
              min={1}
              value={provider.contextWindow ?? ""}
              placeholder="ask the server"
              onChange={(e) => setProvider({ contextWindow: positive(e.target.value) })}
            />
          </Field>
        </section>

        <ManagedSection managed={settings.managed ?? []} />

        <section className="settings-section">
          <h3>Approvals</h3>
          <Field label="Mode">
            <select data-testid="settings-mode" value={form.mode} onChange={(e) => update({ mode: e.target.value as Mode })}>
              {allowedModes(settings.allowedModes).map((m) => (
                <option key={m.mode} value={m.mode}>
                  {m.mode}: {m.hint}
                </option>
              ))}
            </select>
          </Field>
          <RuleEditor list="deny" patterns={form.rules.deny} onChange={(deny) => update({ rules: { ...form.rules, deny } })} />
          <RuleEditor list="ask" patterns={form.rules.ask} onChange={(ask) => update({ rules: { ...form.rules, ask } })} />
          <RuleEditor list="allow" patterns={form.rules.allow} onChange={(allow) => update({ rules: { ...form.rules, allow } })} />
        </section>

        <section className="settings-section">
          <h3>Sandbox network</h3>
          <NetworkSection network={form.network} sessionHosts={settings.sessionHosts} onChange={(network) => update({ network })} />
        </section>

        <section className="settings-section">
          <h3>Limits</h3>
          <div className="settings-grid">
            <NumberField label="Model requests per turn" testId="settings-max-steps" value={form.limits.maxSteps} onChange={(maxSteps) => update({ limits: { ...form.limits, maxSteps } })} />
            <NumberField label="Tool timeout (s)" testId="settings-tool-timeout" value={form.limits.toolTimeoutSecs} onChange={(toolTimeoutSecs) => update({ limits: { ...form.limits, toolTimeoutSecs } })} />
            <NumberField label="Approval timeout (s)" testId="settings-approval-timeout" value={form.limits.approvalTimeoutSecs} onChange={(approvalTimeoutSecs) => update({ limits: { ...form.limits, approvalTimeoutSecs } })} />
            <NumberField label="Provider retries" testId="settings-max-retries" value={form.limits.maxRetries} min={0} onChange={(maxRetries) => update({ limits: { ...form.limits, maxRetries } })} />
          </div>
        </section>

        <footer className="settings-footer">
          <button type="submit" className="button primary" data-testid="settings-save" disabled={status?.tone === "busy"}>
            Save
          </button>
          {status && (
            <span className={`settings-status ${status.tone}`} data-testid="settings-status" role="status">
              {status.text}
            </span>
          )}
        </footer>
      </form>
      {/* Outside the form: each server is saved on its own, not with the form's Save. */}
      <section className="settings-section">
        <h3>MCP servers</h3>
        <McpServers servers={settings.mcpServers} onSaved={setSettings} />
      </section>
      <section className="settings-section">
        <h3>Skills</h3>
        <SkillsSection onTrusted={() => onReopened?.()} />
      </section>
    </div>
  );
}

function NumberField(props: { label: string; testId: string; value: number; min?: number; onChange: (n: number) => void }) {
  const min = props.min ?? 1;
  return (
    <Field label={props.label}>
      <input
        data-testid={props.testId}
        type="number"
        min={min}
        value={props.value}
        onChange={(e) => {
          const n = Number.parseInt(e.target.value, 10);
          if (Number.isFinite(n) && n >= min) props.onChange(n);
        }}
      />
    </Field>
  );
}
