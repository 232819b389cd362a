//! `grep_search`: lines matching a regex, found the way ripgrep finds them.
//!
//! Files come from `ignore`'s parallel walker and are searched with `grep-searcher`
//! (line-oriented, binary files abandoned at the first NUL byte, as `rg` does when it walks
//! a tree). Each walker thread keeps its own results and hands them over once, when it
//! finishes; the merge then sorts by (path, line), so the output does not depend on thread
//! scheduling. Only the hits that can still make the first `max_results` are kept, so memory
//! stays bounded however many lines match, while `total_matches` counts them all. Hits are
//! grouped per file, so a path is stored once however many of its lines match.

use std::io;
use std::path::Path;
use std::sync::{Mutex, PoisonError};

pub use bridle_protocol::{GrepFile, GrepHits, GrepLine};
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkMatch};
use ignore::overrides::{Override, OverrideBuilder};
use ignore::{DirEntry, ParallelVisitor, ParallelVisitorBuilder, WalkState};

use super::{check_under_root, rel_path, truncation_note, walker, Render, SearchError, Tree};

mod collect;

use collect::ThreadResults;

/// What to search for and how much to keep.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrepOptions {
    /// A regular expression (Rust `regex` syntax, as `rg` takes it).
    pub pattern: String,
    /// Only files matching this glob, in `rg --glob` dialect: `*.rs` matches at any depth,
    /// a glob with a `/` is anchored at the searched path, a leading `!` excludes. It narrows
    /// the search; it never brings back ignored or VCS files.
    pub glob: Option<String>,
    /// Match without regard to case.
    pub case_insensitive: bool,
    /// How many matching lines to return at most.
    pub max_results: usize,
    /// Files larger than this many bytes are skipped (and counted).
    pub max_file_size: u64,
    /// Each returned line is cut to this many characters.
    pub max_line_chars: usize,
}

impl GrepOptions {
    /// Options for `pattern` with the tool's defaults: 100 results, files up to 10 MiB,
    /// lines cut at 500 characters, case-sensitive, no glob.
    pub fn new(pattern: impl Into<String>) -> Self {
        Self {
            pattern: pattern.into(),
            glob: None,
            case_insensitive: false,
            max_results: 100,
            max_file_size: 10 * 1024 * 1024,
            max_line_chars: 500,
        }
    }
}

/// Searches the files under `base` (a file or directory inside `root`) for lines matching
/// `opts.pattern`. Symbolic links are not followed; ignored, hidden-VCS and binary files are
/// not searched.
pub fn grep_search<'a>(tree: impl Into<Tree<'a>>, base: &Path, opts: &GrepOptions) -> Result<GrepHits, SearchError> {
    let tree = tree.into();
    let root = tree.root;
    let matcher = RegexMatcherBuilder::new()
        .case_insensitive(opts.case_insensitive)
        // Lets the matcher search whole buffers and never match across a line break.
        .line_terminator(Some(b'\n'))
        .build(&opts.pattern)
        .map_err(|err| SearchError::InvalidRegex { pattern: opts.pattern.clone(), message: err.to_string() })?;
    let filter = match opts.glob.as_deref().map(str::trim) {
        Some(glob) if !glob.is_empty() => Some(glob_filter(base, glob)?),
        _ => None,
    };
    check_under_root(root, base)?;

    let finished = Mutex::new(Vec::new());
    let mut visitors = VisitorBuilder { root, opts, matcher: &matcher, finished: &finished };
    walker(tree, base, filter).build_parallel().visit(&mut visitors);
    let results = finished.into_inner().unwrap_or_else(PoisonError::into_inner);
    Ok(collect::merge(results, opts.max_results))
}

/// Builds the `--glob`-style filter, rooted at the searched directory.
fn glob_filter(base: &Path, glob: &str) -> Result<Override, SearchError> {
    let invalid = |err: ignore::Error| SearchError::InvalidGlob {
        pattern: glob.to_string(),
        message: match err {
            ignore::Error::Glob { err, .. } => err,
            other => other.to_string(),
        },
    };
    let mut builder = OverrideBuilder::new(base);
    builder.add(glob).map_err(invalid)?;
    builder.build().map_err(invalid)
}

struct VisitorBuilder<'s> {
    root: &'s Path,
    opts: &'s GrepOptions,
    matcher: &'s RegexMatcher,
    finished: &'s Mutex<Vec<ThreadResults>>,
}

impl<'s> ParallelVisitorBuilder<'s> for VisitorBuilder<'s> {
    fn build(&mut self) -> Box<dyn ParallelVisitor + 's> {
        Box::new(Visitor {
            root: self.root,
            opts: self.opts,
            matcher: self.matcher.clone(),
            searcher: SearcherBuilder::new().binary_detection(BinaryDetection::quit(b'\x00')).line_number(true).build(),
            results: ThreadResults::default(),
            lines: Vec::new(),
            finished: self.finished,
        })
    }
}

/// One walker thread's searcher and results.
struct Visitor<'s> {
    root: &'s Path,
    opts: &'s GrepOptions,
    matcher: RegexMatcher,
    searcher: Searcher,
    results: ThreadResults,
    /// The current file's kept lines.
    lines: Vec<GrepLine>,
    finished: &'s Mutex<Vec<ThreadResults>>,
}

