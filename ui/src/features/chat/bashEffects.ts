// How a finished bash command ran and what it changed, read from its result's typed details (the
// generated `ToolDetails`) in one exhaustive switch: a new kind of details is a compile error here,
// never a card that silently shows nothing. Each landed file is paired with its own part of the
// result's diff.
import type { HostUse, LandedChange, SandboxKind, ShellEffects, ToolResult } from "../../api/types";
import { splitDiff } from "../../store/snapshot";

/** What a bash card shows of its command's run. */
export interface BashRun {
  sandbox: SandboxKind;
  escalated: boolean;
  /** What of the home folder it saw, when its sandbox hid it. */
  sandboxHome: string | null;
  /** Whether undo can restore what it changed (a background process's changes never can). */
  checkpointed: boolean;
  /** The hosts it reached or was refused. */
  hosts: HostUse[];
  /** What it changed in the workspace; null when that was not followed. */
  effects: ShellEffects | null;
}

/** The run a bash result reports; null for a result of another tool, or with no details. */
export function bashRunOf(result: ToolResult): BashRun | null {
  const details = result.details;
  if (details === null) return null;
  switch (details.type) {
    case "shell":
      return {
        sandbox: details.sandbox,
        escalated: details.escalated,
        sandboxHome: details.sandboxHome,
        // A result with effects says in its changes whether undo can restore them.
        checkpointed: details.effects !== null || details.checkpointed,
        hosts: details.hosts,
        effects: details.effects,
      };
    case "background":
      return {
        sandbox: details.sandbox,
        escalated: details.escalated,
        sandboxHome: details.sandboxHome,
        checkpointed: false,
        hosts: [],
        effects: null,
      };
    case "files":
    case "read":
    case "binary":
    case "listing":
    case "glob":
    case "grep":
    case "process":
    case "processes":
    case "plan":
    case "agents":
    case "skill":
    case "time":
    case "usage":
      return null;
    default: {
      const unknown: never = details;
      return unknown;
    }
  }
}

/** A landed file with its part of the diff (null when the diff has none for it, e.g. binary). */
export interface ChangedFile extends Partial<LandedChange> {
  path: string;
  diff: string | null;
}

/**
 * The landed files in the order the engine listed them, each with its part of `diff`; a part of
 * the diff whose file the list does not name is kept too, so nothing the command did is hidden.
 */
export function changedFiles(changes: LandedChange[], diff: string | null): ChangedFile[] {
  const parts = diff ? splitDiff(diff) : [];
  const files: ChangedFile[] = changes.map((c) => ({ ...c, diff: null }));
  for (const part of parts) {
    const file = files.find((f) => f.path === part.path);
    if (!file) files.push({ path: part.path, diff: part.diff });
    else file.diff = file.diff === null ? part.diff : file.diff + part.diff;
  }
  return files;
}
