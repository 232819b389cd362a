// Chat steps the GUI tests share: send a message, wait for what it should bring while failing
// at once on an error banner, and read the transcript.
import { fatal, waitFor } from "./webdriver.mjs";

/** Types `text` into the chat input and sends it. */
export async function send(session, text) {
  const input = await session.find("[data-testid=chat-input]");
  await input.click();
  await input.type(text);
  await (await session.find("[data-testid=send-button]")).click();
  return input;
}

/** Waits for `probe` to answer something truthy; an error banner fails at once with its text. */
export function waitUnlessError(session, probe, what, timeoutMs = 30000) {
  return waitFor(
    async () => {
      const alert = await session.find("[role=alert]");
      if (alert) throw fatal(`error banner: ${await alert.text()}`);
      return probe();
    },
    what,
    timeoutMs,
  );
}

/** The texts of the transcript's messages of `role` (user or assistant). */
export async function messageTexts(session, role) {
  return Promise.all((await session.findAll(`[data-testid=message][data-role=${role}]`)).map((e) => e.text()));
}

/** Sends `text` and waits until an assistant message contains `expected`; answers their texts. */
export async function sendAndWait(session, text, expected, timeoutMs = 45000) {
  await send(session, text);
  return waitUnlessError(
    session,
    async () => {
      const texts = await messageTexts(session, "assistant");
      return texts.some((t) => t.includes(expected)) ? texts : null;
    },
    `an assistant message containing "${expected}"`,
    timeoutMs,
  );
}
