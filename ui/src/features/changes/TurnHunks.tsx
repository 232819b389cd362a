// One turn's changes as hunks to review (DESIGN §10.1): each hunk with the call (and command)
// that made it and its state, keep / reject / undo reject per hunk, per file and for the whole
// turn, the keys k (keep), r (reject) and j (next), and the turn's progress. The engine decides
// what a reject may write (a hunk whose lines changed since is a conflict, and nothing is
// written); this view asks and shows the answer. A turn of thousands of hunks shows its first
// page at once and the rest as the view nears its end (or `j` walks past it).
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { reviewDecide, reviewTurn } from "../../api/engine";
import { isErrorInfo } from "../../api/errors";
import type { Hunk, ReviewDecision, TurnReview } from "../../api/types";
import { DiffLines } from "../diff/DiffLines";

/** Hunks rendered at first, and added each time the view nears the last one shown. */
const PAGE = 200;

interface Props {
  turnId: string;
  /** A turn is running: decisions wait until it has ended. */
  busy: boolean;
  /** Changes when the turn's changes do (or a turn starts or ends): the hunks are read again. */
  version: string;
}

/** A hunk's lines as a small diff: what the turn removed, then what it wrote. */
function hunkDiff(h: Hunk): string {
  const lines = (text: string, sign: string) =>
    text === "" ? "" : text.replace(/\n$/, "").split("\n").map((l) => `${sign}${l}\n`).join("");
  const head = `@@ -${h.baseRange.start},${h.baseRange.lines} +${h.range.start},${h.range.lines} @@\n`;
  if (h.kind === "binary") return `${head} (binary file changed)\n`;
  if (h.kind === "mode") return `${head} (permissions changed)\n`;
  return head + lines(h.oldText, "-") + lines(h.newText, "+");
}

function where(h: Hunk): string {
  if (h.kind === "created") return "created";
  if (h.kind === "deleted") return "deleted";
  if (h.range.lines === 0) return `removed before line ${h.range.start}`;
  if (h.range.lines === 1) return `line ${h.range.start}`;
  return `lines ${h.range.start}–${h.range.start + h.range.lines - 1}`;
}

