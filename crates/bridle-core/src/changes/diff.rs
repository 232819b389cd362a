//! The unified diff of a change and how paths are shown: what the model, the approval preview, the
//! Changes view and the audit all read of a file change.
//!
//! Rule: one rendering for every reader — paths are workspace-relative POSIX, a missing side is
//! `/dev/null`, three lines of context.

use std::path::Path;

/// The unified diff from `old` to `new` of `rel` (a `None` side is `/dev/null`).
pub fn unified_diff(rel: &Path, old: Option<&str>, new: Option<&str>) -> String {
    let name = rel.to_string_lossy().replace('\\', "/");
    let a = if old.is_some() { format!("a/{name}") } else { "/dev/null".to_string() };
    let b = if new.is_some() { format!("b/{name}") } else { "/dev/null".to_string() };
    similar::TextDiff::from_lines(old.unwrap_or(""), new.unwrap_or(""))
        .unified_diff()
        .context_radius(3)
        .header(&a, &b)
        .to_string()
}

/// The text before a change, from the text after it and the change's unified diff (as
/// [`unified_diff`] renders it): what a reader that must not open the file twice (an editor's
/// diff view) shows as the old side. `None` for a created file, and when `after` does not match
/// the diff (the file changed again since).
pub fn text_before(after: Option<&str>, diff: &str) -> Option<String> {
    if diff.starts_with("--- /dev/null") {
        return None;
    }
    let mut after_lines = after.unwrap_or("").split_inclusive('\n');
    let mut before = String::new();
    let mut at = 1usize;
    // Split on `\n` alone: a line's own `\r` is part of its text.
    let mut lines = diff.split('\n').peekable();
    while let Some(line) = lines.next() {
        let Some(header) = line.strip_prefix("@@ -") else { continue };
        // `@@ -a,b +c,d @@`: the hunk's lines start at `c` of the new text (the line before
        // it when `d` is 0).
        let new = header.split(" +").nth(1)?.split(' ').next()?;
        let (start, count) = new.split_once(',').unwrap_or((new, "1"));
        let (start, count): (usize, usize) = (start.parse().ok()?, count.parse().ok()?);
        let first = if count == 0 { start + 1 } else { start };
        while at < first {
            before.push_str(after_lines.next()?);
            at += 1;
        }
        while let Some(body) = lines.peek().filter(|l| !l.starts_with("@@ ")) {
            let (mark, text) = body.split_at(body.len().min(1));
            let ends = !lines.clone().nth(1).is_some_and(|next| next.starts_with('\\'));
            let text = if ends { format!("{text}\n") } else { text.to_string() };
            match mark {
                " " | "+" => {
                    (after_lines.next()? == text).then_some(())?;
                    at += 1;
                    if mark == " " {
                        before.push_str(&text);
                    }
                }
                "-" => before.push_str(&text),
                _ => {}
            }
            lines.next();
        }
    }
    after_lines.for_each(|rest| before.push_str(rest));
    Some(before)
}

/// `+added -removed` line counts of a unified diff, for the model's summary.
pub fn diff_stat(diff: &str) -> (usize, usize) {
    diff.lines().fold((0, 0), |(added, removed), line| {
        if line.starts_with("+++") || line.starts_with("---") {
            (added, removed)
        } else if line.starts_with('+') {
            (added + 1, removed)
        } else if line.starts_with('-') {
            (added, removed + 1)
        } else {
            (added, removed)
        }
    })
}

/// The workspace-relative POSIX path, for messages and events.
pub fn shown(rel: &Path) -> String {
    let text = rel.to_string_lossy().replace('\\', "/");
    if text.is_empty() {
        ".".into()
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diffs_name_both_sides_and_dev_null_for_creation() {
        let d = unified_diff(Path::new("src/a.rs"), Some("one\ntwo\n"), Some("one\nthree\n"));
        assert!(d.starts_with("--- a/src/a.rs\n+++ b/src/a.rs\n@@ -1,2 +1,2 @@\n one\n-two\n+three\n"), "{d}");
        assert_eq!(diff_stat(&d), (1, 1));
        let created = unified_diff(Path::new("new.txt"), None, Some("hi\n"));
        assert!(created.starts_with("--- /dev/null\n+++ b/new.txt\n"), "{created}");
    }

    #[test]
    fn the_text_before_comes_back_from_the_text_after_and_the_diff() {
        let many: String = (1..=40).map(|i| format!("line {i}\n")).collect();
        let edited = many.replace("line 3\n", "three\n").replace("line 30\n", "").replace("line 40\n", "line 40");
        let cases: [(Option<&str>, Option<&str>); 8] = [
            (Some("a\r\nb\r\n"), Some("a\r\nc\r\n")),
            (Some("one\ntwo\n"), Some("one\nthree\n")),
            (Some(&many), Some(&edited)),
            (Some(&edited), Some(&many)),
            (Some("a\nb"), Some("a\nb\n")),
            (Some("gone\n"), None),
            (Some(""), Some("x\n")),
            (Some("x\ny\n"), Some("")),
        ];
        for (old, new) in cases {
            let diff = unified_diff(Path::new("f"), old, new);
            assert_eq!(text_before(new, &diff).as_deref(), old, "{diff}");
        }
        assert_eq!(text_before(Some("hi\n"), &unified_diff(Path::new("f"), None, Some("hi\n"))), None);
        // The file moved on since: no old side is made up.
        let diff = unified_diff(Path::new("f"), Some("one\ntwo\n"), Some("one\nthree\n"));
        assert_eq!(text_before(Some("one\nfour\n"), &diff), None);
    }
}
