// The transcript: messages, tool cards (with their approval cards) and notices, kept scrolled to
// the newest entry while the user is at the bottom. Virtualised: only the entries in view (and a
// few either side) are in the DOM, each measured as it renders, so a session of thousands of
// messages opens and scrolls as fast as a short one.
import { useVirtualizer } from "@tanstack/react-virtual";
import { type ReactNode, useEffect, useLayoutEffect, useMemo, useRef } from "react";
import type { AgentInfo, ApprovalRequest } from "../../api/types";
import type { ChatItem } from "../../store/state";
import { type AnswerFn, ApprovalCard } from "../approvals/ApprovalCard";
import { MessageBubble, markdownModule } from "./MessageBubble";
import { ToolCallCard } from "./ToolCallCard";

interface Props {
  items: ChatItem[];
  approvals: ApprovalRequest[];
  /** Requests answered whose resolution has not arrived yet. */
  answering: string[];
  onAnswer: AnswerFn;
  workspace: string | null;
  /** The session's children, by the call that started each. */
  agents?: Record<string, AgentInfo>;
  /** Shows another session (a child's). */
  onOpenSession?: (sessionId: string) => void;
}

/** The height a row is assumed to have until it is measured, in pixels. */
const ESTIMATE = 64;
/** How many rows past the rendered ones, in the scroll's direction, have their markdown parsed ahead. */
const AHEAD = 24;

/** One entry of the list: a transcript item, or a request whose call is not in the transcript. */
type Row = { key: string; item: ChatItem } | { key: string; orphan: ApprovalRequest };

export function MessageList({ items, approvals, answering, onAnswer, workspace, agents = {}, onOpenSession }: Props) {
  const scroller = useRef<HTMLDivElement>(null);
  const pinned = useRef(true);

  const rows = useMemo<Row[]>(() => {
    const callIds = new Set(items.flatMap((i) => (i.kind === "tool" ? [i.call.id] : [])));
    const orphans = approvals.filter((a) => !callIds.has(a.callId));
    return [...items.map((item) => ({ key: item.key, item })), ...orphans.map((a) => ({ key: `approval-${a.id}`, orphan: a }))];
  }, [items, approvals]);

  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => ESTIMATE,
    // A row in a hidden view measures 0; keep the estimate until it can be measured for real.
    // After the first measure, the size comes with the resize observer's entry: no layout is
    // forced in the middle of a frame.
    measureElement: (el, entry) => (entry?.borderBoxSize?.[0]?.blockSize ?? el.getBoundingClientRect().height) || ESTIMATE,
    overscan: 6,
    getItemKey: (index) => rows[index]?.key ?? index,
  });
  const total = virtualizer.getTotalSize();

  // At the bottom, stay there: after new entries, and after entries are measured taller.
  useLayoutEffect(() => {
    const el = scroller.current;
    if (el && pinned.current) el.scrollTop = el.scrollHeight;
  }, [rows, total]);

  // The assistant texts about to scroll into view have their markdown parsed between frames, so
  // a fast scroll mounts rows that are ready (parsing them in the frame made its slowest ones).
  const shown = virtualizer.getVirtualItems();
  const first = shown[0]?.index ?? 0;
  const last = shown[shown.length - 1]?.index ?? -1;
  const direction = virtualizer.scrollDirection;
  useEffect(() => {
    if (last < 0) return;
    const [from, to] =
      direction === "backward"
        ? [first - AHEAD, first]
        : direction === "forward"
          ? [last + 1, last + 1 + AHEAD]
          : [first - AHEAD / 2, last + 1 + AHEAD / 2];
    const ahead = rows.slice(Math.max(0, from), Math.max(0, to));
    const texts = ahead.flatMap((r) => ("item" in r && r.item.kind === "assistant" && !r.item.streaming ? [r.item.text] : []));
    // Nearest first.
    if (direction === "backward") texts.reverse();
    if (texts.length) void markdownModule().then((m) => m.warm(texts));
  }, [rows, first, last, direction]);

  const onScroll = () => {
    const el = scroller.current;
    if (el) pinned.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
  };

  const render = (row: Row): ReactNode => {
    if ("orphan" in row) {
      const a = row.orphan;
      return <ApprovalCard request={a} answering={answering.includes(a.id)} onAnswer={onAnswer} />;
    }
    const item = row.item;
    switch (item.kind) {
      case "user":
        return <MessageBubble role="user" text={item.text} />;
      case "assistant":
        return <MessageBubble role="assistant" text={item.text} streaming={item.streaming} cutOff={item.cutOff ?? false} />;
      case "tool": {
        const approval = approvals.find((a) => a.callId === item.call.id) ?? null;
        return (
          <ToolCallCard
            item={item}
            approval={approval}
            answering={approval !== null && answering.includes(approval.id)}
            onAnswer={onAnswer}
            agent={agents[item.call.id] ?? null}
            onOpenSession={onOpenSession}
          />
        );
      }
      case "notice":
        return (
          <p className={`notice ${item.tone}`} data-testid="notice">
            {item.text}
          </p>
        );
    }
  };

  return (
    <div className="message-list" ref={scroller} onScroll={onScroll}>
      {rows.length === 0 && (
        <p className="empty-chat">{workspace ? `Ask the agent about ${workspace}.` : "Ask the agent about your workspace."}</p>
      )}
      {/* Styles set from script (CSSOM), which the CSP allows; none while they are the stylesheet's
          (0), so the prerendered first screen has no style attribute (which the CSP would drop). */}
      <div className="virtual-space" style={total ? { height: total } : undefined}>
        <div className="virtual-window" style={shown[0]?.start ? { transform: `translateY(${shown[0].start}px)` } : undefined}>
          {shown.map((v) => {
            const row = rows[v.index];
            return row ? (
              <div key={v.key} className="virtual-row" data-index={v.index} ref={virtualizer.measureElement}>
                {render(row)}
              </div>
            ) : null;
          })}
        </div>
      </div>
    </div>
  );
}
