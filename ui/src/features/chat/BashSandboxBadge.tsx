// On a finished bash card: how that command ran (its typed details' `sandbox` and `escalated`),
// warning-coloured when it ran outside the sandbox; and that what it changed is not in a
// checkpoint, so an undo cannot restore it (a result with effects says that in its changes,
// `BashChanges`, instead, next to the files it means). What of the home folder the command saw,
// when its sandbox hid it (`sandboxHome`), is in the badge's title.
import type { ToolResult } from "../../api/types";
import { bashRunOf } from "./bashEffects";

export function BashSandboxBadge({ result }: { result: ToolResult }) {
  const run = bashRunOf(result);
  if (run === null) return null;
  const { sandbox, escalated, checkpointed, sandboxHome: home } = run;
  const confined = sandbox !== "none";
  const text = confined ? `sandboxed · ${sandbox}` : escalated ? "escalated · unsandboxed" : "unsandboxed";
  const ran = confined ? "Ran inside the OS sandbox" : "Ran outside the OS sandbox";
  return (
    <>
      <span
        className={confined ? "sandbox-badge" : "sandbox-badge unsandboxed"}
        data-testid="bash-sandbox"
        data-sandbox={sandbox}
        title={home !== null && home !== "" ? `${ran}\n${home}` : ran}
      >
        {text}
      </span>
      {!checkpointed && (
        <span
          className="sandbox-badge"
          data-testid="bash-not-checkpointed"
          title="Files a command changes are not kept in checkpoints: undo cannot restore them"
        >
          not undoable
        </span>
      )}
    </>
  );
}
