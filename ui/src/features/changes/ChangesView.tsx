// The Changes view: every file change the agent's file tools and captured bash commands made, per
// turn (newest first), as coloured diffs, with undo for a whole turn or one file. The engine
// decides what an undo may touch (a file changed again since is left alone and named); this view
// only asks. Each turn's hunks can be kept or rejected one by one (TurnHunks).
import { useState } from "react";
import type { FileChange } from "../../store/state";
import { DiffLines } from "../diff/DiffLines";
import { DiffSideBySide } from "../diff/DiffSideBySide";
import { TurnHunks } from "./TurnHunks";

type Layout = "unified" | "split";

interface Props {
  changes: FileChange[];
  /** A turn is running: the engine undoes only between turns. */
  busy: boolean;
  onUndo: (turnId: string, paths?: string[]) => void;
}

interface Turn {
  turnId: string;
  files: { path: string; diffs: string[] }[];
}

/** The changes grouped by turn, newest turn first, each file once with its diffs in order. */
function byTurn(changes: FileChange[]): Turn[] {
  const turns: Turn[] = [];
  for (const change of changes) {
    let turn = turns.find((t) => t.turnId === change.turnId);
    if (!turn) {
      turn = { turnId: change.turnId, files: [] };
      turns.push(turn);
    }
    const file = turn.files.find((f) => f.path === change.path);
    if (file) file.diffs.push(change.diff);
    else turn.files.push({ path: change.path, diffs: [change.diff] });
  }
  return turns.reverse();
}

export function ChangesView({ changes, busy, onUndo }: Props) {
  const turns = byTurn(changes);
  const [layout, setLayout] = useState<Layout>("unified");
  const Diff = layout === "unified" ? DiffLines : DiffSideBySide;
  return (
    <section className="changes" aria-label="Changes">
      <header className="view-header">
        <h1>Changes</h1>
        <p className="view-note">
          What the file tools and sandboxed <code>bash</code> commands changed, per turn. Files a command wrote directly (escalated, in
          bypass, in the background, or with no overlay to capture them) are not listed and cannot be undone.
        </p>
        <div className="segmented" role="group" aria-label="Diff layout">
          {(["unified", "split"] as const).map((l) => (
            <button
              key={l}
              type="button"
              className={layout === l ? "button active" : "button"}
              aria-pressed={layout === l}
              data-testid={`diff-layout-${l}`}
              onClick={() => setLayout(l)}
            >
              {l === "unified" ? "Unified" : "Side by side"}
            </button>
          ))}
        </div>
      </header>
      {turns.length === 0 && (
        <p className="empty">No file changes to show: none yet in this session, or every one was undone.</p>
      )}
      {turns.map((turn, i) => (
        <article key={turn.turnId} className="changes-turn" data-testid="changes-turn" data-turn-id={turn.turnId}>
          <div className="changes-turn-head">
            <h2>
              Turn {turns.length - i} · {turn.files.length === 1 ? "1 file" : `${turn.files.length} files`}
            </h2>
            <button type="button" className="button" data-testid="undo-turn" disabled={busy} onClick={() => onUndo(turn.turnId)}>
              Undo turn
            </button>
          </div>
          <TurnHunks turnId={turn.turnId} busy={busy} version={`${busy}/${turn.files.map((f) => f.diffs.length).join(",")}`} />
          {turn.files.map((file) => (
            <div key={file.path} className="changes-file">
              <div className="changes-file-head">
                <span className="path">{file.path}</span>
                <button
                  type="button"
                  className="button"
                  data-testid="undo-file"
                  data-path={file.path}
                  disabled={busy}
                  onClick={() => onUndo(turn.turnId, [file.path])}
                >
                  Undo file
                </button>
              </div>
              <div data-testid="diff-view" data-path={file.path}>
                {file.diffs.map((diff, j) => (
                  <Diff key={j} diff={diff} path={file.path} />
                ))}
              </div>
            </div>
          ))}
        </article>
      ))}
    </section>
  );
}
