//! Keeping grep hits per walker thread, and merging the threads' hits at the end.
//!
//! A thread keeps whole files in a max-heap by path and drops the last file as soon as the
//! files before it already hold `max_results` lines: those lines all sort first, so the
//! dropped file cannot reach the output. Each thread therefore holds at most `max_results`
//! lines plus one file's worth, and the heap works per file, not per line.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::super::path_order;
use super::{GrepHit, GrepHits};

/// The kept lines of one file: (1-based line number, cut text), in line order.
#[derive(Debug)]
pub(super) struct FileHits {
    pub(super) path: String,
    pub(super) lines: Vec<(u64, String)>,
}

impl Ord for FileHits {
    fn cmp(&self, other: &Self) -> Ordering {
        path_order(&self.path, &other.path)
    }
}

impl PartialOrd for FileHits {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for FileHits {
    fn eq(&self, other: &Self) -> bool {
        self.path == other.path
    }
}

impl Eq for FileHits {}

/// What one walker thread found.
#[derive(Debug, Default)]
pub(super) struct ThreadResults {
    kept: BinaryHeap<FileHits>,
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
            self.kept.peek().map(|file| file.path.as_str())
        } else {
            None
        }
    }

    /// Keeps a file's lines, then drops files that can no longer make the first
    /// `max_results`.
    pub(super) fn keep(&mut self, file: FileHits, max_results: usize) {
        self.kept_lines += file.lines.len();
        self.kept.push(file);
        while let Some(last) = self.kept.peek() {
            let without_last = self.kept_lines - last.lines.len();
            if without_last < max_results {
                break;
            }
            self.kept_lines = without_last;
            self.kept.pop();
        }
    }
}

/// Sums the threads' counts and keeps the first `max_results` lines in (path, line) order.
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
    // One sort of at most (threads x max_results) files, each compared by path once per step.
    files.sort_unstable();
    'files: for file in files {
        for (line, text) in file.lines {
            if out.hits.len() == max_results {
                break 'files;
            }
            out.hits.push(GrepHit { path: file.path.clone(), line, text });
        }
    }
    out.truncated = out.total_matches > out.hits.len();
    out
}
