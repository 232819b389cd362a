// The window: navigation rail, errors, and the active view, all fed by the one session store.
import { useState } from "react";
import { ApprovalsView } from "./features/approvals/ApprovalsView";
import { useApprovalNotifications } from "./features/approvals/useApprovalNotifications";
import { AuditView } from "./features/audit/AuditView";
import { ChangesView } from "./features/changes/ChangesView";
import { ChatView } from "./features/chat/ChatView";
import { ErrorBanner } from "./features/errors/ErrorBanner";
import { NavBar } from "./features/nav/NavBar";
import type { ViewId } from "./features/nav/views";
import { PlaceholderView } from "./features/placeholder/PlaceholderView";
import { UsageView } from "./features/usage/UsageView";
import { useSession } from "./store/useSession";

const PLANNED: Record<"settings", { title: string; purpose: string }> = {
  settings: { title: "Settings", purpose: "Provider, model, API key, workspace, mode, rules, MCP servers and limits." },
};

export function App() {
  const session = useSession();
  const { state, info, commands } = session;
  const [view, setView] = useState<ViewId>("chat");
  useApprovalNotifications(state.approvals);
  return (
    <div className="app">
      <NavBar active={view} onSelect={setView} badges={{ approvals: state.approvals.length }} />
      <main className="main">
        <ErrorBanner errors={state.errors} onDismiss={commands.dismissError} />
        {/* Chat stays mounted so a draft and the scroll position survive a look at another view. */}
        <div className="view" hidden={view !== "chat"}>
          <ChatView session={session} />
        </div>
        {view === "approvals" && (
          <div className="view">
            <ApprovalsView approvals={state.approvals} answering={state.answering} onAnswer={commands.answer} />
          </div>
        )}
        {view === "audit" && (
          <div className="view">
            <AuditView sessionId={info?.sessionId ?? state.sessionId} eventCount={state.eventCount} />
          </div>
        )}
        {view === "changes" && (
          <div className="view">
            <ChangesView changes={state.changes} busy={state.turn.phase !== "idle"} onUndo={commands.undo} />
          </div>
        )}
        {view === "usage" && (
          <div className="view">
            <UsageView usage={state.usage} />
          </div>
        )}
        {view === "settings" && <PlaceholderView {...PLANNED[view]} />}
      </main>
    </div>
  );
}
