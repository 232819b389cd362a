//! Parsing patches as models and tools write them: the format is told from the text
//! ([`super::codex`] for `*** Begin Patch`), and unified diffs are read here.
//!
//! Tolerated in unified diffs: text before, between and after files (`diff --git`, `index`,
//! mode lines, prose), timestamps after the paths, quoted paths, CRLF patch text, hunk headers
//! without line numbers (`@@`, `@@ ... @@`), wrong line counts, an empty line standing for an
//! empty context line, and git's rename and copy headers, with or without hunks. In both formats,
//! a shell heredoc around the patch (`apply_patch <<'EOF'` ... `EOF`), copied from an example, is
//! taken off. Not tolerated: a line without ' ', '-' or '+' inside a hunk (before its counts are
//! met, or with more hunk lines after it), since skipping it would drop changes silently.

use super::{FilePatch, Format, Hunk, HunkLine, HunkRange, PatchError};

/// Parses `text` into its files, in order.
pub fn parse_patch(text: &str) -> Result<Vec<FilePatch>, PatchError> {
    let text = text.strip_suffix('\n').unwrap_or(text);
    let lines: Vec<&str> = text.split('\n').map(|line| line.strip_suffix('\r').unwrap_or(line)).collect();
    let (first, lines) = without_heredoc(&lines);
    if super::codex::looks_like(lines) {
        return super::codex::parse(lines, first);
    }
    parse_unified(lines).map_err(|e| match e {
        PatchError::Malformed { format, line, message } => {
            PatchError::Malformed { format, line: line + first, message }
        }
        other => other,
    })
}

/// The lines inside a heredoc wrapper (`<cmd> <<'EOF'` first, `EOF` last), with how many lines
/// were taken off the top; the lines as they are otherwise.
fn without_heredoc<'a, 'b>(lines: &'b [&'a str]) -> (usize, &'b [&'a str]) {
    let first = lines.iter().position(|line| !line.trim().is_empty()).unwrap_or(0);
    let last = lines.iter().rposition(|line| !line.trim().is_empty()).unwrap_or(0);
    let Some((_, word)) = lines.get(first).and_then(|line| line.split_once("<<")) else { return (0, lines) };
    let word = word.trim().trim_start_matches('-').trim_matches(|c| c == '\'' || c == '"');
    if word.is_empty() || last <= first || lines[last].trim() != word {
        return (0, lines);
    }
    (first + 1, &lines[first + 1..last])
}

/// A `diff --git` block's rename or copy, met before (or instead of) its `---`/`+++` lines.
#[derive(Default)]
struct Moved {
    from: Option<String>,
    to: Option<String>,
    copy: bool,
}

impl Moved {
    /// A rename or copy with no `---`/`+++` lines after it: the file moves as it is.
    fn alone(self) -> Option<FilePatch> {
        Some(FilePatch { old_path: Some(self.from?), new_path: Some(self.to?), hunks: Vec::new(), copy: self.copy })
    }
}

fn parse_unified(lines: &[&str]) -> Result<Vec<FilePatch>, PatchError> {
    let mut files: Vec<FilePatch> = Vec::new();
    let mut moved: Option<Moved> = None;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if line.starts_with("diff --git ") {
            files.extend(moved.take().and_then(Moved::alone));
            moved = Some(Moved::default());
            i += 1;
        } else if let Some(git) = moved.as_mut().filter(|_| is_move_line(line)) {
            let (what, path) = line.split_once(' ').map_or((line, ""), |(w, rest)| (w, rest));
            let (side, path) = path.split_once(' ').map_or(("", path), |(s, p)| (s, p));
            let path = Some(unquote(path.trim()));
            git.copy |= what == "copy";
            match side {
                "from" => git.from = path,
                _ => git.to = path,
            }
            i += 1;
        } else if is_file_header(lines, i) {
            let old_path = parse_path(&lines[i][4..], "a/");
            let new_path = parse_path(&lines[i + 1][4..], "b/");
            if old_path.is_none() && new_path.is_none() {
                return Err(malformed(i, "both --- and +++ are /dev/null; name the file on at least one side"));
            }
            let copy = moved.take().is_some_and(|git| git.copy);
            files.push(FilePatch { old_path, new_path, hunks: Vec::new(), copy });
            i += 2;
        } else if lines[i].starts_with("@@") {
            let Some(file) = files.last_mut() else {
                return Err(malformed(i, HUNK_BEFORE_HEADER));
            };
            let (hunk, next) = parse_hunk(lines, i)?;
            file.hunks.push(hunk);
            i = next;
        } else {
            i += 1;
        }
    }
    files.extend(moved.and_then(Moved::alone));
    if files.is_empty() {
        return Err(PatchError::NoFiles);
    }
    Ok(files)
}

