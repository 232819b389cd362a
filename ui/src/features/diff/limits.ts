// How much of a diff gets syntax colours, and from what size only its lines in view are drawn.

/** Diffs longer than this many lines are shown without syntax colours (they must show fast). */
export const HIGHLIGHT_LIMIT = 2000;

/** Diffs longer than this many lines are virtualised: only the lines in view (and a few either
 * side) are in the DOM, one fixed-height row each, unwrapped. */
export const VIRTUAL_FROM = 400;

/** A virtualised diff line's height in pixels (`.diff-virtual .diff-line` in approvals.css). */
export const LINE_HEIGHT = 18;
