//! `glob_search`: files under a directory whose path matches a glob, ignore rules honoured.
//!
//! The glob is matched against the path relative to the searched directory (`base`), the
//! way a shell or `fd` reads it, and hits are reported relative to the workspace root:
//! `*.rs` under `src` finds `src/lib.rs` but not `src/tools/mod.rs`; `**/*.rs` finds both.
//! `*` and `?` never cross a `/` (`literal_separator`), `**` spans directories, and
//! `{a,b}` and `[...]` work as in globset.

use std::path::Path;

pub use bridle_protocol::GlobHits;
use globset::{GlobBuilder, GlobMatcher};

use super::{check_dir, path_order, rel_path, render_lines, truncation_note, walker, Render, SearchError, Tree};

/// Finds regular files under `base` (a directory inside `root`) whose `base`-relative path
/// matches `pattern`, keeping the first `limit` in path order. Directories and symbolic
/// links are never reported; a leading `./` in the pattern is ignored.
pub fn glob_search<'a>(
    tree: impl Into<Tree<'a>>,
    base: &Path,
    pattern: &str,
    limit: usize,
) -> Result<GlobHits, SearchError> {
    let tree = tree.into();
    let root = tree.root;
    let matcher = compile(pattern)?;
    check_dir(root, base)?;
    let mut builder = walker(tree, base, None);
    // Walking each directory in name order visits paths in exactly `path_order`, so the
    // first `limit` hits are the ones to keep and the rest need only be counted.
    builder.sort_by_file_name(|a, b| a.cmp(b));

    let mut files = Vec::new();
    let mut total = 0usize;
    for entry in builder.build() {
        let Ok(entry) = entry else { continue };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let Ok(rel) = entry.path().strip_prefix(base) else { continue };
        if !matcher.is_match(rel) {
            continue;
        }
        total += 1;
        if files.len() < limit {
            files.push(rel_path(root, entry.path()));
        }
    }
    // Already in order by construction; sorting the kept few guards against a sorter change.
    files.sort_by(|a, b| path_order(a, b));
    Ok(GlobHits { truncated: total > files.len(), files, total })
}

/// Compiles the glob, or names what is wrong with it.
fn compile(pattern: &str) -> Result<GlobMatcher, SearchError> {
    let trimmed = pattern.trim();
    let trimmed = trimmed.strip_prefix("./").unwrap_or(trimmed);
    if trimmed.is_empty() {
        return Err(SearchError::InvalidGlob {
            pattern: pattern.to_string(),
            message: "the pattern is empty; try `**/*` for every file".to_string(),
        });
    }
    GlobBuilder::new(trimmed)
        .literal_separator(true)
        .build()
        .map(|glob| glob.compile_matcher())
        .map_err(|err| SearchError::InvalidGlob { pattern: pattern.to_string(), message: err.kind().to_string() })
}

/// The text the model reads: one path per line, then a note when truncated.
impl Render for GlobHits {
    fn render(&self) -> String {
        render_lines(&self.files, self.truncated, "(no files matched)", || {
            truncation_note(self.files.len(), Some(self.total), "files", "narrow the pattern or path")
        })
    }
}
