// The Chat view: session header, the transcript, the background processes, the plan, the composer
// and the usage status bar.
import { runningCount } from "../../store/processes";
import type { Session } from "../../store/useSession";
import { ContextMeter } from "../usage/ContextMeter";
import { TokenUsageReadout } from "../usage/TokenUsageReadout";
import { Composer } from "./Composer";
import { MessageList } from "./MessageList";
import { PlanPanel } from "./PlanPanel";
import { ProcessesPanel } from "./ProcessesPanel";
import { SessionHeader } from "./SessionHeader";

export function ChatView({ session, onOpenSession }: { session: Session; onOpenSession?: (id: string) => void }) {
  const { state, info, connection, commands } = session;
  const busy = state.turn.phase !== "idle";
  return (
    <section className="chat" aria-label="Chat">
      <SessionHeader
        info={info}
        runMode={state.runMode}
        connection={connection}
        busy={busy}
        reconnecting={state.reconnecting}
        runningProcesses={runningCount(state.processes)}
        onMode={commands.setMode}
      />
      <MessageList
        items={state.items}
        approvals={state.approvals}
        answering={state.answering}
        onAnswer={commands.answer}
        workspace={info?.workspace ?? null}
        agents={state.agents}
        onOpenSession={onOpenSession}
      />
      <ProcessesPanel processes={state.processes} onRefresh={commands.refreshProcesses} onStop={commands.stopProcess} />
      <PlanPanel plan={state.plan} />
      <Composer busy={busy} onSend={commands.send} onStop={commands.stop} commands={session.slashCommands} />
      <footer className="statusbar">
        <TokenUsageReadout usage={state.usage} />
        <ContextMeter usage={state.usage} />
      </footer>
    </section>
  );
}
