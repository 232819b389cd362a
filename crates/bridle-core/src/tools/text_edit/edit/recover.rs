//! The readings of an edit tried when `old_text` is not found as sent: blank lines at its ends
//! dropped, and Bridle's own `  42 | ` line-number prefixes (copied from a "not found" excerpt)
//! taken off.
//!
//! The rule this keeps: a reading only loosens what the model plainly meant. Prefixes come off
//! `old_text` only when every non-empty line carries one, numbered one after the other as an
//! excerpt numbers them; they come off `new_text` only when every non-empty line of it has one
//! (some but not all is reported, never guessed at); blank lines come off `new_text` only as
//! far as the same number came off `old_text` at that end.

/// How `old_text` had to be read to be found, beyond the matching level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Reading {
    /// `  42 | ` prefixes were taken off `old_text`.
    pub line_numbers_removed: bool,
    /// ... and off `new_text`, every line of which had one.
    pub new_text_line_numbers_removed: bool,
    /// Blank lines at the start or end of `old_text` were dropped.
    pub blank_ends_ignored: bool,
}

impl Reading {
    /// A sentence for the model, when the edit was read other than as sent.
    pub fn describe(self) -> Option<String> {
        let mut parts = Vec::new();
        if self.line_numbers_removed {
            let also = if self.new_text_line_numbers_removed { " (and from new_text)" } else { "" };
            parts.push(format!("the line-number prefixes (`  N | `) were removed from old_text{also}"));
        }
        if self.blank_ends_ignored {
            parts.push("blank lines at the start or end of old_text were ignored".to_string());
        }
        (!parts.is_empty()).then(|| parts.join(" and "))
    }
}

/// One way of reading an edit: the texts to find and put in place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Candidate {
    pub old: String,
    pub new: String,
    pub reading: Reading,
    /// The file line `old` starts on, from its prefixes: a hint among several matches.
    pub hint: Option<usize>,
    /// `old` had prefixes and `new` has them on some non-empty lines but not all.
    pub new_partly_numbered: bool,
}

/// The readings to try, in order: as sent, then without blank ends, then without prefixes,
/// then without both. Readings equal to an earlier one are left out.
pub(super) fn candidates(old: &str, new: &str) -> Vec<Candidate> {
    let sent = Candidate {
        old: old.to_string(),
        new: new.to_string(),
        reading: Reading::default(),
        hint: None,
        new_partly_numbered: false,
    };
    let mut out = vec![sent.clone()];
    push_new(&mut out, without_blank_ends(&sent));
    if let Some(numbered) = without_line_numbers(old, new) {
        let trimmed = without_blank_ends(&numbered);
        // A leading blank line left by a copied `  3 | ` would match, at the exact level, the
        // line break before the next line, and a new_text without it would join two lines:
        // such a copy is read without its blank ends only.
        if !numbered.old.split_inclusive('\n').next().is_some_and(is_blank) {
            push_new(&mut out, Some(numbered));
        }
        push_new(&mut out, trimmed);
    }
    out
}

fn push_new(out: &mut Vec<Candidate>, candidate: Option<Candidate>) {
    if let Some(candidate) = candidate.filter(|c| !c.old.trim().is_empty()) {
        if !out.iter().any(|seen| seen.old == candidate.old && seen.new == candidate.new) {
            out.push(candidate);
        }
    }
}

fn is_blank(piece: &str) -> bool {
    piece.trim().is_empty()
}

