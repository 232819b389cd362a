//! Keeping grep hits per walker thread, and merging the threads' hits at the end.
//!
//! A thread keeps whole files in a max-heap by path and drops the last file as soon as the
//! files before it already hold `max_results` lines: those lines all sort first, so the
//! dropped file cannot reach the output. Each thread therefore holds at most `max_results`
//! lines plus one file's worth, and the heap works per file, not per line.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::super::path_order;
use super::{GrepFile, GrepHits};

/// A file's hits, ordered by path alone (paths are unique within one search).
#[derive(Debug)]
struct ByPath(GrepFile);

impl Ord for ByPath {
    fn cmp(&self, other: &Self) -> Ordering {
        path_order(&self.0.path, &other.0.path)
    }
}

impl PartialOrd for ByPath {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for ByPath {
    fn eq(&self, other: &Self) -> bool {
        self.0.path == other.0.path
    }
}

impl Eq for ByPath {}

/// What one walker thread found.
#[derive(Debug, Default)]
pub(super) struct ThreadResults {
    kept: BinaryHeap<ByPath>,
    kept_lines: usize,
    pub(super) total: usize,
    pub(super) files_matched: usize,
    pub(super) skipped_large: usize,
    pub(super) skipped_binary: usize,
    pub(super) unreadable: usize,
}

impl ThreadResults {
    /// Once the kept lines fill `max_results`, the greatest kept path: a file sorting at or
    /// after it cannot contribute.
    pub(super) fn kept_max_path(&self, max_results: usize) -> Option<&str> {
        if self.kept_lines >= max_results {
            self.kept.peek().map(|file| file.0.path.as_str())
        } else {
            None
        }
    }

    /// Keeps a file's lines, then drops files that can no longer make the first
    /// `max_results`.
    pub(super) fn keep(&mut self, file: GrepFile, max_results: usize) {
        self.kept_lines += file.lines.len();
        self.kept.push(ByPath(file));
        while let Some(last) = self.kept.peek() {
            let without_last = self.kept_lines - last.0.lines.len();
            if without_last < max_results {
                break;
            }
            self.kept_lines = without_last;
            self.kept.pop();
        }
    }
}

/// Sums the threads' counts and keeps the first `max_results` lines in (path, line) order.
/// Files move into the result whole; only the last one kept may be cut short.
pub(super) fn merge(results: Vec<ThreadResults>, max_results: usize) -> GrepHits {
    let mut out = GrepHits::default();
    let mut files = Vec::new();
    for result in results {
        out.total_matches += result.total;
        out.files_matched += result.files_matched;
        out.skipped_large += result.skipped_large;
        out.skipped_binary += result.skipped_binary;
        out.unreadable += result.unreadable;
        files.extend(result.kept.into_vec());
    }
    // One sort of at most (threads x max_results) files.
    files.sort_unstable();
    let mut room = max_results;
    for ByPath(mut file) in files {
        if room == 0 {
            break;
        }
        file.lines.truncate(room);
        room -= file.lines.len();
        out.files.push(file);
    }
    out.truncated = out.total_matches > max_results - room;
    out
}
