// The Settings view's MCP servers: each configured server with its live status (pushed by the
// shell on every change: starting, ready with its tools, failed with why, disabled), and the
// ways to restart, edit, switch off, remove and add one. Every change goes to the shell at once
// (it edits the config in place and restarts only that server); the session goes on and offers
// the servers' tools as they stand from its next turn. Values of `env` and `headers` may be
// secrets: the form shows their names only and an edit keeps them. The list comes numbered
// (`seq`), pushed or answered; the view keeps the newest, so an answer that arrives after a
// newer push does not bring back an older state.
import { useEffect, useState } from "react";
import { mcpRemove, mcpRestart, mcpSave, mcpStatus, onMcpStatus } from "../../api/engine";
import { describeError } from "../../api/errors";
import type { McpServerList, McpServerSettings, McpServerStatus, Settings } from "../../api/types";
import { Field } from "./Field";

interface Props {
  servers: McpServerSettings[];
  /** Called with the settings as the shell saved them after an edit. */
  onSaved: (settings: Settings) => void;
}

const BLANK: McpServerSettings = {
  name: "",
  command: "",
  args: [],
  url: "",
  enabled: true,
  startupTimeoutSecs: 10,
  envNames: [],
  headerNames: [],
};

/** The command line (an argument with spaces or quotes shown quoted), or the URL. */
function target(s: McpServerSettings): string {
  const word = (w: string) => (w === "" || /[\s"'\\$`]/.test(w) ? JSON.stringify(w) : w);
  return s.command ? [s.command, ...s.args].map(word).join(" ") : s.url;
}

/** The list to keep: `incoming`, unless the one held is newer. */
export function newerList(held: McpServerList | null, incoming: McpServerList): McpServerList {
  return held !== null && held.seq > incoming.seq ? held : incoming;
}

/** The live list: what the shell answers, and every list it pushes, the newest kept; and
 * `offer`, for a list a command answered. */
function useMcpStatus(): { statuses: McpServerStatus[]; offer: (list: McpServerList) => void } {
  const [list, setList] = useState<McpServerList | null>(null);
  const offer = (incoming: McpServerList) => setList((held) => newerList(held, incoming));
  useEffect(() => {
    let live = true;
    const stop = onMcpStatus((incoming) => live && offer(incoming));
    mcpStatus().then(
      (incoming) => live && offer(incoming),
      () => {},
    );
    return () => {
      live = false;
      void stop.then((unlisten) => unlisten());
    };
  }, []);
  return { statuses: list?.servers ?? [], offer };
}

export function McpServers({ servers, onSaved }: Props) {
  const { statuses, offer } = useMcpStatus();
  // The server being edited (`previous` is its name before the edit; null for a new one).
  const [editing, setEditing] = useState<{ form: McpServerSettings; previous: string | null } | null>(null);
  const [removing, setRemoving] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState<string | null>(null);

  const run = async (what: string, action: () => Promise<void>) => {
    setBusy(what);
    setError(null);
    try {
      await action();
      return true;
    } catch (err) {
      setError(describeError(err));
      return false;
    } finally {
      setBusy(null);
    }
  };
  const save = async () => {
    if (!editing) return;
    if (await run("form", async () => onSaved(await mcpSave(editing.form, editing.previous)))) setEditing(null);
  };

  return (
    <div className="mcp" data-testid="settings-mcp-servers">
      {servers.length === 0 && !editing && (
        <p className="muted">
          No MCP servers are configured. Add one: a <code>command</code> the app starts (stdio) or a <code>url</code> (streamable
          HTTP); its tools are offered as <code>mcp__NAME__tool</code>.
        </p>
      )}
      <ul className="mcp-servers">
        {servers.map((server) => {
          const live = statuses.find((s) => s.name === server.name);
          const status = live?.status ?? (server.enabled ? "starting" : "disabled");
          return (
            <li key={server.name} className="mcp-server" data-testid="settings-mcp-server" data-name={server.name} data-status={status}>
              <div className="mcp-server-head">
                <code className="mcp-server-name">{server.name}</code>
                <span className={`mcp-status ${status}`} data-testid="settings-mcp-status">
                  {status}
                  {status === "ready" && live ? ` · ${live.tools.length} tool${live.tools.length === 1 ? "" : "s"}` : ""}
                </span>
                <span className="mcp-server-actions">
                  <button type="button" className="button small" data-testid="settings-mcp-restart" disabled={!server.enabled || busy !== null} onClick={() => void run(server.name, async () => offer(await mcpRestart(server.name)))}>
                    {busy === server.name ? "Restarting…" : "Restart"}
                  </button>
                  <button type="button" className="button small" data-testid="settings-mcp-toggle" disabled={busy !== null} onClick={() => void run(`toggle:${server.name}`, async () => onSaved(await mcpSave({ ...server, enabled: !server.enabled }, server.name)))}>
                    {server.enabled ? "Disable" : "Enable"}
                  </button>
                  <button type="button" className="button small" data-testid="settings-mcp-edit" disabled={busy !== null} onClick={() => setEditing({ form: server, previous: server.name })}>
                    Edit
                  </button>
                  <button
                    type="button"
                    className={`button small${removing === server.name ? " danger" : ""}`}
                    data-testid="settings-mcp-remove"
                    disabled={busy !== null}
                    onClick={() => {
                      if (removing !== server.name) return setRemoving(server.name);
                      setRemoving(null);
                      void run(`remove:${server.name}`, async () => onSaved(await mcpRemove(server.name)));
                    }}
                  >
                    {removing === server.name ? "Remove for good" : "Remove"}
                  </button>
                </span>
              </div>
              <div className="muted mcp-server-target">{target(server)}</div>
              {live?.error && (
                <div className="mcp-server-error" data-testid="settings-mcp-error">
                  {live.error}
                </div>
              )}
              {live && live.tools.length > 0 && (
                <details className="mcp-server-tools">
                  <summary>Tools</summary>
                  <ul data-testid="settings-mcp-tools">
                    {live.tools.map((tool) => (
                      <li key={tool}>
                        <code>{tool}</code>
                      </li>
                    ))}
                  </ul>
                </details>
              )}
            </li>
          );
        })}
      </ul>
      {editing ? (
        <McpServerForm
          value={editing.form}
          isNew={editing.previous === null}
          busy={busy === "form"}
          onChange={(form) => setEditing({ ...editing, form })}
          onSave={() => void save()}
          onCancel={() => {
            setEditing(null);
            setError(null);
          }}
        />
      ) : (
        <button type="button" className="button" data-testid="settings-mcp-add" onClick={() => setEditing({ form: BLANK, previous: null })}>
          Add a server
        </button>
      )}
      {error && (
        <p className="settings-status error" role="alert" data-testid="settings-mcp-failure">
          {error}
        </p>
      )}
    </div>
  );
}

function McpServerForm(props: {
  value: McpServerSettings;
  isNew: boolean;
  busy: boolean;
  onChange: (v: McpServerSettings) => void;
  onSave: () => void;
  onCancel: () => void;
}) {
  const v = props.value;
  const [http, setHttp] = useState(v.url !== "" && v.command === "");
  const set = (patch: Partial<McpServerSettings>) => props.onChange({ ...v, ...patch });
  const secrets = http ? v.headerNames : v.envNames;
  return (
    <div className="mcp-form" data-testid="settings-mcp-form">
      <h4>{props.isNew ? "New MCP server" : `Edit ${v.name}`}</h4>
      <div className="settings-grid">
        <Field label="Name">
          <input data-testid="settings-mcp-name" value={v.name} placeholder="time" onChange={(e) => set({ name: e.target.value })} />
        </Field>
        <Field label="Transport">
          <select
            data-testid="settings-mcp-transport"
            value={http ? "http" : "stdio"}
            onChange={(e) => {
              const toHttp = e.target.value === "http";
              setHttp(toHttp);
              set(toHttp ? { command: "", args: [] } : { url: "" });
            }}
          >
            <option value="stdio">stdio (a command)</option>
            <option value="http">streamable HTTP (a URL)</option>
          </select>
        </Field>
      </div>
      {http ? (
        <Field label="URL">
          <input data-testid="settings-mcp-url" value={v.url} placeholder="http://127.0.0.1:3001/mcp" onChange={(e) => set({ url: e.target.value })} />
        </Field>
      ) : (
        <>
          <Field label="Command">
            <input data-testid="settings-mcp-command" value={v.command} placeholder="uvx" onChange={(e) => set({ command: e.target.value })} />
          </Field>
          <Field label="Arguments, one per line">
            <textarea
              data-testid="settings-mcp-args"
              rows={3}
              value={v.args.join("\n")}
              placeholder="mcp-server-time"
              onChange={(e) => set({ args: e.target.value.split("\n") })}
            />
          </Field>
        </>
      )}
      <div className="settings-grid">
        <Field label="Start-up timeout (s)">
          <input
            data-testid="settings-mcp-timeout"
            type="number"
            min={1}
            value={v.startupTimeoutSecs}
            onChange={(e) => set({ startupTimeoutSecs: Math.max(0, Number.parseInt(e.target.value, 10) || 0) })}
          />
        </Field>
        <label className="settings-check">
          <input type="checkbox" data-testid="settings-mcp-enabled" checked={v.enabled} onChange={(e) => set({ enabled: e.target.checked })} />
          Start it with the session
        </label>
      </div>
      {secrets.length > 0 && (
        <p className="muted">
          Kept as the config file has them: {http ? "headers" : "environment variables"} {secrets.join(", ")}.
        </p>
      )}
      <div className="mcp-form-actions">
        <button type="button" className="button primary" data-testid="settings-mcp-form-save" disabled={props.busy} onClick={props.onSave}>
          {props.busy ? "Starting…" : props.isNew ? "Add and start" : "Save and restart"}
        </button>
        <button type="button" className="button" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </div>
  );
}