/// `candidate` with the blank lines at `old`'s ends dropped, and as many of the same at
/// `new`'s ends; `None` when `old` has none.
fn without_blank_ends(candidate: &Candidate) -> Option<Candidate> {
    let old: Vec<&str> = candidate.old.split_inclusive('\n').collect();
    let lead = old.iter().take_while(|piece| is_blank(piece)).count();
    let trail = old[lead..].iter().rev().take_while(|piece| is_blank(piece)).count();
    if lead + trail == 0 {
        return None;
    }
    let new: Vec<&str> = candidate.new.split_inclusive('\n').collect();
    let new_lead = new.iter().take(lead).take_while(|piece| is_blank(piece)).count();
    let new_trail = new[new_lead..].iter().rev().take(trail).take_while(|piece| is_blank(piece)).count();
    let mut kept_old = old[lead..old.len() - trail].concat();
    // A last kept line that lost its blank followers keeps its own line break, and nothing more.
    if trail > 0 && !kept_old.ends_with('\n') {
        kept_old.push('\n');
    }
    Some(Candidate {
        old: kept_old,
        new: new[new_lead..new.len() - new_trail].concat(),
        reading: Reading { blank_ends_ignored: true, ..candidate.reading },
        hint: candidate.hint.map(|line| line + lead),
        new_partly_numbered: candidate.new_partly_numbered,
    })
}

/// A line's `  42 | ` prefix as Bridle's excerpts write it: the number and the rest. The space
/// after the bar may be missing on an empty line (a model trimmed it).
fn split_prefix(line: &str) -> Option<(usize, &str)> {
    let body = line.trim_start_matches([' ', '\t']);
    let digits = body.len() - body.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 {
        return None;
    }
    let number = body[..digits].parse().ok()?;
    let after = body[digits..].strip_prefix(" |")?;
    match after.strip_prefix(' ') {
        Some(rest) => Some((number, rest)),
        None if after.trim_end_matches(['\r', '\n']).is_empty() => Some((number, after)),
        None => None,
    }
}

/// The lines of `text` without their prefixes, and the first line's number; `None` unless
/// every non-empty line has a prefix. `consecutive` also asks the numbers to go up one a line.
fn strip_numbers(text: &str, consecutive: bool) -> Option<(String, usize)> {
    let mut out = String::with_capacity(text.len());
    let mut first = None;
    let mut any = false;
    for (index, piece) in text.split_inclusive('\n').enumerate() {
        if is_blank(piece) {
            out.push_str(piece);
            continue;
        }
        let (number, rest) = split_prefix(piece)?;
        let start = number.checked_sub(index)?;
        if consecutive && *first.get_or_insert(start) != start {
            return None;
        }
        first.get_or_insert(start);
        any = true;
        out.push_str(rest);
    }
    any.then(|| (out, first.unwrap_or(1)))
}