/// `rename from x`, `rename to y`, `copy from x`, `copy to y`.
fn is_move_line(line: &str) -> bool {
    ["rename from ", "rename to ", "copy from ", "copy to "].iter().any(|start| line.starts_with(start))
}

const HUNK_BEFORE_HEADER: &str = "a hunk (@@) comes before any file header; start each file \
    with `--- a/<path>` and `+++ b/<path>`";
const NOT_A_HUNK_LINE: &str = "is inside a hunk but does not start with ' ' (context), '-' \
    (removed) or '+' (added)";

fn malformed(index: usize, message: &str) -> PatchError {
    PatchError::Malformed { format: Format::Unified, line: index + 1, message: message.to_string() }
}

fn is_file_header(lines: &[&str], i: usize) -> bool {
    lines[i].starts_with("--- ") && lines.get(i + 1).is_some_and(|next| next.starts_with("+++ "))
}

/// A `---`/`+++` path: timestamp and quotes removed, `prefix` stripped, `None` for /dev/null.
fn parse_path(raw: &str, prefix: &str) -> Option<String> {
    let raw = raw.split_once('\t').map_or(raw, |(path, _)| path);
    let raw = strip_timestamp(raw).trim();
    let path = unquote(raw);
    if path == "/dev/null" {
        return None;
    }
    Some(path.strip_prefix(prefix).map(str::to_string).unwrap_or(path))
}

/// Cuts ` 2024-01-31 10:00:00 ...` from a path written without a tab before its timestamp.
fn strip_timestamp(raw: &str) -> &str {
    for (at, _) in raw.match_indices(' ') {
        let rest = &raw.as_bytes()[at + 1..];
        let date = rest.len() >= 10
            && rest[..4].iter().all(u8::is_ascii_digit)
            && rest[4] == b'-'
            && rest[5..7].iter().all(u8::is_ascii_digit)
            && rest[7] == b'-';
        if date {
            return &raw[..at];
        }
    }
    raw
}

