// How much of a diff gets syntax colours.

/** Diffs longer than this many lines are shown without syntax colours (they must show fast). */
export const HIGHLIGHT_LIMIT = 2000;
