// One tool call: name, arguments at a glance, status, duration, and its output on demand. A bash
// call lists the hosts its command reached or was refused, and what it changed in the workspace
// (its diff is shown there, once, not again in the expanded card). A call waiting for a human (or
// whose command waits for an answer about a host, or about keeping what it changed) carries its
// approval card.
import { useState } from "react";
import type { AgentInfo, ApprovalRequest } from "../../api/types";
import type { ChatItem } from "../../store/state";
import { formatDuration } from "../usage/format";
import { type AnswerFn, ApprovalCard } from "../approvals/ApprovalCard";
import { DiffLines } from "../diff/DiffLines";
import { AgentCard } from "./AgentCard";
import { BashChanges } from "./BashChanges";
import { bashRunOf } from "./bashEffects";
import { BashHosts } from "./BashHosts";
import { BashSandboxBadge } from "./BashSandboxBadge";

type ToolItem = Extract<ChatItem, { kind: "tool" }>;

interface Props {
  item: ToolItem;
  approval: ApprovalRequest | null;
  /** An answer to `approval` is on its way. */
  answering: boolean;
  onAnswer: AnswerFn;
  /** The child a `spawn_agent` call started (DESIGN §16.1). */
  agent?: AgentInfo | null;
  /** Shows another session (a child's). */
  onOpenSession?: (sessionId: string) => void;
}

const STATUS_TEXT: Record<ToolItem["status"], string> = {
  running: "running",
  pending: "needs approval",
  ok: "ok",
  error: "error",
  denied: "denied",
  interrupted: "interrupted",
};

/** The arguments on one line, shortened; the full text is in the expanded card. */
function argumentsLine(raw: string): string {
  const oneLine = raw.replace(/\s+/g, " ").trim();
  return oneLine.length > 140 ? `${oneLine.slice(0, 139)}…` : oneLine;
}

export function ToolCallCard({ item, approval, answering, onAnswer, agent = null, onOpenSession }: Props) {
  const [open, setOpen] = useState(false);
  const { call, status, durationMs, result } = item;
  const bashChanges = call.name === "bash" && result !== null && (bashRunOf(result)?.effects ?? null) !== null;
  return (
    <div className={`tool-call status-${status}`} data-testid="tool-call" data-tool={call.name} data-status={status}>
      <button type="button" className="tool-call-head" aria-expanded={open} onClick={() => setOpen(!open)}>
        <span className="tool-call-toggle" aria-hidden="true">
          {open ? "▾" : "▸"}
        </span>
        <span className="tool-call-name">{call.name}</span>
        <span className="tool-call-args">{argumentsLine(call.arguments)}</span>
        {call.name === "bash" && result && <BashSandboxBadge result={result} />}
        {durationMs !== null && <span className="tool-call-duration">{formatDuration(durationMs)}</span>}
        <span className={`status-chip ${status}`}>{STATUS_TEXT[status]}</span>
      </button>
      {agent && <AgentCard agent={agent} onOpen={onOpenSession} />}
      {call.name === "bash" && result && <BashHosts result={result} />}
      {bashChanges && result && <BashChanges result={result} />}
      {open && (
        <div className="tool-call-body">
          <div className="tool-call-section">arguments</div>
          <pre className="code">{call.arguments}</pre>
          <div className="tool-call-section">output</div>
          {result ? (
            <pre className={result.isError ? "code error-text" : "code"}>{result.output || "(no output)"}</pre>
          ) : (
            <p className="muted">No output yet.</p>
          )}
          {result?.diff && !bashChanges && (
            <>
              <div className="tool-call-section">diff</div>
              <DiffLines diff={result.diff} testId="tool-call-diff" />
            </>
          )}
        </div>
      )}
      {approval && <ApprovalCard key={approval.id} request={approval} answering={answering} onAnswer={onAnswer} />}
    </div>
  );
}
