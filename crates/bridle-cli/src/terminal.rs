//! Text the model controls (its answer, tool arguments, findings quoting them, previews, tool
//! output) printed to a terminal: control characters and bidirectional overrides are shown as
//! escapes, never sent raw, so an escape sequence cannot repaint what the person approving
//! reads. Line breaks and tabs stay.

use std::borrow::Cow;

/// Whether `c` would steer the terminal or reorder what is shown rather than be shown.
fn steers(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t') || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` with every steering character replaced by its `\u{..}` escape.
pub fn safe(text: &str) -> Cow<'_, str> {
    if !text.chars().any(steers) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(text.chars().map(|c| if steers(c) { c.escape_unicode().to_string() } else { c.to_string() }).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_overrides_are_shown_not_sent() {
        assert_eq!(safe("plain\ttext\n"), "plain\ttext\n");
        assert_eq!(safe("\x1b[2Jrm -rf ~\r"), "\\u{1b}[2Jrm -rf ~\\u{d}");
        assert_eq!(safe("a\u{9b}31mb"), "a\\u{9b}31mb");
        assert_eq!(safe("ls \u{202e}txt.exe"), "ls \\u{202e}txt.exe");
        assert_eq!(safe("\x07\x08"), "\\u{7}\\u{8}");
    }
}
