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
}
