// The window: navigation rail, errors, and the active view, all fed by the one session store.
// With no provider configured (first run) it opens on Settings; when the shell opens another
// session (Sessions, or Settings saved) the store loads it from scratch.
import { Suspense, useEffect, useRef, useState } from "react";
import { sessionOpen, settingsGet } from "./api/engine";
import { ChatView } from "./features/chat/ChatView";
import { SessionRail } from "./features/desk/SessionRail";
import { useDesk } from "./features/desk/useDesk";
import { ErrorBanner } from "./features/errors/ErrorBanner";
import { ErrorBoundary } from "./features/errors/ErrorBoundary";
import { NavBar } from "./features/nav/NavBar";
import { type LazyView, lazyView } from "./features/nav/lazyView";
import type { ViewId } from "./features/nav/views";
import { useSession } from "./store/useSession";

// Every view but Chat is its own chunk: the first screen loads and parses only Chat's code, and
// another view's is fetched when it is first opened.
const ApprovalsView = lazyView("ApprovalsView", () => import("./features/approvals/ApprovalsView").then((m) => m.ApprovalsView));
const AuditView = lazyView("AuditView", () => import("./features/audit/AuditView").then((m) => m.AuditView));
const ChangesView = lazyView("ChangesView", () => import("./features/changes/ChangesView").then((m) => m.ChangesView));
const SessionsView = lazyView("SessionsView", () => import("./features/sessions/SessionsView").then((m) => m.SessionsView));
const SettingsView = lazyView("SettingsView", () => import("./features/settings/SettingsView").then((m) => m.SettingsView));
const UsageView = lazyView("UsageView", () => import("./features/usage/UsageView").then((m) => m.UsageView));
const CHUNKED: Partial<Record<ViewId, LazyView<never>>> = {
  approvals: ApprovalsView,
  audit: AuditView,
  changes: ChangesView,
  sessions: SessionsView,
  settings: SettingsView,
  usage: UsageView,
};

export function App() {
  const session = useSession();
  const { state, info, commands } = session;
  const [view, setShown] = useState<ViewId>("chat");
  // The last view asked for: a chunk that comes after a later choice does not switch to its view.
  const wanted = useRef<ViewId>("chat");
  /** Shows `next` once its chunk has come (at once if it has, or for Chat). */
  const setView = (next: ViewId) => {
    wanted.current = next;
    const chunk = CHUNKED[next];
    if (!chunk) return setShown(next);
    const show = () => wanted.current === next && setShown(next);
    // A chunk that fails to come is shown anyway: the view's boundary reports it.
    chunk.preload().then(show, show);
  };
  // Every session's state and questions, read again when one of them moves.
  const desk = useDesk(`${state.turn.phase}|${state.approvals.length}|${session.elsewhere}|${info?.sessionId}`);
  // The shown session's questions as its events bring them, and every other session's as stored.
  const inbox = [...state.approvals, ...desk.inbox.filter((r) => r.sessionId !== info?.sessionId)].sort(
    (a, b) => a.createdAt - b.createdAt,
  );
  const show = (id: string) => {
    if (id === info?.sessionId) return setView("chat");
    sessionOpen(id).then(
      () => {
        commands.reload();
        setView("chat");
      },
      () => desk.refresh(),
    );
  };

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
      <NavBar active={view} onSelect={setView} badges={{ approvals: inbox.length }}>
        <SessionRail
          sessions={desk.sessions}
          currentId={info?.sessionId ?? null}
          inboxCount={inbox.length}
          onOpen={show}
          onInbox={() => setView("approvals")}
        />
      </NavBar>
      <main className="main">
        <ErrorBanner errors={state.errors} onDismiss={commands.dismissError} />
        {/* Chat stays mounted (parked: laid out, invisible, inert) so a draft, the scroll position
            and the rendered rows survive a look at another view. */}
        <div className={view === "chat" ? "view" : "view parked"} inert={view !== "chat"} data-testid="chat-view">
          <ErrorBoundary>
            <ChatView session={session} onOpenSession={show} />
          </ErrorBoundary>
        </div>
        {view !== "chat" && (
          <div className="view">
            <ErrorBoundary key={view}>
              <Suspense fallback={<p className="muted">Loading…</p>}>
              {view === "sessions" && (
                <SessionsView
                  currentId={info?.sessionId ?? null}
                  onOpened={() => {
                    commands.reload();
                    setView("chat");
                  }}
                  onShowCurrent={() => setView("chat")}
                  onChanged={(closed) => {
                    desk.refresh();
                    if (closed) commands.reload();
                  }}
                />
              )}
              {view === "approvals" && (
                <ApprovalsView
                  approvals={inbox}
                  sessions={desk.sessions}
                  currentId={info?.sessionId ?? null}
                  answering={state.answering}
                  onAnswer={(request, decision, details) => {
                    commands.answer(request, decision, details);
                    desk.refresh();
                  }}
                />
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
              </Suspense>
            </ErrorBoundary>
          </div>
        )}
      </main>
    </div>
  );
}
