// A held change: what a sandboxed command changed waits for the user before it lands (tool
// `effects`, arguments `{command, files}`, the held files' diff as the preview). The answer keeps
// or discards those changes; there is nothing to edit and nothing to remember for later.
import type { ApprovalRequest } from "../../api/types";

/** The tool name the engine gives held changes. */
export const EFFECTS_TOOL = "effects";

export interface EffectsRequest {
  /** The command line whose changes are held; empty when the request does not say. */
  command: string;
  /** The held files, workspace-relative. */
  files: string[];
}

/**
 * What `request` holds, or null when it is not a held change. The tool name alone decides: a held
 * change whose arguments cannot be read is still one, never an ordinary call to edit and approve.
 */
export function effectsRequestOf(request: ApprovalRequest): EffectsRequest | null {
  if (request.tool !== EFFECTS_TOOL) return null;
  let value: unknown;
  try {
    value = JSON.parse(request.arguments);
  } catch {
    return { command: "", files: [] };
  }
  if (typeof value !== "object" || value === null) return { command: "", files: [] };
  const { command, files } = value as Record<string, unknown>;
  return {
    command: typeof command === "string" ? command : "",
    files: Array.isArray(files) ? files.filter((f): f is string => typeof f === "string") : [],
  };
}

/** The command on one line, cut to `max` characters, for a title. */
export function shortCommand(command: string, max = 60): string {
  const oneLine = command.replace(/\s+/g, " ").trim();
  return oneLine.length > max ? `${oneLine.slice(0, max - 1)}…` : oneLine;
}
