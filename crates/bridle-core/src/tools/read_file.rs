//! `read_file`: a page of a text file, streamed so a huge file is never loaded whole.
//!
//! Rules: raw text, no line numbers added; a page is at most 50 KB and ends at a whole line
//! (a single longer line is cut at a character boundary and says so); the result names the next
//! `start_line` when there is more; binary files are described, not dumped; UTF-8, UTF-16 with a
//! BOM, else lossy UTF-8. The session's own saved tool outputs are readable too. Only a regular
//! file is read: a FIFO, a socket or a device is refused by name without blocking, and the open
//! happens on the blocking thread that reads, so nothing here holds the call past its timeout.

use std::io::{BufRead, BufReader, Read};

use async_trait::async_trait;
use bridle_protocol::{ClientKind, TextEncoding, ToolDetails};
use serde::Deserialize;

use super::files::{fs_error, on_blocking_thread, resolve};
use super::{quoted, Tool, ToolContext, ToolError, ToolKind, ToolOutput};
use crate::sandbox::{Access, Place};

/// Most bytes of text in one page.
pub const PAGE_BYTES: usize = 50 * 1024;
/// Files up to this size get their total line count even when the page ends early.
const COUNT_LINES_UP_TO: u64 = 64 * 1024 * 1024;
/// UTF-16 files up to this size are decoded (they cannot be streamed line by line cheaply).
const UTF16_MAX: u64 = 16 * 1024 * 1024;

/// Reads a text file of the workspace, or a page of it. Lines are 1-based and inclusive; without
/// them the file is read from the start. Output is the file's raw text without line numbers; a
/// long file comes in pages of at most 50 KB, each ending with the `start_line` of the next page.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadFileArgs {
    /// The file, relative to the workspace root (or absolute inside it).
    pub path: String,
    /// First line to read (1-based).
    #[serde(default)]
    pub start_line: Option<u64>,
    /// Last line to read (inclusive).
    #[serde(default)]
    pub end_line: Option<u64>,
}

/// The `read_file` tool.
pub struct ReadFile;

#[async_trait]
impl Tool for ReadFile {
    type Args = ReadFileArgs;
    const NAME: &'static str = "read_file";
    const KIND: ToolKind = ToolKind::Read;
    const CLIENT_KIND: ClientKind = ClientKind::Read;

    fn title(args: &Self::Args) -> String {
        format!("Read {}", quoted(&args.path))
    }

    fn paths(args: &Self::Args) -> Vec<(String, Access)> {
        vec![(args.path.clone(), Access::Read)]
    }

    async fn run(&self, args: &Self::Args, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let (start, end_line) = (args.start_line.unwrap_or(1).max(1), args.end_line);
        if let Some(end) = args.end_line {
            if end < start {
                return Err(ToolError::new(format!("end_line {end} is before start_line {start}")));
            }
        }
        let resolved = resolve(ctx, &args.path, Access::Read)?;
        let shown = resolved.display();
        let lock = ctx.workspace.locks.read(&resolved.absolute).await;
        let (workspace, files) = (ctx.workspace.clone(), ctx.files().cloned());
        on_blocking_thread(move || {
            let file = match &resolved.place {
                Place::Workspace(rel) => {
                    let file = workspace.fs.open_read(rel).map_err(fs_error)?;
                    // What the session saw, stamped from the open file: a later change of it on
                    // disk makes the session's next edit of it stale.
                    if let (Some(files), Ok(meta)) = (&files, file.metadata()) {
                        files.saw(rel, Some(crate::fs::Stamp::of(&meta)));
                    }
                    file
                }
                Place::ToolOutput(_) => open_tool_output(&resolved.absolute)?,
            };
            let size = file.metadata().map(|m| m.len()).unwrap_or(0);
            let page = read_page(file, size, start, end_line, &shown);
            drop(lock);
            // A `.env`-style file's secret values become known to the audit (DESIGN §7).
            if let Ok(page) = &page {
                crate::redact::learn_file(&shown, &page.output);
            }
            page
        })
        .await
    }
}

/// A saved tool output (outside the workspace, so not beneath its handle), opened as a
/// workspace file is.
fn open_tool_output(absolute: &std::path::Path) -> Result<std::fs::File, ToolError> {
    crate::fs::open_named(absolute).map(|(file, _)| file).map_err(fs_error)
}

fn read_page(
    file: std::fs::File,
    size: u64,
    start: u64,
    end: Option<u64>,
    shown: &str,
) -> Result<ToolOutput, ToolError> {
    let mut reader = BufReader::with_capacity(64 * 1024, file);
    let head = reader.fill_buf().map_err(|e| ToolError::new(format!("cannot read {shown}: {e}")))?.to_vec();
    if head.starts_with(&[0xFF, 0xFE]) || head.starts_with(&[0xFE, 0xFF]) {
        return read_utf16(reader, size, start, end, shown);
    }
    if head.iter().take(8192).any(|b| *b == 0) {
        return Ok(ToolOutput {
            output: format!("{shown} is a binary file ({size} bytes); its content is not shown."),
            details: Some(ToolDetails::Binary { size }),
            ..ToolOutput::default()
        });
    }
    let mut page = Page::new(start, end);
    let mut line_no = 0u64;
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let n = reader.read_until(b'\n', &mut buf).map_err(|e| ToolError::new(format!("cannot read {shown}: {e}")))?;
        if n == 0 {
            break;
        }
        line_no += 1;
        if line_no == 1 && buf.starts_with(&[0xEF, 0xBB, 0xBF]) {
            buf.drain(..3);
        }
        if !page.take(line_no, &String::from_utf8_lossy(&buf)) {
            break;
        }
    }
    let total = if page.stopped_early {
        // Count the rest cheaply when the file is not huge, so the model knows how far it is.
        (size <= COUNT_LINES_UP_TO).then(|| count_rest(&mut reader, line_no, &buf)).flatten()
    } else {
        Some(line_no)
    };
    Ok(page.finish(shown, total, None))
}

