//! `list_files`: the entries under a directory, a few levels deep, ignore rules honoured.
//!
//! When there are more entries than the limit, the shallowest are kept first (then path
//! order), so a truncated listing still shows the whole top level rather than the depths of
//! whichever directory sorts first.

use std::path::Path;

pub use bridle_protocol::Listing;

use super::{check_dir, path_order, rel_path, render_lines, truncation_note, walker, Render, SearchError, Tree};

/// How many entries a listing looks at before it stops counting; past this the total is
/// reported as unknown rather than walking an arbitrarily large tree.
const SCAN_CAP: usize = 100_000;

/// Lists the entries under `dir` (a directory inside `root`) down to `depth` levels
/// (`Some(1)`: direct children only; `None`: no limit; `Some(0)` is read as 1), keeping at
/// most `limit` of them. Symbolic links are listed as plain entries and never descended.
pub fn list_files<'a>(
    tree: impl Into<Tree<'a>>,
    dir: &Path,
    depth: Option<usize>,
    limit: usize,
) -> Result<Listing, SearchError> {
    let tree = tree.into();
    let root = tree.root;
    check_dir(root, dir)?;
    let mut builder = walker(tree, dir, None);
    builder
        .max_depth(depth.map(|d| d.max(1)))
        // Sorted per directory so that the scan (and what a capped scan sees) is stable.
        .sort_by_file_name(|a, b| a.cmp(b));

    // (depth, path, is_dir)
    let mut found: Vec<(usize, String, bool)> = Vec::new();
    let mut complete = true;
    for entry in builder.build() {
        // An unreadable subdirectory is left out, as `rg --files` does; the rest still lists.
        let Ok(entry) = entry else { continue };
        if entry.depth() == 0 {
            continue;
        }
        if found.len() == SCAN_CAP {
            complete = false;
            break;
        }
        let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
        found.push((entry.depth(), rel_path(root, entry.path()), is_dir));
    }

    let seen = found.len();
    let truncated = seen > limit || !complete;
    if seen > limit {
        found.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| path_order(&a.1, &b.1)));
        found.truncate(limit);
    }
    found.sort_by(|a, b| path_order(&a.1, &b.1));
    let entries = found
        .into_iter()
        .map(|(_, mut path, is_dir)| {
            if is_dir {
                path.push('/');
            }
            path
        })
        .collect();
    Ok(Listing { entries, truncated, total: complete.then_some(seen) })
}

/// The text the model reads: one entry per line, then a note when truncated.
impl Render for Listing {
    fn render(&self) -> String {
        render_lines(&self.entries, self.truncated, "(no entries)", || {
            truncation_note(self.entries.len(), self.total, "entries", "narrow the path or lower the depth")
        })
    }
}
