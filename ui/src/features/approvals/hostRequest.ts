// A host question: a sandboxed command wants a host no `[sandbox.network]` pattern names, and the
// engine asks (`subject.type === "host"`) while the connection waits.

/** `host:port` as `[sandbox.network] allow` takes it: an IPv6 address in brackets. */
export function hostPort({ host, port }: { host: string; port: number }): string {
  return host.includes(":") && !host.startsWith("[") ? `[${host}]:${port}` : `${host}:${port}`;
}