/// Lines after the `seen` ones, counted without keeping them; `last` is the line read last
/// (already counted). A final line without a newline counts too.
fn count_rest(reader: &mut BufReader<std::fs::File>, seen: u64, last: &[u8]) -> Option<u64> {
    if !last.ends_with(b"\n") {
        // The last line read had no newline: it was the end of the file.
        return Some(seen);
    }
    let mut count = seen;
    let mut unterminated = false;
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        let n = reader.read(&mut chunk).ok()?;
        if n == 0 {
            break;
        }
        count += chunk[..n].iter().filter(|b| **b == b'\n').count() as u64;
        unterminated = chunk[n - 1] != b'\n';
    }
    Some(count + u64::from(unterminated))
}

fn read_utf16(
    mut reader: BufReader<std::fs::File>,
    size: u64,
    start: u64,
    end: Option<u64>,
    shown: &str,
) -> Result<ToolOutput, ToolError> {
    if size > UTF16_MAX {
        return Err(ToolError::new(format!("{shown} is a UTF-16 file of {size} bytes, too large to decode here")));
    }
    let mut bytes = Vec::new();
    reader.read_to_end(&mut bytes).map_err(|e| ToolError::new(format!("cannot read {shown}: {e}")))?;
    let little = bytes.starts_with(&[0xFF, 0xFE]);
    let units: Vec<u16> = bytes[2..]
        .chunks_exact(2)
        .map(|p| if little { u16::from_le_bytes([p[0], p[1]]) } else { u16::from_be_bytes([p[0], p[1]]) })
        .collect();
    let text = String::from_utf16_lossy(&units);
    let mut page = Page::new(start, end);
    let mut line_no = 0u64;
    for line in text.split_inclusive('\n') {
        line_no += 1;
        if !page.take(line_no, line) {
            break;
        }
    }
    let total = text.split_inclusive('\n').count() as u64;
    let encoding = if little { TextEncoding::Utf16Le } else { TextEncoding::Utf16Be };
    Ok(page.finish(shown, Some(total), Some(encoding)))
}

/// Collects the lines of one page.
struct Page {
    start: u64,
    end: Option<u64>,
    text: String,
    first: Option<u64>,
    last: u64,
    stopped_early: bool,
    cut_line: bool,
}

impl Page {
    fn new(start: u64, end: Option<u64>) -> Self {
        Self { start, end, text: String::new(), first: None, last: 0, stopped_early: false, cut_line: false }
    }

    /// Offers line `n`; false when the page is full or past `end`.
    fn take(&mut self, n: u64, line: &str) -> bool {
        if n < self.start {
            return true;
        }
        if self.end.is_some_and(|end| n > end) {
            self.stopped_early = true;
            return false;
        }
        if self.text.len() + line.len() > PAGE_BYTES {
            if self.first.is_none() {
                // One line longer than a page: show its start, cut on a character boundary.
                let mut cut = PAGE_BYTES;
                while !line.is_char_boundary(cut) {
                    cut -= 1;
                }
                self.text.push_str(&line[..cut]);
                self.first = Some(n);
                self.last = n;
                self.cut_line = true;
            }
            self.stopped_early = true;
            return false;
        }
        self.text.push_str(line);
        self.first.get_or_insert(n);
        self.last = n;
        true
    }

    fn finish(self, shown: &str, total: Option<u64>, encoding: Option<TextEncoding>) -> ToolOutput {
        let Some(first) = self.first else {
            let output = match total {
                Some(0) => format!("{shown} is empty."),
                Some(t) => format!("{shown} has {t} lines; there is nothing at line {}.", self.start),
                None => format!("There is nothing at line {} of {shown}.", self.start),
            };
            return ToolOutput {
                output,
                details: Some(ToolDetails::Read {
                    total_lines: total,
                    start_line: None,
                    end_line: None,
                    truncated: false,
                    encoding,
                }),
                ..ToolOutput::default()
            };
        };
        let mut output = self.text;
        let more = self.stopped_early && total.is_none_or(|t| self.last < t);
        if self.cut_line {
            output.push_str(&format!("\n\n[line {} is longer than {PAGE_BYTES} bytes and was cut here]", self.last));
        }
        if more && self.end.is_none_or(|end| end > self.last) {
            let of = total.map(|t| format!(" of {t}")).unwrap_or_default();
            output.push_str(&format!(
                "\n\n[showing lines {first}-{}{of}; continue with start_line={}]",
                self.last,
                self.last + 1
            ));
        }
        ToolOutput {
            output,
            details: Some(ToolDetails::Read {
                total_lines: total,
                start_line: Some(first),
                end_line: Some(self.last),
                truncated: more,
                encoding,
            }),
            ..ToolOutput::default()
        }
    }
}

#[cfg(test)]
mod tests;
