//! The five matching levels of `edit_file` (and of `apply_patch`'s context lines), and the
//! searches behind them.
//!
//! The rule this keeps: a level finds every occurrence, overlapping ones included, so the
//! caller can tell a unique match from an ambiguous one. Searches are linear: substring search
//! for levels 1-2, and KMP over per-line keys, computed once per level, for levels 3-5.

use std::borrow::Cow;

/// How loosely `old_text` (or a hunk's context) had to be compared to be found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum MatchLevel {
    /// Byte for byte.
    Exact,
    /// After `\r\n` -> `\n` on both sides.
    LineEndings,
    /// Line by line, ignoring trailing whitespace.
    TrailingWhitespace,
    /// Line by line, ignoring leading and trailing whitespace.
    Indentation,
    /// As `Indentation`, with Unicode quotes, dashes and odd spaces folded to ASCII.
    Punctuation,
}

impl MatchLevel {
    /// Every level, loosest last: the order they are tried in.
    pub const ALL: [MatchLevel; 5] = [
        MatchLevel::Exact,
        MatchLevel::LineEndings,
        MatchLevel::TrailingWhitespace,
        MatchLevel::Indentation,
        MatchLevel::Punctuation,
    ];

    /// A sentence for the model saying how the text was found.
    pub fn describe(self) -> &'static str {
        match self {
            MatchLevel::Exact => "matched exactly",
            MatchLevel::LineEndings => "matched after normalising line endings (CRLF -> LF)",
            MatchLevel::TrailingWhitespace => "matched line by line, ignoring trailing whitespace",
            MatchLevel::Indentation => {
                "matched line by line, ignoring indentation; the new text was re-indented to \
                 the file's"
            }
            MatchLevel::Punctuation => {
                "matched line by line, ignoring indentation and treating Unicode quotes, dashes and \
                 spaces as their ASCII forms; the new text was inserted as written, re-indented"
            }
        }
    }

    fn index(self) -> usize {
        self as usize
    }

    /// The form of one line (without terminator) that this level compares.
    pub(crate) fn key(self, line: &str) -> Cow<'_, str> {
        match self {
            MatchLevel::Exact => Cow::Borrowed(line),
            MatchLevel::LineEndings => Cow::Borrowed(line.strip_suffix('\r').unwrap_or(line)),
            MatchLevel::TrailingWhitespace => Cow::Borrowed(line.trim_end()),
            MatchLevel::Indentation => Cow::Borrowed(line.trim()),
            MatchLevel::Punctuation => match fold_punctuation(line) {
                Cow::Borrowed(folded) => Cow::Borrowed(folded.trim()),
                Cow::Owned(folded) => Cow::Owned(folded.trim().to_string()),
            },
        }
    }
}

/// Unicode punctuation models and editors swap in, folded to ASCII; zero-width chars removed.
pub(crate) fn fold_punctuation(text: &str) -> Cow<'_, str> {
    if text.is_ascii() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2032}' => out.push('\''),
            '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' | '\u{2033}' => out.push('"'),
            '\u{2010}'..='\u{2015}' | '\u{2212}' => out.push('-'),
            '\u{2026}' => out.push_str("..."),
            '\u{00A0}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => out.push(' '),
            '\u{200B}'..='\u{200D}' | '\u{2060}' | '\u{FEFF}' => {}
            other => out.push(other),
        }
    }
    Cow::Owned(out)
}

/// Start offsets of every occurrence of `needle`, overlapping ones included.
pub(crate) fn find_overlapping(haystack: &str, needle: &str) -> Vec<usize> {
    let mut found = Vec::new();
    if needle.is_empty() {
        return found;
    }
    let mut from = 0;
    while let Some(at) = haystack.get(from..).and_then(|rest| rest.find(needle)) {
        let start = from + at;
        found.push(start);
        // Step one char, not one match, so `aa` is found twice in `aaa`.
        from = start + haystack[start..].chars().next().map_or(1, char::len_utf8);
    }
    found
}

/// Text with every `\r\n` made `\n`, remembering where the `\r`s were so offsets map back.
pub(crate) struct LfText {
    pub text: String,
    /// Offsets, in `text`, of the `\n`s that had a `\r` before them.
    removed: Vec<usize>,
}