/// `old` (and `new`, when all of it is numbered) without line-number prefixes; `None` unless
/// every non-empty line of `old` carries one.
fn without_line_numbers(old: &str, new: &str) -> Option<Candidate> {
    let (old, first) = strip_numbers(old, true)?;
    let stripped_new = strip_numbers(new, false).map(|(text, _)| text);
    let partly = stripped_new.is_none() && new.split_inclusive('\n').any(|piece| split_prefix(piece).is_some());
    let new_removed = stripped_new.is_some();
    Some(Candidate {
        old,
        new: stripped_new.unwrap_or_else(|| new.to_string()),
        reading: Reading {
            line_numbers_removed: true,
            new_text_line_numbers_removed: new_removed,
            ..Reading::default()
        },
        hint: (first > 0).then_some(first),
        new_partly_numbered: partly,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use pretty_assertions::assert_eq;

    use super::*;

    fn pairs(old: &str, new: &str) -> Vec<(String, String)> {
        candidates(old, new).into_iter().map(|c| (c.old, c.new)).collect()
    }

    #[test]
    fn prefixes_are_read_as_bridle_writes_them() {
        assert_eq!(split_prefix("  42 | let x = 1;"), Some((42, "let x = 1;")));
        assert_eq!(split_prefix("42 |     indented"), Some((42, "    indented")));
        assert_eq!(split_prefix("\t7 | x\n"), Some((7, "x\n")));
        assert_eq!(split_prefix("  43 | "), Some((43, "")));
        assert_eq!(split_prefix("  43 |"), Some((43, "")));
        assert_eq!(split_prefix("  43 |\r\n"), Some((43, "\r\n")));
        assert_eq!(split_prefix("a | b"), None);
        assert_eq!(split_prefix("42 |x"), None);
        assert_eq!(split_prefix("42| x"), None);
        assert_eq!(split_prefix("x = 42 | y"), None);
    }

    #[test]
    fn old_text_loses_prefixes_only_when_every_line_is_numbered_in_order() {
        let old = "  10 | fn a() {\n  11 |     b();\n  12 | }\n";
        let numbered = candidates(old, "fn a() {}\n");
        assert_eq!(numbered.len(), 2);
        assert_eq!(numbered[1].old, "fn a() {\n    b();\n}\n");
        assert_eq!(numbered[1].hint, Some(10));
        assert!(numbered[1].reading.line_numbers_removed);
        // One line without a prefix, or numbers out of order: read as sent only.
        assert_eq!(candidates("  10 | fn a() {\n    b();\n", "x").len(), 1);
        assert_eq!(candidates("  10 | a\n  12 | b\n", "x").len(), 1);
        // Things that merely look like numbers stay.
        assert_eq!(candidates("1 + 2 | 3\n", "x").len(), 1);
        assert_eq!(candidates("| 1 | 2 |\n| 3 | 4 |\n", "x").len(), 1);
    }

    #[test]
    fn new_text_loses_prefixes_only_when_all_of_it_has_them() {
        let old = "  3 | a\n  4 | b";
        assert_eq!(pairs(old, "  3 | a\n  4 | B")[1], ("a\nb".to_string(), "a\nB".to_string()));
        assert_eq!(pairs(old, "a\nB")[1], ("a\nb".to_string(), "a\nB".to_string()));
        let partly = &candidates(old, "  3 | a\nB")[1];
        assert_eq!(partly.new, "  3 | a\nB");
        assert!(partly.new_partly_numbered);
    }

    #[test]
    fn blank_ends_come_off_old_text_and_as_many_off_new_text() {
        assert_eq!(pairs("\n  foo();\n", "\n  bar();\n")[1], ("  foo();\n".to_string(), "  bar();\n".to_string()));
        assert_eq!(pairs("\n\nfoo\n\n  \n", "bar\n")[1], ("foo\n".to_string(), "bar\n".to_string()));
        assert_eq!(pairs("\nfoo\n", "\n")[1], ("foo\n".to_string(), String::new()));
        assert_eq!(pairs("foo\n  ", "bar\n  ")[1], ("foo\n".to_string(), "bar\n".to_string()));
        assert_eq!(pairs("\r\nfoo\r\n\r\n", "\r\nbar\r\n")[1], ("foo\r\n".to_string(), "bar\r\n".to_string()));
        // A blank line new_text adds at its end is kept: old_text had none there.
        assert_eq!(pairs("\nfoo", "\nfoo\n\n")[1], ("foo".to_string(), "foo\n\n".to_string()));
        assert_eq!(candidates("foo\n", "bar").len(), 1);
    }

    #[test]
    fn numbered_blank_lines_become_blank_ends_after_the_prefixes_go() {
        let all = pairs("  4 |\n  5 | x = 1\n  6 | \n", "  4 |\n  5 | x = 2\n  6 | \n");
        assert_eq!(all.last().unwrap(), &("x = 1\n".to_string(), "x = 2\n".to_string()));
        // Not read with the leading blank line: it is never a line break to match.
        assert!(all.iter().all(|(old, _)| !old.starts_with("\nx = 1")), "{all:?}");
        // A trailing one is a blank line, matched as sent first.
        let all = pairs("  5 | x = 1\n  6 | \n", "  5 | x = 2\n");
        assert_eq!(all[1], ("x = 1\n\n".to_string(), "x = 2\n".to_string()));
        let hint = candidates("  4 |\n  5 | x = 1\n", "y").last().unwrap().hint;
        assert_eq!(hint, Some(5));
    }
}