export function TurnHunks({ turnId, busy, version }: Props) {
  const [review, setReview] = useState<TurnReview | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [selected, setSelected] = useState(0);
  const [working, setWorking] = useState(false);
  const [limit, setLimit] = useState(PAGE);
  const refs = useRef<(HTMLDivElement | null)[]>([]);
  const focusNext = useRef<number | null>(null);
  const sentinel = useRef<HTMLDivElement | null>(null);

  useEffect(() => {
    let live = true;
    reviewTurn(turnId).then(
      (r) => live && setReview(r),
      (e: unknown) => live && setError(isErrorInfo(e) ? e.message : String(e)),
    );
    return () => {
      live = false;
    };
  }, [turnId, version]);

  const decide = useCallback(
    (decision: ReviewDecision, ids: string[]) => {
      if (ids.length === 0 || busy || working) return;
      setWorking(true);
      setError(null);
      reviewDecide(decision, ids).then(
        (r) => {
          setReview(r);
          setWorking(false);
        },
        (e: unknown) => {
          setError(isErrorInfo(e) ? e.message : String(e));
          setWorking(false);
        },
      );
    },
    [busy, working],
  );

  const hunks = useMemo(() => review?.hunks ?? [], [review]);
  const files = useMemo(() => {
    const out = new Map<string, Hunk[]>();
    for (const h of hunks.slice(0, limit)) {
      const list = out.get(h.path);
      if (list) list.push(h);
      else out.set(h.path, [h]);
    }
    return [...out.entries()];
  }, [hunks, limit]);
  const more = hunks.length > limit;

  // The next page once the end of the shown hunks scrolls into view.
  useEffect(() => {
    const end = sentinel.current;
    if (!more || !end || typeof IntersectionObserver === "undefined") return;
    const watch = new IntersectionObserver((seen) => {
      if (seen.some((e) => e.isIntersecting)) setLimit((l) => l + PAGE);
    });
    watch.observe(end);
    return () => watch.disconnect();
  }, [more, limit]);

  // A hunk selected by key past the shown ones is focused once rendered.
  useEffect(() => {
    if (focusNext.current !== null && focusNext.current < limit) {
      refs.current[focusNext.current]?.focus();
      focusNext.current = null;
    }
  });

  const select = (i: number) => {
    const next = Math.max(0, Math.min(i, hunks.length - 1));
    setSelected(next);
    if (next >= limit) {
      focusNext.current = next;
      setLimit(next + PAGE);
    } else {
      refs.current[next]?.focus();
    }
  };

  const onKey = (e: React.KeyboardEvent) => {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const h = hunks[selected];
    if (!h) return;
    if (e.key === "j") select(selected + 1);
    else if ((e.key === "k" || e.key === "r") && h.state !== "rejected") {
      decide(e.key === "k" ? "keep" : "reject", [h.id]);
      select(selected + 1);
    } else return;
    e.preventDefault();
  };

  if (!review) return error ? <p className="review-error" data-testid="review-error">{error}</p> : null;
  if (hunks.length === 0) return null;
  const open = (list: Hunk[]) => list.filter((h) => h.state === "pending" || h.state === "conflict").map((h) => h.id);
  const disabled = busy || working;
  let index = 0;
  return (
    <div className="review" data-testid="turn-review" data-turn-id={turnId} onKeyDown={onKey}>
      <div className="review-head">
        <span data-testid="review-progress" data-decided={review.decided} data-total={hunks.length}>
          {review.decided} of {hunks.length} hunks reviewed
        </span>
        <button type="button" className="button" data-testid="review-keep-turn" disabled={disabled} onClick={() => decide("keep", open(hunks))}>
          Keep all
        </button>
        <button type="button" className="button" data-testid="review-reject-turn" disabled={disabled} onClick={() => decide("reject", open(hunks))}>
          Reject all
        </button>
        <span className="review-keys">k keep · r reject · j next</span>
      </div>
      {error && (
        <p className="review-error" data-testid="review-error" aria-live="polite">
          {error}
        </p>
      )}
      {files.map(([path, list]) => (
        <div key={path} className="review-file">
          <div className="changes-file-head">
            <span className="path">{path}</span>
            <button type="button" className="button" data-testid="hunk-keep-file" data-path={path} disabled={disabled} onClick={() => decide("keep", open(list))}>
              Keep file
            </button>
            <button type="button" className="button" data-testid="hunk-reject-file" data-path={path} disabled={disabled} onClick={() => decide("reject", open(list))}>
              Reject file
            </button>
          </div>
          {list.map((h) => {
            const i = index++;
            return (
              <div
                key={h.id}
                ref={(el) => {
                  refs.current[i] = el;
                }}
                className={`hunk ${h.state}${i === selected ? " selected" : ""}`}
                data-testid="hunk"
                data-hunk-id={h.id}
                data-state={h.state}
                data-path={h.path}
                tabIndex={0}
                onFocus={() => setSelected(i)}
              >
                <div className="hunk-head">
                  <span className="hunk-where">{where(h)}</span>
                  <span className="hunk-call" title={h.call.callId}>
                    {h.call.tool}
                    {h.call.command !== null && <code> {h.call.command}</code>}
                  </span>
                  <span className="hunk-state">{h.state === "conflict" ? "changed since" : h.state}</span>
                  {h.state === "rejected" ? (
                    <button type="button" className="button" data-testid="hunk-unreject" disabled={disabled} onClick={() => decide("unreject", [h.id])}>
                      Undo reject
                    </button>
                  ) : (
                    <>
                      <button type="button" className="button" data-testid="hunk-keep" disabled={disabled || h.state === "kept"} onClick={() => decide("keep", [h.id])}>
                        Keep
                      </button>
                      <button type="button" className="button" data-testid="hunk-reject" disabled={disabled} onClick={() => decide("reject", [h.id])}>
                        Reject
                      </button>
                    </>
                  )}
                </div>
                <DiffLines diff={hunkDiff(h)} path={h.path} />
              </div>
            );
          })}
        </div>
      ))}
      {more && (
        <div ref={sentinel} className="review-more">
          <button type="button" className="button" data-testid="review-more" onClick={() => setLimit((l) => l + PAGE)}>
            Show more ({hunks.length - limit} more hunks)
          </button>
        </div>
      )}
    </div>
  );
}
