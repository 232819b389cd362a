// The window: navigation rail, errors, and the active view, all fed by the one session store.
// With no provider configured (first run) it opens on Settings; when the shell opens another
// session (Sessions, or Settings saved) the store loads it from scratch.
import { useEffect, useState } from "react";
import { settingsGet } from "./api/engine";
import { ApprovalsView } from "./features/approvals/ApprovalsView";
import { AuditView } from "./features/audit/AuditView";
import { ChangesView } from "./features/changes/ChangesView";
import { ChatView } from "./features/chat/ChatView";
import { ErrorBanner } from "./features/errors/ErrorBanner";
import { ErrorBoundary } from "./features/errors/ErrorBoundary";
import { NavBar } from "./features/nav/NavBar";
import type { ViewId } from "./features/nav/views";
import { SessionsView } from "./features/sessions/SessionsView";
import { SettingsView } from "./features/settings/SettingsView";
import { UsageView } from "./features/usage/UsageView";
import { useSession } from "./store/useSession";

export function App() {
  const session = useSession();
  const { state, info, commands } = session;
  const [view, setView] = useState<ViewId>("chat");

  useEffect(() => {
    // The benchmark's mark: the window's first screen is on (scripts/bench-app/run.mjs).
    performance.mark?.("bridle: first render");
    // First run: no provider yet, so the first thing to do is choose one.
    settingsGet().then(
      (s) => !s.configured && setView("settings"),
      () => {
        // The error banner reports an unreachable shell already.
      },
    );
  }, []);

  return (
    <div className="app">
      <NavBar active={view} onSelect={setView} badges={{ approvals: state.approvals.length }} />
      <main className="main">
        <ErrorBanner errors={state.errors} onDismiss={commands.dismissError} />
        {/* Chat stays mounted (parked: laid out, invisible, inert) so a draft, the scroll position
            and the rendered rows survive a look at another view. */}
        <div className={view === "chat" ? "view" : "view parked"} inert={view !== "chat"} data-testid="chat-view">
          <ErrorBoundary>
            <ChatView session={session} />
          </ErrorBoundary>
        </div>
        {view !== "chat" && (
          <div className="view">
            <ErrorBoundary key={view}>
              {view === "sessions" && (
                <SessionsView
                  currentId={info?.sessionId ?? null}
                  onOpened={() => {
                    commands.reload();
                    setView("chat");
                  }}
                  onShowCurrent={() => setView("chat")}
                  busy={state.turn.phase !== "idle"}
                />
              )}
              {view === "approvals" && (
                <ApprovalsView approvals={state.approvals} answering={state.answering} onAnswer={commands.answer} />
              )}
              {view === "audit" && <AuditView sessionId={info?.sessionId ?? state.sessionId} eventCount={state.eventCount} />}
              {view === "changes" && (
                <ChangesView
                  changes={state.changes}
                  busy={state.turn.phase !== "idle"}
                  onUndo={commands.undo}
                />
              )}
              {view === "usage" && <UsageView usage={state.usage} price={info?.price ?? null} />}
              {view === "settings" && <SettingsView onSaved={() => commands.reload()} onReopened={() => commands.reload()} />}
            </ErrorBoundary>
          </div>
        )}
      </main>
    </div>
  );
}
