// Chat steps the GUI tests share: type a message, send it, and wait for the model's answer.
import { fatal, waitFor } from "./webdriver.mjs";

/**
 * Sends `text` from the chat input and waits until an assistant message contains `expected`;
 * an error banner fails at once with its text.
 */
export async function sendAndWait(session, text, expected, timeoutMs = 45000) {
  const input = await session.find("[data-testid=chat-input]");
  await input.click();
  await input.type(text);
  await (await session.find("[data-testid=send-button]")).click();
  await waitFor(
    async () => {
      const alert = await session.find("[role=alert]");
      if (alert) throw fatal(`error banner: ${await alert.text()}`);
      const messages = await session.findAll("[data-testid=message][data-role=assistant]");
      const texts = await Promise.all(messages.map((e) => e.text()));
      return texts.some((t) => t.includes(expected));
    },
    `the answer "${expected}"`,
    timeoutMs,
  );
}