impl ParallelVisitor for Visitor<'_> {
    fn visit(&mut self, entry: Result<DirEntry, ignore::Error>) -> WalkState {
        // A directory the walker could not read is skipped, as `rg` does.
        if let Ok(entry) = entry {
            if entry.file_type().is_some_and(|t| t.is_file()) {
                self.search(&entry);
            }
        }
        WalkState::Continue
    }
}

impl Visitor<'_> {
    fn search(&mut self, entry: &DirEntry) {
        // The size is taken from the opened file (one fstat, which also refuses a file swapped
        // for a FIFO or a device since the walk saw it), so it is the size of what would be
        // read, and the walk itself needs no extra stat per file.
        let Some((file, meta)) = crate::fs::open_named(entry.path()).ok() else {
            self.results.unreadable += 1;
            return;
        };
        // Another name of a hard-linked file may be outside the workspace: not read, as
        // read_file refuses it.
        if std::os::unix::fs::MetadataExt::nlink(&meta) > 1 {
            self.results.unreadable += 1;
            return;
        }
        let size = meta.len();
        if size > self.opts.max_file_size {
            self.results.skipped_large += 1;
            return;
        }
        // A file whose path sorts after everything this thread already keeps can only be
        // counted; its lines are not copied.
        let mut path = None;
        let keep = match self.results.kept_max_path(self.opts.max_results) {
            Some(max) => {
                let rel = rel_path(self.root, entry.path());
                let keep = super::path_order(&rel, max).is_lt();
                path = Some(rel);
                keep
            }
            None => true,
        };
        self.lines.clear();
        let mut sink = LineSink {
            keep: if keep { self.opts.max_results } else { 0 },
            max_line_chars: self.opts.max_line_chars,
            lines: &mut self.lines,
            count: 0,
            binary: false,
        };
        if self.searcher.search_file(&self.matcher, &file, &mut sink).is_err() {
            self.results.unreadable += 1;
            return;
        }
        let (count, binary) = (sink.count, sink.binary);
        if binary {
            self.results.skipped_binary += 1;
        } else if count > 0 {
            self.results.total += count;
            self.results.files_matched += 1;
            if !self.lines.is_empty() {
                let path = path.unwrap_or_else(|| rel_path(self.root, entry.path()));
                let lines = std::mem::take(&mut self.lines);
                self.results.keep(GrepFile { path, lines }, self.opts.max_results);
            }
        }
    }
}

impl Drop for Visitor<'_> {
    fn drop(&mut self) {
        // A poisoned lock only means another thread panicked mid-push; the data is whole.
        let mut finished = self.finished.lock().unwrap_or_else(PoisonError::into_inner);
        finished.push(std::mem::take(&mut self.results));
    }
}

/// Counts one file's matching lines and keeps the first `keep` of them, cut.
struct LineSink<'a> {
    keep: usize,
    max_line_chars: usize,
    lines: &'a mut Vec<GrepLine>,
    count: usize,
    binary: bool,
}

impl Sink for LineSink<'_> {
    type Error = io::Error;

    fn matched(&mut self, _: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, io::Error> {
        // Line-oriented search reports one line per match, but a multi-line report would
        // still be counted line by line.
        let first = mat.line_number().unwrap_or(0);
        for (offset, line) in mat.lines().enumerate() {
            self.count += 1;
            if self.lines.len() < self.keep {
                self.lines.push(GrepLine { line: first + offset as u64, text: cut_line(line, self.max_line_chars) });
            }
        }
        Ok(true)
    }

    fn binary_data(&mut self, _: &Searcher, _offset: u64) -> Result<bool, io::Error> {
        self.binary = true;
        Ok(false)
    }
}

/// The line without its terminator, at most `max_chars` characters, decoded lossily; a cut
/// is marked with `… [+N chars]`. Never splits a character.
fn cut_line(line: &[u8], max_chars: usize) -> String {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.len() <= max_chars {
        // No more bytes than allowed characters: nothing to cut, no need to count.
        return String::from_utf8_lossy(line).into_owned();
    }
    // No character is longer than 4 bytes, so this prefix holds the first `max_chars + 1`
    // characters; decoding only it keeps a multi-megabyte minified line cheap.
    let prefix = &line[..line.len().min(max_chars.saturating_add(1).saturating_mul(4))];
    let text = String::from_utf8_lossy(prefix);
    match text.char_indices().nth(max_chars) {
        None => text.into_owned(),
        Some((cut, _)) => {
            // Counting non-continuation bytes counts characters without decoding the rest
            // (exact for UTF-8, an estimate for anything else).
            let total = line.iter().filter(|b| (**b & 0xC0) != 0x80).count();
            let rest = total.saturating_sub(max_chars);
            format!("{}… [+{rest} chars]", &text[..cut])
        }
    }
}

/// The text the model reads: `path:line:text` per hit (like `rg -n` without colour), then notes
/// on truncation and skipped files.
impl Render for GrepHits {
    fn render(&self) -> String {
        let mut lines: Vec<String> = self.hits().map(|(path, line, text)| format!("{path}:{line}:{text}")).collect();
        if lines.is_empty() && !self.truncated {
            lines.push("(no matches)".to_string());
        }
        if self.truncated {
            let note =
                truncation_note(lines.len(), Some(self.total_matches), "matching lines", "narrow the pattern or path");
            lines.push(note);
        }
        if self.skipped_large > 0 {
            lines.push(format!("({} files over the size limit were not searched)", self.skipped_large));
        }
        lines.join("\n")
    }
}
