// On a finished bash card: the hosts its command reached or was refused through Bridle's proxy
// (`data.hosts` of its result), one row each, a refusal with why.
import type { ToolResult } from "../../api/types";
import { formatBytes } from "../usage/format";
import { hostPort } from "../approvals/hostRequest";

/** One host a command dealt with, as the bash tool reports it. */
export interface HostUse {
  host: string;
  port: number;
  allowed: boolean;
  connections: number;
  sent: number;
  received: number;
  reason: string | null;
}

function isHostUse(value: unknown): value is HostUse {
  if (value === null || typeof value !== "object") return false;
  const v = value as Record<string, unknown>;
  return (
    typeof v.host === "string" &&
    typeof v.port === "number" &&
    typeof v.allowed === "boolean" &&
    typeof v.connections === "number" &&
    typeof v.sent === "number" &&
    typeof v.received === "number"
  );
}

/** The hosts in a bash result's data; none when it has no readable list. */
export function hostsOf(result: ToolResult): HostUse[] {
  const data = result.data;
  if (data === null || typeof data !== "object" || Array.isArray(data)) return [];
  const hosts = (data as Record<string, unknown>).hosts;
  return Array.isArray(hosts) ? hosts.filter(isHostUse) : [];
}

function hostLine(h: HostUse): string {
  if (!h.allowed) return `refused ${hostPort(h)} — ${h.reason ?? "refused"}`;
  const connections = `${h.connections} connection${h.connections === 1 ? "" : "s"}`;
  return `reached ${hostPort(h)} — ${connections}, ${formatBytes(h.sent)} sent / ${formatBytes(h.received)} received`;
}

export function BashHosts({ result }: { result: ToolResult }) {
  const hosts = hostsOf(result);
  if (hosts.length === 0) return null;
  return (
    <ul className="bash-hosts" data-testid="bash-hosts" aria-label="Hosts the command reached">
      {hosts.map((h, i) => (
        <li
          key={`${i}-${h.host}:${h.port}`}
          className={h.allowed ? "bash-host" : "bash-host refused"}
          data-testid="bash-host"
          data-host={h.host}
          data-port={h.port}
          data-allowed={h.allowed ? "true" : "false"}
        >
          {hostLine(h)}
        </li>
      ))}
    </ul>
  );
}
