//! The region of a file that most resembles text that was not found, shown with line numbers
//! so the model can copy the real text and retry.
//!
//! The rule this keeps: one linear pass over the file, whatever its size. Every file line that
//! shares a word (or its whole punctuation-folded text) with line `j` of the sought text votes
//! for a region starting `j` lines above it, weighted by how rare that word is in the file;
//! the region with the most votes wins.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::matcher::{keys_of, LineKeys, MatchLevel};

/// Context lines shown above and below the closest region.
const MARGIN: usize = 2;
/// Most lines an excerpt shows.
const MAX_LINES: usize = 12;
/// Longest line an excerpt shows whole, in chars.
const MAX_LINE_CHARS: usize = 200;

/// FNV-1a: the file pass hashes every word of every line, and SipHash's resistance to
/// crafted keys buys nothing for an error message but costs most of the time.
#[derive(Default)]
struct Fnv(u64);

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut hash = if self.0 == 0 { 0xcbf2_9ce4_8422_2325 } else { self.0 };
        for byte in bytes {
            hash = (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = hash;
    }
}

type FnvMap<K, V> = HashMap<K, V, BuildHasherDefault<Fnv>>;

/// The part of a file most like the text that was sought.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClosestRegion {
    /// First line shown, 1-based.
    pub first_line: usize,
    /// Last line shown, 1-based.
    pub last_line: usize,
    /// The lines, numbered: `  42 | text`, one per line.
    pub excerpt: String,
    /// The first line of the sought text that differs from the file here, if one does.
    pub first_difference: Option<LineDifference>,
}

/// A line of the sought text and the file line it was compared with, both 1-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineDifference {
    /// Line within the sought text (`old_text`, or a hunk's old side).
    pub sought_line: usize,
    /// Line within the file.
    pub file_line: usize,
}

impl ClosestRegion {
    /// The region in words, naming the sought text as `sought` (e.g. "old_text").
    pub(crate) fn describe(&self, sought: &str) -> String {
        let mut out = format!(
            "The closest region of the file is lines {}-{}:\n{}",
            self.first_line, self.last_line, self.excerpt
        );
        if let Some(diff) = self.first_difference {
            out.push_str(&format!(
                "\nLine {} of {sought} differs from line {} of the file.",
                diff.sought_line, diff.file_line
            ));
        }
        out
    }
}

/// Words of at least two chars: letters, digits and `_`.
fn words(key: &str) -> impl Iterator<Item = &str> {
    key.split(|c: char| !(c.is_alphanumeric() || c == '_')).filter(|word| word.chars().nth(1).is_some())
}

/// A token of a line: one of its words, or the whole line.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Token<'a> {
    Word(&'a str),
    Line(&'a str),
}

/// The line itself, then its words; the same word may come more than once.
fn tokens(key: &str) -> impl Iterator<Item = Token<'_>> {
    let line = (!key.is_empty()).then_some(Token::Line(key));
    line.into_iter().chain(words(key).map(Token::Word))
}

