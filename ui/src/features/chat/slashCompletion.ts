// Completion of slash commands in the composer: while the draft is `/` and part of a name (no
// space yet), the commands whose names start with it, built-ins first as the engine lists them.
import type { SlashCommandInfo } from "../../api/types";

/** The commands `draft` may complete to; empty when the draft is not a command being typed. */
export function suggestions(draft: string, commands: SlashCommandInfo[]): SlashCommandInfo[] {
  const match = /^\/([a-z0-9-]*)$/.exec(draft);
  if (!match) return [];
  const typed = match[1] ?? "";
  return commands.filter((c) => c.name.startsWith(typed) && c.name !== typed);
}

/** The draft once `command` is chosen: its name, and a space when it takes an argument. */
export function completed(command: SlashCommandInfo): string {
  return command.hint ? `/${command.name} ` : `/${command.name}`;
}
