// What a finished bash command changed in the workspace (`data.effects` of its result), read
// defensively: the data is JSON from the engine, and a result without it (an older session) has
// nothing to show. Each landed file is paired with its own part of the result's diff.
import type { ToolResult } from "../../api/types";
import { splitDiff } from "../../store/snapshot";

/** A file the command's run changed and that landed, checkpointed. */
export interface EffectChange {
  path: string;
  /** `created`, `modified` or `deleted`. */
  kind: string;
  added: number;
  removed: number;
  bytes: number;
}

export interface BashEffects {
  /** The command ran on an overlay and its changes were captured (so they can be diffed). */
  captured: boolean;
  /** Why they were not captured. */
  reason: string | null;
  undoable: boolean;
  changes: EffectChange[];
  /** Not captured: what a scan before and after found, e.g. `src/a.rs (created)`. */
  listed: string[];
  /** Ignored paths (build output) written through without checkpoints. */
  ignored: { files: number; bytes: number } | null;
  /** What landed in git's internals, e.g. `1 commit: abc1234 message`. */
  git: string[];
  /** Files thrown away, never landed (the user denied them, or nobody could be asked). */
  discarded: string[];
  /** Why they were discarded, when the engine says. */
  discardedBecause: string | null;
  /** Files that did not land, and why. */
  refused: { path: string; why: string }[];
}

/** A landed file with its part of the diff (null when the diff has none for it, e.g. binary). */
export interface ChangedFile extends Partial<EffectChange> {
  path: string;
  diff: string | null;
}

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => v !== null && typeof v === "object" && !Array.isArray(v);
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((s): s is string => typeof s === "string") : []);
const count = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);

function change(v: unknown): EffectChange | null {
  if (!isObject(v) || typeof v.path !== "string" || typeof v.kind !== "string") return null;
  return { path: v.path, kind: v.kind, added: count(v.added), removed: count(v.removed), bytes: count(v.bytes) };
}

/** The effects in a bash result's data; null when it has none (or none readable). */
export function effectsOf(result: ToolResult): BashEffects | null {
  if (!isObject(result.data)) return null;
  const e = result.data.effects;
  if (!isObject(e) || typeof e.captured !== "boolean") return null;
  const changes = Array.isArray(e.changes) ? e.changes.map(change).filter((c): c is EffectChange => c !== null) : [];
  const ignored = isObject(e.ignored) ? { files: count(e.ignored.files), bytes: count(e.ignored.bytes) } : null;
  const refused = (Array.isArray(e.refused) ? e.refused.filter(isObject) : []).flatMap((r) =>
    typeof r.path === "string" ? [{ path: r.path, why: typeof r.why === "string" ? r.why : "" }] : [],
  );
  return {
    captured: e.captured,
    reason: typeof e.reason === "string" ? e.reason : null,
    // Unknown means no: claiming an undo that cannot happen is the worse mistake.
    undoable: e.undoable === true,
    changes,
    listed: strings(e.listed),
    ignored: ignored && (ignored.files > 0 || ignored.bytes > 0) ? ignored : null,
    git: strings(e.git),
    discarded: strings(e.discarded),
    discardedBecause: typeof e.discardedBecause === "string" ? e.discardedBecause : null,
    refused,
  };
}

/**
 * The landed files in the order the engine listed them, each with its part of `diff`; a part of
 * the diff whose file the list does not name is kept too, so nothing the command did is hidden.
 */
export function changedFiles(changes: EffectChange[], diff: string | null): ChangedFile[] {
  const parts = diff ? splitDiff(diff) : [];
  const files: ChangedFile[] = changes.map((c) => ({ ...c, diff: null }));
  for (const part of parts) {
    const file = files.find((f) => f.path === part.path);
    if (!file) files.push({ path: part.path, diff: part.diff });
    else file.diff = file.diff === null ? part.diff : file.diff + part.diff;
  }
  return files;
}
