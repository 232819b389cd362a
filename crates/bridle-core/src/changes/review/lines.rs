//! The line work of a review, on bytes: a turn's hunks from its versions of a file (each hunk
//! with the call that made it), and a file's content with some hunks flipped, placed through the
//! edits made since the turn.
//!
//! Rules: hunks are the runs of changed lines between the content before the turn and what the
//! turn left, with no context, so two edits a line apart are two hunks; a hunk whose lines (or,
//! for a removal, whose place) an edit since the turn touched is a conflict and is never written;
//! everything outside the flipped hunks stays byte for byte as it is now.

use similar::{Algorithm, DiffOp};

/// Past this, a diff settles for a coarser answer than the smallest (huge, unrelated contents).
const DEADLINE: std::time::Duration = std::time::Duration::from_secs(2);

/// A file's lines, each with its end (`\n`); the last may have none.
pub(crate) fn split(bytes: &[u8]) -> Vec<&[u8]> {
    bytes.split_inclusive(|b| *b == b'\n').collect()
}

fn diff(old: &[&[u8]], new: &[&[u8]]) -> Vec<DiffOp> {
    let deadline = std::time::Instant::now() + DEADLINE;
    similar::capture_diff_slices_deadline(Algorithm::Myers, old, new, Some(deadline))
}

/// One hunk as the turn made it (0-based lines).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Made {
    pub base_start: usize,
    pub base_lines: usize,
    pub agent_start: usize,
    pub agent_lines: usize,
    pub old_text: Vec<u8>,
    pub new_text: Vec<u8>,
    /// Index of the version (1-based: the call) that made it.
    pub call: usize,
}

/// The hunks from `base` to the last of `versions` (each call's content after it, in order),
/// each naming the call whose version last wrote its lines (or removed them).
pub(crate) fn make(base: &[u8], versions: &[&[u8]]) -> Vec<Made> {
    let base_lines = split(base);
    // Which call wrote each line of the current version (0: it was there before the turn), and
    // which call last removed lines at each gap between lines.
    let mut origin: Vec<usize> = vec![0; base_lines.len()];
    let mut gap: Vec<usize> = vec![0; base_lines.len() + 1];
    let mut current = base_lines.clone();
    for (i, version) in versions.iter().enumerate() {
        let call = i + 1;
        let next = split(version);
        let mut new_origin = Vec::with_capacity(next.len());
        let mut new_gap = vec![0; next.len() + 1];
        for op in diff(&current, &next) {
            match op {
                DiffOp::Equal { old_index, new_index, len } => {
                    for k in 0..len {
                        new_origin.push(origin[old_index + k]);
                        new_gap[new_index + k] = new_gap[new_index + k].max(gap[old_index + k]);
                    }
                    new_gap[new_index + len] = new_gap[new_index + len].max(gap[old_index + len]);
                }
                DiffOp::Delete { new_index, .. } => new_gap[new_index] = call,
                DiffOp::Insert { new_len, .. } | DiffOp::Replace { new_len, .. } => {
                    new_origin.extend(std::iter::repeat_n(call, new_len));
                }
            }
        }
        (current, origin, gap) = (next, new_origin, new_gap);
    }
    let last = versions.len().max(1);
    let mut out = Vec::new();
    for op in diff(&base_lines, &current) {
        let (b, bl, a, al) = match op {
            DiffOp::Equal { .. } => continue,
            DiffOp::Delete { old_index, old_len, new_index } => (old_index, old_len, new_index, 0),
            DiffOp::Insert { old_index, new_index, new_len } => (old_index, 0, new_index, new_len),
            DiffOp::Replace { old_index, old_len, new_index, new_len } => (old_index, old_len, new_index, new_len),
        };
        let wrote = origin[a..a + al].iter().copied().max().unwrap_or(0);
        let removed = gap[a..=a + al].iter().copied().max().unwrap_or(0);
        let call = match wrote.max(removed) {
            0 => last,
            c => c,
        };
        out.push(Made {
            base_start: b,
            base_lines: bl,
            agent_start: a,
            agent_lines: al,
            old_text: base_lines[b..b + bl].concat(),
            new_text: current[a..a + al].concat(),
            call,
        });
    }
    out
}

/// A text hunk of one file as a flip needs it: where its lines stand as the turn left the file,
/// both texts, and whether it is rejected now.
#[derive(Debug, Clone)]
pub(crate) struct Placed<'a> {
    pub agent_start: usize,
    pub agent_lines: usize,
    pub old_text: &'a [u8],
    pub new_text: &'a [u8],
    pub rejected: bool,
}

/// What Bridle last left in a text file: what the turn left, with the rejected hunks' lines put
/// back; and each hunk's span in it (start, lines), in `hunks`' order.
pub(crate) fn reference<'a>(agent: &'a [u8], hunks: &[Placed<'a>]) -> (Vec<&'a [u8]>, Vec<(usize, usize)>) {
    let agent = split(agent);
    let mut order: Vec<usize> = (0..hunks.len()).collect();
    order.sort_by_key(|i| hunks[*i].agent_start);
    let mut out = Vec::with_capacity(agent.len());
    let mut spans = vec![(0, 0); hunks.len()];
    let mut at = 0;
    for i in order {
        let h = &hunks[i];
        out.extend_from_slice(&agent[at.min(agent.len())..h.agent_start.min(agent.len())]);
        let lines = if h.rejected { split(h.old_text) } else { split(h.new_text) };
        spans[i] = (out.len(), lines.len());
        out.extend(lines);
        at = h.agent_start + h.agent_lines;
    }
    out.extend_from_slice(&agent[at.min(agent.len())..]);
    (out, spans)
}

