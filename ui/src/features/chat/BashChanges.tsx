// On a finished bash card: what its command changed in the workspace (the `effects` of its typed
// details). Captured changes are one line per file (path, kind, +added −removed) that opens on the
// file's coloured diff; what landed without a diff (build output, git internals) is summarised,
// what did not land is named with why. When the changes could not be captured, it says why, lists
// what a scan found, and that undo cannot restore them.
import { useState } from "react";
import type { ToolResult } from "../../api/types";
import { DiffLines } from "../diff/DiffLines";
import { formatBytes } from "../usage/format";
import { type ChangedFile, bashRunOf, changedFiles } from "./bashEffects";

/** Diffs up to this many lines in all are shown open; longer ones wait for a click. */
const OPEN_LINES = 60;

const lineCount = (diff: string | null) => (diff ? diff.split("\n").length : 0);

function FileDiff({ file, open: initiallyOpen }: { file: ChangedFile; open: boolean }) {
  const [open, setOpen] = useState(initiallyOpen);
  return (
    <details
      className="bash-change"
      data-testid="bash-change"
      data-path={file.path}
      data-kind={file.kind}
      open={open}
      onToggle={(e) => setOpen(e.currentTarget.open)}
    >
      <summary title={file.bytes !== undefined ? `${formatBytes(file.bytes)} now` : undefined}>
        <span className="path">{file.path}</span>
        {file.kind && <span className={`bash-change-kind ${file.kind}`}>{file.kind}</span>}
        {file.added !== undefined && <span className="bash-change-added">+{file.added}</span>}
        {file.removed !== undefined && <span className="bash-change-removed">−{file.removed}</span>}
      </summary>
      {/* In the DOM while closed too, so the file's diff can always be found by its path. */}
      <div data-testid="diff-view" data-path={file.path}>
        {file.diff ? <DiffLines diff={file.diff} path={file.path} /> : <p className="muted">No line diff for this file.</p>}
      </div>
    </details>
  );
}

export function BashChanges({ result }: { result: ToolResult }) {
  const effects = bashRunOf(result)?.effects ?? null;
  if (!effects) return null;
  const ignored = effects.ignored && (effects.ignored.files > 0 || effects.ignored.bytes > 0) ? effects.ignored : null;
  const files = changedFiles(effects.changes, result.diff);
  const open = files.reduce((n, f) => n + lineCount(f.diff), 0) <= OPEN_LINES;
  // The element is there for every result with effects, so its `data-captured` can be read even
  // when nothing changed; it is empty then, and the stylesheet hides it.
  return (
    <div className="bash-changes" data-testid="bash-changes" data-captured={effects.captured ? "true" : "false"}>
      {!effects.captured && (
        <div className="bash-changes-line warn" data-testid="bash-changes-uncaptured">
          Changes not captured{effects.reason ? ` — ${effects.reason}` : ": the command wrote to the workspace directly"}{" "}
          <span className="sandbox-badge" title="Undo cannot restore what this command changed">
            not undoable
          </span>
          {effects.listed.length > 0 ? (
            <ul className="bash-changes-listed" data-testid="bash-changes-listed">
              {effects.listed.map((line, i) => (
                <li key={`${i}-${line}`}>{line}</li>
              ))}
            </ul>
          ) : (
            <span className="muted"> · no changed files found</span>
          )}
        </div>
      )}
      {effects.captured && !effects.undoable && files.length > 0 && (
        <div className="bash-changes-line warn" data-testid="bash-changes-not-undoable">
          These changes landed without a checkpoint <span className="sandbox-badge">not undoable</span>
        </div>
      )}
      {files.map((file) => (
        <FileDiff key={file.path} file={file} open={open} />
      ))}
      {ignored && (
        <div className="bash-changes-line" data-testid="bash-changes-ignored">
          build output: {ignored.files} file{ignored.files === 1 ? "" : "s"}, {formatBytes(ignored.bytes)}, not checkpointed
        </div>
      )}
      {effects.git.map((line, i) => (
        <div key={`git-${i}`} className="bash-changes-line" data-testid="bash-changes-git">
          git: {line}
        </div>
      ))}
      {effects.discarded.length > 0 && (
        <div className="bash-changes-line" data-testid="bash-changes-discarded">
          discarded{effects.discardedBecause ? ` (${effects.discardedBecause})` : ""}: {effects.discarded.join(", ")}
        </div>
      )}
      {effects.refused.map((r, i) => (
        <div key={`refused-${i}`} className="bash-changes-line refused" data-testid="bash-changes-refused" data-path={r.path}>
          not landed: {r.path}
          {r.why && ` — ${r.why}`}
        </div>
      ))}
    </div>
  );
}
