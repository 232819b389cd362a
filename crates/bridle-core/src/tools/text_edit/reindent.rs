//! Re-indentation of replacement lines found by a whitespace-tolerant match.
//!
//! The rule this keeps: the model's *relative* indentation survives and the file's *absolute*
//! indentation and style win. `old_text`'s base indentation maps to the matched lines' base,
//! one indent step of the model's (tab, or its most common space step) becomes one step of the
//! file's, and tabs or spaces are written as the file uses them. When the model's indentation
//! already equals the file's on every matched line, lines pass through untouched.

/// Columns a tab stands for when tabs and spaces have to be compared.
const TAB_WIDTH: usize = 4;

/// Leading spaces and tabs (only these count as indentation).
pub(crate) fn indentation(line: &str) -> &str {
    &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
}

fn width(indent: &str) -> usize {
    indent.chars().fold(0, |col, c| if c == '\t' { col / TAB_WIDTH * TAB_WIDTH + TAB_WIDTH } else { col + 1 })
}

fn is_blank(line: &str) -> bool {
    line.trim().is_empty()
}

/// The indent step of space-indented lines: the most common increase between consecutive
/// non-blank lines (smaller wins a tie), or `None` when no line is deeper than the one before.
fn space_step(groups: &[&[&str]]) -> Option<usize> {
    let mut counts = [0usize; 9];
    for lines in groups {
        let mut previous: Option<usize> = None;
        for line in lines.iter().filter(|line| !is_blank(line)) {
            let indent = indentation(line);
            if indent.contains('\t') {
                previous = None;
                continue;
            }
            let current = indent.len();
            if let Some(before) = previous {
                if current > before && current - before <= 8 {
                    counts[current - before] += 1;
                }
            }
            previous = Some(current);
        }
    }
    let (step, count) =
        counts.iter().enumerate().skip(1).fold((0, 0), |best, (step, &n)| if n > best.1 { (step, n) } else { best });
    (count > 0).then_some(step)
}

fn uses_tabs(lines: &[&str]) -> Option<bool> {
    let (mut tabs, mut spaces) = (0usize, 0usize);
    for line in lines.iter().filter(|line| !is_blank(line)) {
        match indentation(line).chars().next() {
            Some('\t') => tabs += 1,
            Some(_) => spaces += 1,
            None => {}
        }
    }
    (tabs + spaces > 0).then_some(tabs > spaces)
}

/// The file's own indentation style (tabs or spaces, its space step) near an edit, read once and
/// kept for every match of the same edit: `replace_all` re-indents thousands of matches, and
/// reading the lines around each would cost the window once per match.
#[derive(Debug, Default)]
pub(crate) struct FileStyle(Option<(Option<bool>, Option<usize>)>);

impl FileStyle {
    fn of(&mut self, file: &[&str]) -> (Option<bool>, Option<usize>) {
        *self.0.get_or_insert_with(|| (uses_tabs(file), space_step(&[file])))
    }
}

/// How to move a line from the model's indentation to the file's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Reindent {
    plan: Option<Plan>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Plan {
    /// Model indent width -> file indent width, as seen on the matched lines; sorted, and the
    /// first pairing of a width wins.
    seen: Vec<(usize, usize)>,
    old_step: usize,
    file_step: usize,
    file_tabs: bool,
}

impl Reindent {
    /// `old` and `matched` are the model's old lines and the file lines they matched, pairwise;
    /// `new` are the lines to insert; `file` is the whole file, for its indentation style.
    pub(crate) fn new(old: &[&str], new: &[&str], matched: &[&str], file: &[&str]) -> Self {
        Self::in_style(old, new, matched, file, &mut FileStyle::default())
    }

