// How `bash` runs in this session: inside bubblewrap or Landlock, or unsandboxed — which is a
// warning, with the reason, because then nothing but the guard stands between a command and
// the machine. A sandbox that does not hold every promise (Landlock) says so, with what it
// leaves open (`why`); one that hides the home folder says so, with what of it commands still
// see (`home`), so a command that cannot find `~/.ssh` is no surprise.
interface Props {
  sandbox: string;
  why: string | null;
  /** What of the home folder commands see when the sandbox hides it; null when it does not. */
  home: string | null;
}

export function SandboxStatus({ sandbox, why, home }: Props) {
  const confined = sandbox !== "none";
  const partial = confined && why !== null;
  // Only a sandbox can hide home: an unsandboxed session shows its warning alone.
  const hidden = confined ? home : null;
  const held = partial
    ? `Shell commands run inside an OS sandbox that does not hold everything: ${why}`
    : "Shell commands run inside an OS sandbox";
  const title = confined ? (hidden !== null ? `${held}\n${hidden}` : held) : (why ?? "Shell commands run unsandboxed");
  return (
    <span
      className={confined && !partial ? "chip sandbox-status" : "chip sandbox-status unsandboxed"}
      data-testid="sandbox-status"
      data-sandbox={sandbox}
      data-partial={partial ? "true" : undefined}
      data-home={hidden ?? undefined}
      title={title}
    >
      {confined
        ? `bash: sandboxed (${sandbox})${partial ? " · partial" : ""}${hidden !== null ? " · home hidden" : ""}`
        : `bash: unsandboxed — ${why ?? "no sandbox"}`}
    </span>
  );
}