impl LfText {
    pub(crate) fn new(raw: &str) -> Self {
        let mut text = String::with_capacity(raw.len());
        let mut removed = Vec::new();
        let mut rest = raw;
        while let Some(at) = rest.find("\r\n") {
            text.push_str(&rest[..at]);
            removed.push(text.len());
            text.push('\n');
            rest = &rest[at + 2..];
        }
        text.push_str(rest);
        LfText { text, removed }
    }

    /// The raw offset of `offset` in `text`; a `\n` that was `\r\n` maps to its `\r`.
    pub(crate) fn to_raw(&self, offset: usize) -> usize {
        offset + self.removed.partition_point(|&at| at < offset)
    }
}

/// Every start index at which `pattern` occurs in `text` (KMP, overlapping runs included).
pub(crate) fn find_runs<T: PartialEq>(text: &[T], pattern: &[T]) -> Vec<usize> {
    let mut found = Vec::new();
    if pattern.is_empty() || pattern.len() > text.len() {
        return found;
    }
    let mut fail = vec![0usize; pattern.len()];
    let mut k = 0;
    for i in 1..pattern.len() {
        while k > 0 && pattern[i] != pattern[k] {
            k = fail[k - 1];
        }
        if pattern[i] == pattern[k] {
            k += 1;
        }
        fail[i] = k;
    }
    let mut k = 0;
    for (i, item) in text.iter().enumerate() {
        while k > 0 && *item != pattern[k] {
            k = fail[k - 1];
        }
        if *item == pattern[k] {
            k += 1;
        }
        if k == pattern.len() {
            found.push(i + 1 - k);
            k = fail[k - 1];
        }
    }
    found
}

/// Per-level keys of a file's lines, each computed at most once.
pub(crate) struct LineKeys<'a> {
    lines: &'a [&'a str],
    cache: [Option<Vec<Cow<'a, str>>>; 5],
}

impl<'a> LineKeys<'a> {
    pub(crate) fn new(lines: &'a [&'a str]) -> Self {
        LineKeys { lines, cache: Default::default() }
    }

    /// The lines the keys are of.
    pub(crate) fn lines(&self) -> &'a [&'a str] {
        self.lines
    }

    pub(crate) fn get(&mut self, level: MatchLevel) -> &[Cow<'a, str>] {
        let lines = self.lines;
        self.cache[level.index()].get_or_insert_with(|| lines.iter().map(|line| level.key(line)).collect())
    }
}

/// The keys of lines given by the model.
pub(crate) fn keys_of<S: AsRef<str>>(lines: &[S], level: MatchLevel) -> Vec<Cow<'_, str>> {
    lines.iter().map(|line| level.key(line.as_ref())).collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn overlapping_occurrences_are_all_found() {
        assert_eq!(find_overlapping("aaa", "aa"), vec![0, 1]);
        assert_eq!(find_overlapping("éaéa", "a"), vec![2, 5]);
        assert_eq!(find_overlapping("abc", "x"), Vec::<usize>::new());
    }

    #[test]
    fn runs_of_lines_overlap_too() {
        assert_eq!(find_runs(&["x", "x", "x"], &["x", "x"]), vec![0, 1]);
        assert_eq!(find_runs(&["a", "b", "a", "b", "a"], &["a", "b", "a"]), vec![0, 2]);
        assert_eq!(find_runs(&["a"], &["a", "b"]), Vec::<usize>::new());
    }

    #[test]
    fn crlf_folding_maps_offsets_back() {
        let lf = LfText::new("ab\r\ncd\r\n");
        assert_eq!(lf.text, "ab\ncd\n");
        // "cd" starts at 3 in LF text, 4 in raw; the "\n" after it (5) is the raw "\r" (6).
        assert_eq!((lf.to_raw(3), lf.to_raw(5), lf.to_raw(6)), (4, 6, 8));
    }

    #[test]
    fn keys_per_level() {
        let line = "\u{a0} let s = \u{201c}a\u{2014}b\u{2026}\u{201d};\u{200b}  ";
        assert_eq!(MatchLevel::TrailingWhitespace.key("  x \t"), "  x");
        assert_eq!(MatchLevel::Indentation.key("\t x \t"), "x");
        assert_eq!(MatchLevel::Punctuation.key(line), "let s = \"a-b...\";");
        assert_eq!(fold_punctuation("it\u{2019}s \u{2212}1\u{3000}"), "it's -1 ");
    }
}
