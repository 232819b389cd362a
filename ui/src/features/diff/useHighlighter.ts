// The diff highlighter (highlight.js grammars through lowlight), loaded on first use rather than
// at launch; `null` until it is there (diffs show uncoloured by syntax meanwhile, never late).
import { useEffect, useState } from "react";

type Highlighter = typeof import("./highlight");

let loaded: Highlighter | null = null;
let loading: Promise<Highlighter> | null = null;

export function useHighlighter(wanted: boolean): Highlighter | null {
  const [mod, setMod] = useState<Highlighter | null>(loaded);
  useEffect(() => {
    if (!wanted || mod) return;
    let live = true;
    loading ??= import("./highlight").then((m) => (loaded = m));
    loading.then((m) => live && setMod(m)).catch(() => {
      // No syntax colours: the diff stays readable without them.
    });
    return () => {
      live = false;
    };
  }, [wanted, mod]);
  return mod;
}
