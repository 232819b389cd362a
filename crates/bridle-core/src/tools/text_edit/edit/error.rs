//! Why an edit could not be applied, in words the model can act on.

use super::super::closest::ClosestRegion;
use super::super::matcher::MatchLevel;

/// Most match lines an ambiguity message lists.
const MAX_LISTED: usize = 20;

/// An edit that could not be applied. Nothing was produced: with several edits, none applies.
///
/// `edit` is the 0-based index of the failing edit when several were given (`edits[1]`), and
/// `None` for a single edit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EditError {
    /// The `edits` list was empty.
    #[error("no edits were given: pass old_text and new_text, or a non-empty `edits` list")]
    NoEdits,
    /// `old_text` was empty or only whitespace.
    #[error(
        "{}old_text is empty or only whitespace. Put the exact text to replace in old_text, with \
         enough surrounding lines to be unique; to insert text, include a neighbouring line in \
         both old_text and new_text.",
        prefix(.edit)
    )]
    EmptyOldText {
        /// Index of the failing edit in a batch.
        edit: Option<usize>,
    },
    /// `old_text` and `new_text` were the same.
    #[error(
        "{}old_text and new_text are identical, so this edit would change nothing. Put the \
         changed text in new_text.",
        prefix(.edit)
    )]
    NoChange {
        /// Index of the failing edit in a batch.
        edit: Option<usize>,
    },
    /// `old_text` was found at no level.
    #[error("{}", not_found(.edit, .closest))]
    NotFound {
        /// Index of the failing edit in a batch.
        edit: Option<usize>,
        /// The part of the file most like `old_text`, when anything is.
        closest: Option<ClosestRegion>,
    },
    /// `old_text` was found once its `  N | ` prefixes came off, but only some lines of
    /// `new_text` had them, so which are the file's own text cannot be told.
    #[error(
        "{}old_text was found once the line-number prefixes (`  N | `) copied from the excerpt \
         were removed, but only some lines of new_text have them. Send new_text without the \
         prefixes (or old_text and new_text both without them).",
        prefix(.edit)
    )]
    PartlyNumberedNewText {
        /// Index of the failing edit in a batch.
        edit: Option<usize>,
    },
    /// `old_text` was found more than once and nothing said which one to change.
    #[error("{}", ambiguous(.edit, *.count, .lines, *.level, .hint))]
    Ambiguous {
        /// Index of the failing edit in a batch.
        edit: Option<usize>,
        /// How many matches (overlapping ones included).
        count: usize,
        /// The 1-based line each match starts on, in order; overlapping matches can share one.
        lines: Vec<usize>,
        /// The level at which the matches were found.
        level: MatchLevel,
        /// The `line_hint` given, when it was as near to several matches.
        hint: Option<usize>,
    },
}

impl EditError {
    /// The 0-based index of the failing edit, when it was one of several.
    pub fn edit_index(&self) -> Option<usize> {
        match self {
            EditError::NoEdits => None,
            EditError::EmptyOldText { edit }
            | EditError::NoChange { edit }
            | EditError::NotFound { edit, .. }
            | EditError::PartlyNumberedNewText { edit }
            | EditError::Ambiguous { edit, .. } => *edit,
        }
    }

    /// The same error, naming edit `index` of a batch.
    pub(crate) fn in_batch(mut self, index: usize) -> Self {
        match &mut self {
            EditError::NoEdits => {}
            EditError::EmptyOldText { edit }
            | EditError::NoChange { edit }
            | EditError::NotFound { edit, .. }
            | EditError::PartlyNumberedNewText { edit }
            | EditError::Ambiguous { edit, .. } => *edit = Some(index),
        }
        self
    }
}

fn prefix(edit: &Option<usize>) -> String {
    edit.map(|i| format!("edits[{i}] failed, so no edit was applied: ")).unwrap_or_default()
}

fn not_found(edit: &Option<usize>, closest: &Option<ClosestRegion>) -> String {
    let mut out = format!(
        "{}old_text was not found in the file, not even ignoring line endings, trailing whitespace, \
         indentation or Unicode punctuation.",
        prefix(edit)
    );
    if let Some(index) = edit.filter(|&i| i > 0) {
        out.push_str(&format!(
            " Edits apply in order, so edits[{index}] must match the file as the edits before it left it."
        ));
    }
    match closest {
        Some(region) => {
            out.push('\n');
            out.push_str(&region.describe("old_text"));
            out.push_str(
                "\nCopy the lines exactly as the file has them, without the `  N | ` line numbers, and retry.",
            );
        }
        None => out.push_str(" Nothing in the file resembles it; read the file again and copy old_text from it."),
    }
    out
}

fn ambiguous(edit: &Option<usize>, count: usize, lines: &[usize], level: MatchLevel, hint: &Option<usize>) -> String {
    let condition = match level {
        MatchLevel::Exact => "",
        MatchLevel::LineEndings => " (ignoring line endings)",
        MatchLevel::TrailingWhitespace => " (ignoring trailing whitespace)",
        MatchLevel::Indentation => " (ignoring indentation)",
        MatchLevel::Punctuation => " (ignoring indentation and Unicode punctuation)",
    };
    let places = describe_lines(lines);
    match hint {
        Some(hint) => format!(
            "{}old_text matches {count} places{condition}, at {places}, and line_hint {hint} is as near \
             to more than one of them. Add surrounding lines to old_text so it matches one place.",
            prefix(edit)
        ),
        None => format!(
            "{}old_text matches {count} places{condition}, at {places}. Add surrounding lines to \
             old_text so it matches one place, pass line_hint with the line number of the one you \
             mean, or set replace_all to change every one.",
            prefix(edit)
        ),
    }
}

/// `line 4`, `lines 4, 9 and 12`, `line 1 (2 overlapping matches)`, capped at a few dozen.
fn describe_lines(lines: &[usize]) -> String {
    let mut groups: Vec<(usize, usize)> = Vec::new();
    for &line in lines {
        match groups.last_mut() {
            Some((last, n)) if *last == line => *n += 1,
            _ => groups.push((line, 1)),
        }
    }
    let shown: Vec<String> = groups
        .iter()
        .take(MAX_LISTED)
        .map(|&(line, n)| if n > 1 { format!("{line} ({n} overlapping matches)") } else { line.to_string() })
        .collect();
    let mut text = match shown.as_slice() {
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
        [] => String::new(),
    };
    if groups.len() > MAX_LISTED {
        text.push_str(&format!(" (and {} more lines)", groups.len() - MAX_LISTED));
    }
    let noun = if groups.len() == 1 { "line" } else { "lines" };
    format!("{noun} {text}")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn line_lists_read_naturally() {
        assert_eq!(describe_lines(&[4]), "line 4");
        assert_eq!(describe_lines(&[4, 9, 12]), "lines 4, 9 and 12");
        assert_eq!(describe_lines(&[1, 1]), "line 1 (2 overlapping matches)");
        let many: Vec<usize> = (1..=25).collect();
        assert!(describe_lines(&many).ends_with("19 and 20 (and 5 more lines)"));
    }

    #[test]
    fn batch_errors_name_the_edit() {
        let error = EditError::NoChange { edit: None }.in_batch(1);
        assert_eq!(error.edit_index(), Some(1));
        assert!(error.to_string().starts_with("edits[1] failed, so no edit was applied: old_text and new_text"));
    }
}
