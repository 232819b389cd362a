// A network request: a sandboxed command wants a host no `[sandbox.network]` pattern names, and the
// engine asks (tool `network`, arguments `{host, port, command}`) while the connection waits.
import type { ApprovalRequest } from "../../api/types";

/** The tool name the engine gives network requests. */
export const NETWORK_TOOL = "network";

export interface HostRequest {
  /** The host as the command named it. */
  host: string;
  port: number;
  /** The command line that asked. */
  command: string;
}

/** The host `request` asks about, or null when it is not a network request (or not readable as one). */
export function hostRequestOf(request: ApprovalRequest): HostRequest | null {
  if (request.tool !== NETWORK_TOOL) return null;
  let value: unknown;
  try {
    value = JSON.parse(request.arguments);
  } catch {
    return null;
  }
  if (typeof value !== "object" || value === null) return null;
  const { host, port, command } = value as Record<string, unknown>;
  if (typeof host !== "string" || typeof port !== "number") return null;
  return { host, port, command: typeof command === "string" ? command : "" };
}

/** `host:port` as `[sandbox.network] allow` takes it: an IPv6 address in brackets. */
export function hostPort({ host, port }: { host: string; port: number }): string {
  return host.includes(":") && !host.startsWith("[") ? `[${host}]:${port}` : `${host}:${port}`;
}
