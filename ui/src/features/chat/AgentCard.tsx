// A child agent in its parent's turn (DESIGN §16.1): its task, where it stands, its last message,
// and a way to open its own session (its calls, its questions). It lives on the `spawn_agent`
// call that started it and moves with the parent's `agentUpdated` events.
import type { AgentInfo } from "../../api/types";

interface Props {
  agent: AgentInfo;
  /** Shows the child's own session. */
  onOpen?: (sessionId: string) => void;
}

const STATE_TEXT: Record<AgentInfo["state"], string> = {
  working: "working",
  "needs-you": "needs you",
  idle: "done",
  failed: "failed",
  closed: "closed",
};

export function AgentCard({ agent, onOpen }: Props) {
  const tokens = agent.usage.inputTokens + agent.usage.outputTokens;
  return (
    <div className={`agent-card state-${agent.state}`} data-testid="agent-card" data-state={agent.state} data-agent-id={agent.id}>
      <div className="agent-card-head">
        <span className="agent-card-name">
          {agent.role ?? "agent"} {agent.id.slice(0, 8)}
        </span>
        <span className={`status-chip agent-${agent.state}`}>{STATE_TEXT[agent.state]}</span>
        {tokens > 0 && <span className="muted">{tokens.toLocaleString()} tokens</span>}
        {onOpen && (
          <button type="button" className="link-button" data-testid="agent-open" onClick={() => onOpen(agent.id)}>
            Open its session
          </button>
        )}
      </div>
      <div className="agent-card-task">{agent.task}</div>
      {agent.error && <div className="agent-card-error error-text">{agent.error}</div>}
      {agent.expired.map((question) => (
        <div key={question} className="agent-card-error error-text">
          Expired unanswered: {question}
        </div>
      ))}
      {agent.lastMessage && (
        <div className="agent-card-message" data-testid="agent-last-message">
          {agent.lastMessage}
        </div>
      )}
    </div>
  );
}
