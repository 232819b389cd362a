// The transcript: messages, tool cards (with their approval cards) and notices, kept scrolled to
// the newest entry while the user is at the bottom.
import { useEffect, useRef } from "react";
import type { ApprovalRequest } from "../../api/types";
import type { ChatItem } from "../../store/state";
import { type AnswerFn, ApprovalCard } from "../approvals/ApprovalCard";
import { MessageBubble } from "./MessageBubble";
import { ToolCallCard } from "./ToolCallCard";

interface Props {
  items: ChatItem[];
  approvals: ApprovalRequest[];
  /** Requests answered whose resolution has not arrived yet. */
  answering: string[];
  onAnswer: AnswerFn;
  workspace: string | null;
}

export function MessageList({ items, approvals, answering, onAnswer, workspace }: Props) {
  const scroller = useRef<HTMLDivElement>(null);
  const pinned = useRef(true);

  useEffect(() => {
    const el = scroller.current;
    if (el && pinned.current) el.scrollTop = el.scrollHeight;
  }, [items, approvals]);

  const onScroll = () => {
    const el = scroller.current;
    if (el) pinned.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
  };

  const callIds = new Set(items.flatMap((i) => (i.kind === "tool" ? [i.call.id] : [])));
  const orphans = approvals.filter((a) => !callIds.has(a.callId));

  return (
    <div className="message-list" ref={scroller} onScroll={onScroll}>
      {items.length === 0 && (
        <p className="empty-chat">
          {workspace ? `Ask the agent about ${workspace}.` : "Ask the agent about your workspace."}
        </p>
      )}
      {items.map((item) => {
        switch (item.kind) {
          case "user":
            return <MessageBubble key={item.key} role="user" text={item.text} />;
          case "assistant":
            return (
              <MessageBubble
                key={item.key}
                role="assistant"
                text={item.text}
                streaming={item.streaming}
                cutOff={item.cutOff ?? false}
              />
            );
          case "tool": {
            const approval = approvals.find((a) => a.callId === item.call.id) ?? null;
            return (
              <ToolCallCard
                key={item.key}
                item={item}
                approval={approval}
                answering={approval !== null && answering.includes(approval.id)}
                onAnswer={onAnswer}
              />
            );
          }
          case "notice":
            return (
              <p key={item.key} className={`notice ${item.tone}`}>
                {item.text}
              </p>
            );
        }
      })}
      {orphans.map((a) => (
        <ApprovalCard key={a.id} request={a} answering={answering.includes(a.id)} onAnswer={onAnswer} />
      ))}
    </div>
  );
}
