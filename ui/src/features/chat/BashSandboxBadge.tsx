// On a finished bash card: how that command ran (`data.sandbox`, `data.escalated` of its
// result), warning-coloured when it ran outside the sandbox; and that what it changed is not
// in a checkpoint (`data.checkpointed: false`), so an undo cannot restore it. A result with
// `data.effects` says that in its changes (`BashChanges`) instead, next to the files it means.
// What of the home folder the command saw, when its sandbox hid it (`data.sandboxHome`), is in
// the badge's title.
import type { ToolResult } from "../../api/types";
import { effectsOf } from "./bashEffects";

function field(result: ToolResult, name: string): unknown {
  const data = result.data;
  return data !== null && typeof data === "object" && !Array.isArray(data) ? (data as Record<string, unknown>)[name] : undefined;
}

export function BashSandboxBadge({ result }: { result: ToolResult }) {
  const sandbox = field(result, "sandbox");
  if (typeof sandbox !== "string") return null;
  const escalated = field(result, "escalated") === true;
  const confined = sandbox !== "none";
  const text = confined ? `sandboxed · ${sandbox}` : escalated ? "escalated · unsandboxed" : "unsandboxed";
  const checkpointed = effectsOf(result) !== null || field(result, "checkpointed") !== false;
  const home = field(result, "sandboxHome");
  const ran = confined ? "Ran inside the OS sandbox" : "Ran outside the OS sandbox";
  return (
    <>
      <span
        className={confined ? "sandbox-badge" : "sandbox-badge unsandboxed"}
        data-testid="bash-sandbox"
        data-sandbox={sandbox}
        title={typeof home === "string" && home !== "" ? `${ran}\n${home}` : ran}
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
