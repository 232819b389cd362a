// On a finished bash card: the hosts its command reached or was refused through Bridle's proxy
// (the `hosts` of its typed details), one row each, a refusal with why.
import type { HostUse, ToolResult } from "../../api/types";
import { formatBytes } from "../usage/format";
import { hostPort } from "../approvals/hostRequest";
import { bashRunOf } from "./bashEffects";

function hostLine(h: HostUse): string {
  if (!h.allowed) return `refused ${hostPort(h)} — ${h.reason ?? "refused"}`;
  const connections = `${h.connections} connection${h.connections === 1 ? "" : "s"}`;
  return `reached ${hostPort(h)} — ${connections}, ${formatBytes(h.sent)} sent / ${formatBytes(h.received)} received`;
}

export function BashHosts({ result }: { result: ToolResult }) {
  const hosts = bashRunOf(result)?.hosts ?? [];
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