/// Where each edit made since: the spans of `reference` that `now` no longer holds as they were
/// (start, lines; 0 lines: something was inserted there), and for every position of
/// `reference` that is kept, where it stands in `now`.
pub(crate) struct Since {
    edits: Vec<(usize, usize)>,
    kept: Vec<(usize, usize, usize)>,
    old_len: usize,
    new_len: usize,
}

impl Since {
    pub(crate) fn of(reference: &[&[u8]], now: &[&[u8]]) -> Since {
        let mut edits = Vec::new();
        let mut kept = Vec::new();
        for op in diff(reference, now) {
            match op {
                DiffOp::Equal { old_index, new_index, len } => kept.push((old_index, new_index, len)),
                other => edits.push((other.old_range().start, other.old_range().len())),
            }
        }
        Since { edits, kept, old_len: reference.len(), new_len: now.len() }
    }

    /// Whether an edit since touched the span (start, lines): overlapped its lines, or for an
    /// empty span, removed lines around it.
    pub(crate) fn touched(&self, (start, lines): (usize, usize)) -> bool {
        let end = start + lines;
        self.edits.iter().any(|&(s, l)| {
            let e = s + l;
            if lines == 0 {
                s < start && start < e
            } else if l == 0 {
                start < s && s < end
            } else {
                s < end && start < e
            }
        })
    }

    /// Where position `p` of the reference stands now, when it was kept.
    fn place(&self, p: usize) -> Option<usize> {
        if p == self.old_len {
            return Some(self.new_len);
        }
        self.kept.iter().find(|(o, _, len)| *o <= p && p < o + len).map(|(o, n, _)| n + (p - o))
    }
}

/// `now` with each span of `flips` (its span in the reference, the lines to put there) written,
/// or the spans that cannot be placed (touched since). Everything else stays as it is.
pub(crate) fn flip(
    now: &[&[u8]],
    since: &Since,
    flips: &[((usize, usize), &[u8])],
) -> Result<Vec<u8>, Vec<(usize, usize)>> {
    let mut placed = Vec::new();
    let mut conflicts = Vec::new();
    for &((start, lines), text) in flips {
        let at = since.place(start).filter(|_| !since.touched((start, lines)));
        match at {
            Some(at) => placed.push((at, lines, text)),
            None => conflicts.push((start, lines)),
        }
    }
    if !conflicts.is_empty() {
        return Err(conflicts);
    }
    placed.sort_by_key(|(at, _, _)| *at);
    let mut out = Vec::new();
    let mut at = 0;
    for (start, lines, text) in placed {
        out.extend(now[at..start].concat());
        out.extend_from_slice(text);
        at = start + lines;
    }
    out.extend(now[at.min(now.len())..].concat());
    Ok(out)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn text(n: usize) -> String {
        (1..=n).map(|i| format!("line {i}\n")).collect()
    }

    #[test]
    fn hunks_name_the_call_that_made_them() {
        let base = text(20);
        let v1 = base.replace("line 3\n", "three\n");
        let v2 = v1.replace("line 10\n", "").replace("line 15\n", "fifteen\nfifteen and a half\n");
        let hunks = make(base.as_bytes(), &[v1.as_bytes(), v2.as_bytes()]);
        let got: Vec<_> =
            hunks.iter().map(|h| (h.base_start, h.base_lines, h.agent_start, h.agent_lines, h.call)).collect();
        assert_eq!(got, vec![(2, 1, 2, 1, 1), (9, 1, 9, 0, 2), (14, 1, 13, 2, 2)]);
        assert_eq!(hunks[0].old_text, b"line 3\n");
        assert_eq!(hunks[0].new_text, b"three\n");
    }

    #[test]
    fn a_flip_keeps_the_edits_made_since_and_refuses_touched_lines() {
        let base = text(10);
        let agent = base.replace("line 2\n", "two\n").replace("line 8\n", "eight\n");
        let hunks = make(base.as_bytes(), &[agent.as_bytes()]);
        let placed: Vec<Placed> = hunks
            .iter()
            .map(|h| Placed {
                agent_start: h.agent_start,
                agent_lines: h.agent_lines,
                old_text: &h.old_text,
                new_text: &h.new_text,
                rejected: false,
            })
            .collect();
        let (reference, spans) = reference(agent.as_bytes(), &placed);
        // The user added a line at the top and changed line 8 (the second hunk).
        let now = format!("# header\n{}", agent.replace("eight\n", "EIGHT\n"));
        let now_lines = split(now.as_bytes());
        let since = Since::of(&reference, &now_lines);
        assert!(!since.touched(spans[0]));
        assert!(since.touched(spans[1]));
        let flipped = flip(&now_lines, &since, &[(spans[0], placed[0].old_text)]).unwrap();
        assert_eq!(String::from_utf8(flipped).unwrap(), now.replace("two\n", "line 2\n"));
        assert_eq!(flip(&now_lines, &since, &[(spans[1], placed[1].old_text)]), Err(vec![(7, 1)]));
    }
}
