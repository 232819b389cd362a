// The Chat view: session header, errors, the transcript, the composer and the usage status bar.
import type { Session } from "../../store/useSession";
import { ContextMeter } from "../usage/ContextMeter";
import { TokenUsageReadout } from "../usage/TokenUsageReadout";
import { Composer } from "./Composer";
import { ErrorBanner } from "./ErrorBanner";
import { MessageList } from "./MessageList";
import { SessionHeader } from "./SessionHeader";

export function ChatView({ session }: { session: Session }) {
  const { state, info, connection, commands } = session;
  const busy = state.turn.phase !== "idle";
  return (
    <section className="chat" aria-label="Chat">
      <SessionHeader info={info} connection={connection} busy={busy} />
      <ErrorBanner errors={state.errors} onDismiss={commands.dismissError} />
      <MessageList
        items={state.items}
        approvals={state.approvals}
        onAnswer={commands.answer}
        workspace={info?.workspace ?? null}
      />
      <Composer busy={busy} onSend={commands.send} onStop={commands.stop} />
      <footer className="statusbar">
        <TokenUsageReadout usage={state.usage} />
        <ContextMeter usage={state.usage} />
      </footer>
    </section>
  );
}
