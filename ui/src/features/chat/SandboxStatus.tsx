// How `bash` runs in this session: inside bubblewrap or Landlock, or unsandboxed — which is a
// warning, with the reason, because then nothing but the guard stands between a command and
// the machine. A sandbox that does not hold every promise (Landlock) says so, with what it
// leaves open (`why`).
interface Props {
  sandbox: string;
  why: string | null;
}

export function SandboxStatus({ sandbox, why }: Props) {
  const confined = sandbox !== "none";
  const partial = confined && why !== null;
  const title = confined
    ? partial
      ? `Shell commands run inside an OS sandbox that does not hold everything: ${why}`
      : "Shell commands run inside an OS sandbox"
    : (why ?? "Shell commands run unsandboxed");
  return (
    <span
      className={confined && !partial ? "chip sandbox-status" : "chip sandbox-status unsandboxed"}
      data-testid="sandbox-status"
      data-sandbox={sandbox}
      data-partial={partial ? "true" : undefined}
      title={title}
    >
      {confined ? `bash: sandboxed (${sandbox})${partial ? " · partial" : ""}` : `bash: unsandboxed — ${why ?? "no sandbox"}`}
    </span>
  );
}
