// The window: navigation rail plus the active view, all fed by the one session store.
import { useState } from "react";
import { ChatView } from "./features/chat/ChatView";
import { NavBar } from "./features/nav/NavBar";
import type { ViewId } from "./features/nav/views";
import { PlaceholderView } from "./features/placeholder/PlaceholderView";
import { useSession } from "./store/useSession";

const PLANNED: Record<Exclude<ViewId, "chat">, { title: string; purpose: string }> = {
  approvals: {
    title: "Approvals",
    purpose: "Every pending request with its tool, editable arguments, findings and diff preview. For now, answer requests on their cards in Chat.",
  },
  changes: { title: "Changes", purpose: "The diff of every file change, per turn, with undo." },
  usage: { title: "Usage", purpose: "Tokens per turn and per session, the context meter and a chart over turns." },
  audit: { title: "Audit", purpose: "Everything the agent did, filterable, searchable and exportable." },
  settings: { title: "Settings", purpose: "Provider, model, API key, workspace, mode, rules, MCP servers and limits." },
};

export function App() {
  const session = useSession();
  const [view, setView] = useState<ViewId>("chat");
  return (
    <div className="app">
      <NavBar active={view} onSelect={setView} badges={{ approvals: session.state.approvals.length }} />
      <main className="main">
        {/* Chat stays mounted so a draft and the scroll position survive a look at another view. */}
        <div className="view" hidden={view !== "chat"}>
          <ChatView session={session} />
        </div>
        {view !== "chat" && <PlaceholderView {...PLANNED[view]} />}
      </main>
    </div>
  );
}
