// A unified diff as the rows of a side-by-side view: context on both sides, a run of removed
// lines paired with the run of added lines that follows it (the longer side leaves blanks), hunk
// headers across both. File headers (`---`/`+++`) are dropped: the view names the file.
export interface Cell {
  line: number;
  text: string;
}

export type Row =
  | { kind: "hunk"; text: string }
  | { kind: "pair"; left: Cell | null; right: Cell | null; changed: boolean };

const HUNK = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/;

export function sideBySide(diff: string): Row[] {
  const rows: Row[] = [];
  let oldLine = 0;
  let newLine = 0;
  let removed: Cell[] = [];
  let added: Cell[] = [];
  const flush = () => {
    for (let i = 0; i < Math.max(removed.length, added.length); i++) {
      rows.push({ kind: "pair", left: removed[i] ?? null, right: added[i] ?? null, changed: true });
    }
    removed = [];
    added = [];
  };
  for (const line of diff.split("\n")) {
    if (line.startsWith("--- ") || line.startsWith("+++ ") || line.startsWith("diff ") || line.startsWith("\\")) continue;
    const hunk = HUNK.exec(line);
    if (hunk) {
      flush();
      oldLine = Number(hunk[1]);
      newLine = Number(hunk[2]);
      rows.push({ kind: "hunk", text: line });
    } else if (line.startsWith("-")) {
      removed.push({ line: oldLine++, text: line.slice(1) });
    } else if (line.startsWith("+")) {
      added.push({ line: newLine++, text: line.slice(1) });
    } else if (line.startsWith(" ")) {
      flush();
      const text = line.slice(1);
      rows.push({ kind: "pair", left: { line: oldLine++, text }, right: { line: newLine++, text }, changed: false });
    }
  }
  flush();
  return rows;
}