/// Git's C-style quoting: `"a\tb"`, `"caf\303\251"`.
pub(super) fn unquote(raw: &str) -> String {
    let Some(inner) = raw.strip_prefix('"').and_then(|rest| rest.strip_suffix('"')) else {
        return raw.to_string();
    };
    let mut bytes = Vec::with_capacity(inner.len());
    let mut chars = inner.bytes().peekable();
    while let Some(byte) = chars.next() {
        if byte != b'\\' {
            bytes.push(byte);
            continue;
        }
        match chars.next() {
            Some(b't') => bytes.push(b'\t'),
            Some(b'n') => bytes.push(b'\n'),
            Some(b'r') => bytes.push(b'\r'),
            Some(digit @ b'0'..=b'7') => {
                let mut value = u32::from(digit - b'0');
                for _ in 0..2 {
                    match chars.peek() {
                        Some(&d @ b'0'..=b'7') => {
                            value = value * 8 + u32::from(d - b'0');
                            chars.next();
                        }
                        _ => break,
                    }
                }
                bytes.push(u8::try_from(value).unwrap_or(b'?'));
            }
            Some(other) => bytes.push(other),
            None => bytes.push(b'\\'),
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// `@@ -3,4 +3,5 @@ fn name`: both ranges, or neither for a header without numbers (`@@`,
/// `@@ ... @@`): the numbers are only hints anyway.
fn parse_ranges(line: &str, index: usize) -> Result<(Option<HunkRange>, Option<HunkRange>), PatchError> {
    let inner = line[2..].split("@@").next().unwrap_or("").trim();
    if !inner.starts_with('-') {
        return Ok((None, None));
    }
    let bad = || malformed(index, &format!("the hunk header `{line}` should look like `@@ -12,5 +12,6 @@`"));
    let mut parts = inner.split_whitespace();
    let old = parts.next().and_then(|part| part.strip_prefix('-')).and_then(parse_range).ok_or_else(bad)?;
    let new = parts.next().and_then(|part| part.strip_prefix('+')).and_then(parse_range).ok_or_else(bad)?;
    Ok((Some(old), Some(new)))
}

fn parse_range(text: &str) -> Option<HunkRange> {
    let (start, len) = match text.split_once(',') {
        Some((start, len)) => (start.parse().ok()?, len.parse().ok()?),
        None => (text.parse().ok()?, 1),
    };
    Some(HunkRange { start, len })
}

/// Whether hunk lines follow before the next header: then a foreign line was a slip inside
/// the hunk (a context line missing its space), not the text after it.
fn hunk_resumes(rest: &[&str]) -> bool {
    rest.iter()
        .take_while(|line| !["@@", "diff ", "--- ", "+++ "].iter().any(|header| line.starts_with(header)))
        .any(|line| line.starts_with([' ', '-', '+']))
}

/// The hunk whose header is `lines[start]`, and the index of the line after it.
fn parse_hunk(lines: &[&str], start: usize) -> Result<(Hunk, usize), PatchError> {
    let (old, new) = parse_ranges(lines[start], start)?;
    let mut hunk = Hunk { old, new, ..Hunk::of(Vec::new()) };
    let (mut old_count, mut new_count) = (0usize, 0usize);
    // Empty lines at the end may be the blank lines between files, not context; see below.
    let mut bare_tail = 0usize;
    let mut i = start + 1;
    while i < lines.len() && !lines[i].starts_with("@@") && !lines[i].starts_with("diff ") && !is_file_header(lines, i)
    {
        let line = lines[i];
        let (kind, text) = match line.chars().next() {
            None => (' ', ""),
            Some(kind @ (' ' | '-' | '+')) => (kind, &line[1..]),
            Some('\\') => {
                match hunk.lines.last() {
                    Some(HunkLine::Remove(_)) => hunk.old_missing_newline = true,
                    Some(HunkLine::Add(_)) => hunk.new_missing_newline = true,
                    Some(HunkLine::Context(_)) => {
                        hunk.old_missing_newline = true;
                        hunk.new_missing_newline = true;
                    }
                    None => {}
                }
                i += 1;
                continue;
            }
            Some(_) => {
                let counts_unmet = matches!((old, new),
                    (Some(old), Some(new)) if old_count < old.len || new_count < new.len);
                if counts_unmet || hunk_resumes(&lines[i + 1..]) {
                    return Err(malformed(i, &format!("`{line}` {NOT_A_HUNK_LINE}")));
                }
                break;
            }
        };
        bare_tail = if line.is_empty() { bare_tail + 1 } else { 0 };
        match kind {
            '-' => {
                old_count += 1;
                hunk.lines.push(HunkLine::Remove(text.to_string()));
            }
            '+' => {
                new_count += 1;
                hunk.lines.push(HunkLine::Add(text.to_string()));
            }
            _ => {
                old_count += 1;
                new_count += 1;
                hunk.lines.push(HunkLine::Context(text.to_string()));
            }
        }
        i += 1;
    }
    // Trailing empty lines beyond the header's counts (or all of them, without counts) are the
    // gap before the next file or the end of the text.
    while bare_tail > 0 {
        let beyond = match (old, new) {
            (Some(old), Some(new)) => old_count > old.len || new_count > new.len,
            _ => true,
        };
        if !beyond {
            break;
        }
        hunk.lines.pop();
        old_count -= 1;
        new_count -= 1;
        bare_tail -= 1;
    }
    if hunk.lines.is_empty() {
        let message = "the hunk has no lines; each line after @@ starts with ' ' (context), '-' \
            (removed) or '+' (added)";
        return Err(malformed(start, message));
    }
    Ok((hunk, i))
}
