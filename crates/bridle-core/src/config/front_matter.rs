//! The YAML front matter of a Markdown file the user or a project writes (a skill's
//! `SKILL.md`, a role's `.agents/roles/NAME.md`): the text between the opening `---` line and
//! the closing one, and the body after it.
//!
//! Rule: text only — what the YAML says is its reader's to check.

/// The YAML before the closing `---` line and the body after it.
pub fn split_front_matter(rest: &str) -> Option<(&str, &str)> {
    let mut at = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            return Some((&rest[..at], &rest[at + line.len()..]));
        }
        at += line.len();
    }
    None
}
