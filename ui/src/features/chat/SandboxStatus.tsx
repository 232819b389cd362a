// How `bash` runs in this session: inside bubblewrap or Landlock, or unsandboxed — which is a
// warning, with the reason, because then nothing but the guard stands between a command and
// the machine.
interface Props {
  sandbox: string;
  why: string | null;
}

export function SandboxStatus({ sandbox, why }: Props) {
  const confined = sandbox !== "none";
  return (
    <span
      className={confined ? "chip sandbox-status" : "chip sandbox-status unsandboxed"}
      data-testid="sandbox-status"
      data-sandbox={sandbox}
      title={confined ? "Shell commands run inside an OS sandbox" : (why ?? "Shell commands run unsandboxed")}
    >
      {confined ? `bash: sandboxed (${sandbox})` : `bash: unsandboxed — ${why ?? "no sandbox"}`}
    </span>
  );
}
