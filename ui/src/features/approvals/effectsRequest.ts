// Held changes: what a sandboxed command changed waits for the user before it lands
// (`subject.type === "changes"`, the held files' diff as the preview). The answer keeps or
// discards those changes; there is nothing to edit and nothing to remember for later.

/** The command on one line, cut to `max` characters, for a title. */
export function shortCommand(command: string, max = 60): string {
  const oneLine = command.replace(/\s+/g, " ").trim();
  return oneLine.length > max ? `${oneLine.slice(0, max - 1)}…` : oneLine;
}
