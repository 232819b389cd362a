//! The shape of a text file: its UTF-8 BOM, its line endings and its final newline, and the
//! split into lines that every matching level works on.
//!
//! The rule this keeps: an edit never changes the shape of the lines it does not touch. Lines
//! keep their own terminators byte for byte; new lines get the file's dominant ending.

/// The UTF-8 byte order mark, as a char.
const BOM: char = '\u{feff}';

/// A line terminator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Eol {
    /// `\n`
    Lf,
    /// `\r\n`
    CrLf,
}

impl Eol {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Eol::Lf => "\n",
            Eol::CrLf => "\r\n",
        }
    }
}

/// Splits off a leading BOM: whether there was one, and the rest.
pub(crate) fn split_bom(content: &str) -> (bool, &str) {
    match content.strip_prefix(BOM) {
        Some(rest) => (true, rest),
        None => (false, content),
    }
}

/// Puts the BOM back when the original had one.
pub(crate) fn with_bom(bom: bool, body: String) -> String {
    if bom {
        let mut out = String::with_capacity(body.len() + BOM.len_utf8());
        out.push(BOM);
        out.push_str(&body);
        out
    } else {
        body
    }
}

/// `\r\n` -> `\n`; lone `\r` is left alone.
pub(crate) fn to_lf(text: &str) -> String {
    text.replace("\r\n", "\n")
}

/// Rewrites `text`'s line endings to `eol`; with `None` (a file with no line break to copy)
/// the text keeps its own.
pub(crate) fn to_eol(text: &str, eol: Option<Eol>) -> String {
    match eol {
        None => text.to_string(),
        Some(Eol::Lf) => to_lf(text),
        Some(Eol::CrLf) => to_lf(text).replace('\n', "\r\n"),
    }
}

/// One line of a body: its text without terminator, and where it sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Line<'a> {
    /// The line without `\n` or `\r\n`.
    pub text: &'a str,
    /// Byte offset of the line's start in the body.
    pub start: usize,
    /// Byte offset just past `text`.
    pub end: usize,
    /// Byte offset just past the terminator (== `end` for a last line without one).
    pub next: usize,
}

impl Line<'_> {
    pub(crate) fn terminator<'b>(&self, body: &'b str) -> &'b str {
        body.get(self.end..self.next).unwrap_or("")
    }
}

/// A body (the content without its BOM) split into lines.
#[derive(Debug)]
pub(crate) struct Document<'a> {
    pub body: &'a str,
    pub lines: Vec<Line<'a>>,
    /// The dominant line ending; `None` when the body has no line break.
    pub eol: Option<Eol>,
    /// Whether the body ends with a line break.
    pub final_newline: bool,
}

impl<'a> Document<'a> {
    pub(crate) fn parse(body: &'a str) -> Self {
        let mut lines = Vec::new();
        let (mut crlf, mut lf) = (0usize, 0usize);
        let mut start = 0;
        while start < body.len() {
            let Some(at) = body[start..].find('\n').map(|at| start + at) else {
                lines.push(Line { text: &body[start..], start, end: body.len(), next: body.len() });
                break;
            };
            let end = if body[start..at].ends_with('\r') { at - 1 } else { at };
            if end < at {
                crlf += 1;
            } else {
                lf += 1;
            }
            lines.push(Line { text: &body[start..end], start, end, next: at + 1 });
            start = at + 1;
        }
        let eol = match (crlf, lf) {
            (0, 0) => None,
            (c, l) if c > l => Some(Eol::CrLf),
            _ => Some(Eol::Lf),
        };
        Document { body, lines, eol, final_newline: body.ends_with('\n') }
    }

    /// The terminator new lines get.
    pub(crate) fn eol_str(&self) -> &'static str {
        self.eol.unwrap_or(Eol::Lf).as_str()
    }

    pub(crate) fn texts(&self) -> Vec<&'a str> {
        self.lines.iter().map(|line| line.text).collect()
    }

    /// The 1-based line holding byte `offset`.
    pub(crate) fn line_of(&self, offset: usize) -> usize {
        self.lines.partition_point(|line| line.next <= offset).min(self.lines.len().saturating_sub(1)) + 1
    }
}

/// Splits text given by the model into lines: `\r\n` normalised, and one trailing newline
/// taken off and reported (so `"a\nb\n"` is `["a", "b"]` plus `true`).
pub(crate) fn model_lines(text: &str) -> (Vec<String>, bool) {
    let lf = to_lf(text);
    let (body, trailing) = match lf.strip_suffix('\n') {
        Some(body) => (body, true),
        None => (lf.as_str(), false),
    };
    (body.split('\n').map(str::to_string).collect(), trailing)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn crlf_body_is_split_without_terminators_and_keeps_offsets() {
        let doc = Document::parse("a\r\nbb\r\nc");
        assert_eq!(doc.texts(), vec!["a", "bb", "c"]);
        assert_eq!(doc.eol, Some(Eol::CrLf));
        assert!(!doc.final_newline);
        assert_eq!(doc.lines[1], Line { text: "bb", start: 3, end: 5, next: 7 });
        assert_eq!(doc.lines[1].terminator(doc.body), "\r\n");
        assert_eq!(doc.lines[2].terminator(doc.body), "");
    }

    #[test]
    fn dominant_ending_and_final_newline() {
        assert_eq!(Document::parse("a\nb\r\nc\n").eol, Some(Eol::Lf));
        assert_eq!(Document::parse("one line").eol, None);
        assert!(Document::parse("x\n").final_newline);
        assert_eq!(Document::parse("").lines.len(), 0);
    }

    #[test]
    fn line_of_maps_offsets_to_one_based_lines() {
        let doc = Document::parse("ab\ncd\n");
        assert_eq!((doc.line_of(0), doc.line_of(2), doc.line_of(3), doc.line_of(5)), (1, 1, 2, 2));
    }

    #[test]
    fn bom_round_trip_and_eol_rewrite() {
        let (bom, body) = split_bom("\u{feff}x");
        assert!(bom);
        assert_eq!(with_bom(bom, body.to_string()), "\u{feff}x");
        assert_eq!(to_eol("a\nb\r\nc", Some(Eol::CrLf)), "a\r\nb\r\nc");
        assert_eq!(to_eol("a\r\nb", Some(Eol::Lf)), "a\nb");
        assert_eq!(to_eol("a\r\nb\n", None), "a\r\nb\n");
    }

    #[test]
    fn model_lines_take_off_one_trailing_newline() {
        assert_eq!(model_lines("a\r\nb\n"), (vec!["a".to_string(), "b".to_string()], true));
        assert_eq!(model_lines("a\n\n"), (vec!["a".to_string(), String::new()], true));
        assert_eq!(model_lines("a"), (vec!["a".to_string()], false));
    }
}