/// Finds the region of the file behind `keys` closest to `sought`; `hint` (1-based) breaks
/// ties. Uses (and fills) the file's level-5 keys.
pub(crate) fn closest_region<S: AsRef<str>>(
    keys: &mut LineKeys<'_>,
    sought: &[S],
    hint: Option<usize>,
) -> Option<ClosestRegion> {
    let level = MatchLevel::Punctuation;
    let file = keys.lines();
    let sought_keys = keys_of(sought, level);
    let mut wanted: FnvMap<Token<'_>, Vec<usize>> = FnvMap::default();
    for (j, key) in sought_keys.iter().enumerate() {
        for token in tokens(key) {
            let lines = wanted.entry(token).or_default();
            if lines.last() != Some(&j) {
                lines.push(j);
            }
        }
    }
    if wanted.is_empty() || file.is_empty() {
        return None;
    }
    let file_keys = keys.get(level);
    let mut hits: Vec<(usize, Token<'_>)> = Vec::new();
    let mut frequency: FnvMap<Token<'_>, usize> = FnvMap::default();
    for (i, key) in file_keys.iter().enumerate() {
        let line_hits = hits.len();
        for token in tokens(key) {
            // Most words are not wanted; only the few that are need the per-line dedup.
            if wanted.contains_key(&token) && !hits[line_hits..].iter().any(|(_, t)| *t == token) {
                *frequency.entry(token).or_default() += 1;
                hits.push((i, token));
            }
        }
    }
    // A region may start above the file's first line (the sought text has lines the file
    // lacks there), so votes are kept per start shifted down by the sought length.
    let shift = sought_keys.len();
    let mut votes = vec![0f64; file.len() + shift];
    for (i, token) in hits {
        let weight = 1.0 / frequency.get(&token).copied().unwrap_or(1) as f64;
        for &j in wanted.get(&token).map(Vec::as_slice).unwrap_or(&[]) {
            votes[i + shift - j] += weight;
        }
    }
    let distance = |slot: usize| hint.map_or(0, |hint| (slot + 1).abs_diff(hint + shift));
    let best = (0..votes.len())
        .filter(|&slot| votes[slot] > 0.0)
        .min_by(|&a, &b| votes[b].total_cmp(&votes[a]).then(distance(a).cmp(&distance(b))).then(a.cmp(&b)))?;

    // `best + j - shift` is the file line that sought line `j` lies on, when it is in the file.
    let first_difference = sought_keys.iter().enumerate().find_map(|(j, key)| {
        let i = (best + j).checked_sub(shift)?;
        (i < file.len() && file_keys[i] != *key).then_some(LineDifference { sought_line: j + 1, file_line: i + 1 })
    });
    let start = best.saturating_sub(shift);
    let first = start.saturating_sub(MARGIN);
    let last = (best + sought.len() + MARGIN).saturating_sub(shift).min(first + MAX_LINES).min(file.len());
    Some(ClosestRegion {
        first_line: first + 1,
        last_line: last,
        excerpt: numbered(file, first, last),
        first_difference,
    })
}

/// Lines `first..last` (0-based, exclusive) as `  42 | text`.
pub(crate) fn numbered(file: &[&str], first: usize, last: usize) -> String {
    let width = last.to_string().len().max(4);
    let mut out = String::new();
    for (i, line) in file.iter().enumerate().take(last).skip(first) {
        if !out.is_empty() {
            out.push('\n');
        }
        let shown = match line.char_indices().nth(MAX_LINE_CHARS) {
            Some((cut, _)) => format!("{}…", &line[..cut]),
            None => line.to_string(),
        };
        out.push_str(&format!("{:>width$} | {}", i + 1, shown));
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn finds_the_region_sharing_the_rarest_words() {
        let file: Vec<String> = (1..=30).map(|n| format!("let value_{n} = compute({n});")).collect();
        let file: Vec<&str> = file.iter().map(String::as_str).collect();
        let region = closest_region(
            &mut LineKeys::new(&file),
            &["let value_20 = compute(20);", "let value_21 = compute(99);"],
            None,
        )
        .unwrap();
        assert_eq!((region.first_line, region.last_line), (18, 23));
        assert_eq!(region.first_difference, Some(LineDifference { sought_line: 2, file_line: 21 }));
        assert_eq!(
            region.excerpt,
            "  18 | let value_18 = compute(18);\n  19 | let value_19 = compute(19);\n  20 | let value_20 = compute(20);\n  21 | let value_21 = compute(21);\n  22 | let value_22 = compute(22);\n  23 | let value_23 = compute(23);"
        );
    }

    #[test]
    fn hint_breaks_ties_and_nothing_alike_gives_none() {
        let file = ["x", "}", "y", "}"];
        assert_eq!(closest_region(&mut LineKeys::new(&file), &["}"], Some(4)).unwrap().first_line, 2);
        assert_eq!(closest_region(&mut LineKeys::new(&file), &["}"], None).unwrap().first_line, 1);
        assert_eq!(closest_region(&mut LineKeys::new(&file), &["zzz"], None), None);
    }

    #[test]
    fn a_region_at_the_top_is_found_whatever_the_indentation_and_extra_lines_above() {
        let file = ["fn main() {", "    run();", "}", "", "fn other() {}"];
        // Sought line 2 is the file's line 1: the region would start above the file.
        let region = closest_region(&mut LineKeys::new(&file), &["// header", "fn main() {", "run(1);"], None).unwrap();
        assert_eq!((region.first_line, region.last_line), (1, 4));
        assert_eq!(region.first_difference, Some(LineDifference { sought_line: 3, file_line: 2 }));
        let region = closest_region(&mut LineKeys::new(&file), &["\t\tfn main() {", "\t\t\trun(2);"], None).unwrap();
        assert_eq!(region.first_line, 1);
    }

    #[test]
    fn long_lines_are_cut_and_numbers_widen() {
        let long = "é".repeat(250);
        let file: Vec<&str> = vec![long.as_str(); 10_001];
        let text = numbered(&file, 9_999, 10_001);
        assert_eq!(text, format!("10000 | {}…\n10001 | {}…", "é".repeat(200), "é".repeat(200)));
    }
}