    /// [`Self::new`] with the file's style read once into `style` for a batch of matches.
    pub(crate) fn in_style(old: &[&str], new: &[&str], matched: &[&str], file: &[&str], style: &mut FileStyle) -> Self {
        let pairs: Vec<(&str, &str)> = old
            .iter()
            .zip(matched)
            .filter(|(line, _)| !is_blank(line))
            .map(|(o, m)| (indentation(o), indentation(m)))
            .collect();
        if pairs.iter().all(|(o, m)| o == m) {
            return Reindent { plan: None };
        }
        let mut seen: Vec<(usize, usize)> = Vec::new();
        for (o, m) in &pairs {
            let key = width(o);
            if !seen.iter().any(|(w, _)| *w == key) {
                seen.push((key, width(m)));
            }
        }
        seen.sort_unstable();
        let model_tabs = uses_tabs(old).or_else(|| uses_tabs(new)).unwrap_or(false);
        let old_step = if model_tabs { TAB_WIDTH } else { space_step(&[old, new]).unwrap_or(4) };
        let file_tabs = uses_tabs(matched).or_else(|| style.of(file).0).unwrap_or(false);
        let file_step =
            if file_tabs { TAB_WIDTH } else { space_step(&[matched]).or_else(|| style.of(file).1).unwrap_or(old_step) };
        Reindent { plan: Some(Plan { seen, old_step, file_step, file_tabs }) }
    }

    /// One line of the replacement, in the file's indentation.
    pub(crate) fn line(&self, line: &str) -> String {
        let Some(plan) = &self.plan else {
            return line.to_string();
        };
        if is_blank(line) {
            return String::new();
        }
        let indent = indentation(line);
        let mut out = render(plan.target(width(indent)), plan.file_tabs);
        out.push_str(&line[indent.len()..]);
        out
    }
}

impl Plan {
    /// The file width for a model width: as seen, or stepped from the nearest seen width
    /// (below if there is one), so steps scale and alignment spaces are kept.
    fn target(&self, model: usize) -> usize {
        let below = self.seen.iter().rev().find(|(w, _)| *w <= model);
        let Some(&(from, to)) = below.or_else(|| self.seen.first()) else {
            return model;
        };
        let delta = model as isize - from as isize;
        let step = self.old_step.max(1) as isize;
        let target = to as isize + delta.div_euclid(step) * self.file_step as isize + delta.rem_euclid(step);
        target.max(0) as usize
    }
}

fn render(width: usize, tabs: bool) -> String {
    if tabs {
        let mut s = "\t".repeat(width / TAB_WIDTH);
        s.push_str(&" ".repeat(width % TAB_WIDTH));
        s
    } else {
        " ".repeat(width)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use pretty_assertions::assert_eq;

    use super::*;

    fn run(old: &[&str], new: &[&str], matched: &[&str], file: &[&str]) -> Vec<String> {
        let plan = Reindent::new(old, new, matched, file);
        new.iter().map(|line| plan.line(line)).collect()
    }

    #[test]
    fn same_indentation_passes_lines_through() {
        let lines = ["  a", "    b"];
        assert_eq!(run(&lines, &["  x ", "\ty"], &lines, &lines), vec!["  x ", "\ty"]);
    }

    #[test]
    fn spaces_to_tabs_keep_relative_depth() {
        let old = ["fn a() {", "    one();", "}"];
        let matched = ["\tfn a() {", "\t\tone();", "\t}"];
        let new = ["fn a() {", "    if x {", "        two();", "    }", "", "}"];
        assert_eq!(
            run(&old, &new, &matched, &matched),
            vec!["\tfn a() {", "\t\tif x {", "\t\t\ttwo();", "\t\t}", "", "\t}"]
        );
    }

    #[test]
    fn shallow_model_text_moves_deeper_with_the_files_step() {
        let old = ["if x {", "  y();", "}"];
        let matched = ["        if x {", "            y();", "        }"];
        let new = ["if x {", "  y();", "  z();", "}", "w();"];
        assert_eq!(
            run(&old, &new, &matched, &matched),
            vec!["        if x {", "            y();", "            z();", "        }", "        w();"]
        );
    }

    #[test]
    fn tabs_to_spaces_and_dedent_below_base() {
        let old = ["\t\tx();"];
        let matched = ["    x();"];
        let file = ["fn f() {", "    x();", "}"];
        assert_eq!(
            run(&old, &["\t\tx();", "\ty();", "\t\t\tz();"], &matched, &file),
            vec!["    x();", "y();", "        z();"]
        );
    }

    #[test]
    fn alignment_spaces_beyond_a_step_are_kept() {
        let old = ["a(b,", "  c)"];
        let matched = ["\ta(b,", "\t  c)"];
        assert_eq!(run(&old, &["a(b,", "  c,", "  d)"], &matched, &matched), vec!["\ta(b,", "\t  c,", "\t  d)"]);
    }
}
