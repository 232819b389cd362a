//! One rule for every large output (bash, grep, MCP; not read_file, which pages): keep the head
//! and the tail, cut on character boundaries, and save the whole output to
//! `<data-dir>/tool-output/<session>/<call>.txt`, saying where, so the model can page through it
//! with `read_file`.

use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// Characters of output shown to the model before the rest is offloaded.
pub const DEFAULT_MAX_CHARS: usize = 30_000;

/// Head and tail of `text` within `max_chars` characters, with the count of characters left out.
pub fn head_and_tail(text: &str, max_chars: usize) -> (String, usize) {
    let total = text.chars().count();
    if total <= max_chars {
        return (text.to_string(), 0);
    }
    let head_chars = max_chars / 2;
    let tail_chars = max_chars - head_chars;
    let head_end = text.char_indices().nth(head_chars).map(|(i, _)| i).unwrap_or(text.len());
    let tail_start = text.char_indices().nth(total - tail_chars).map(|(i, _)| i).unwrap_or(text.len());
    let omitted = total - head_chars - tail_chars;
    (format!("{}{}{}", &text[..head_end], marker(omitted), &text[tail_start..]), omitted)
}

fn marker(omitted: usize) -> String {
    format!("\n\n[... {omitted} characters omitted ...]\n\n")
}

/// The same rule for a file too large to load: reads at most about `max_chars * 4` bytes from
/// each end, never splitting a UTF-8 character. Returns the text and whether anything was left out.
pub fn head_and_tail_of_file(path: &Path, max_chars: usize) -> io::Result<(String, bool)> {
    let mut file = std::fs::File::open(path)?;
    let len = file.metadata()?.len();
    let budget = (max_chars as u64) * 4;
    if len <= budget {
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)?;
        let text = String::from_utf8_lossy(&bytes);
        let (shown, omitted) = head_and_tail(&text, max_chars);
        return Ok((shown, omitted > 0));
    }
    let half = budget / 2;
    let mut head = vec![0; half as usize];
    file.read_exact(&mut head)?;
    file.seek(SeekFrom::Start(len - half))?;
    let mut tail = vec![0; half as usize];
    file.read_exact(&mut tail)?;
    let head = String::from_utf8_lossy(trim_partial_end(&head)).into_owned();
    let tail = String::from_utf8_lossy(trim_partial_start(&tail)).into_owned();
    let head: String = head.chars().take(max_chars / 2).collect();
    let tail_count = tail.chars().count();
    let tail: String = tail.chars().skip(tail_count.saturating_sub(max_chars - max_chars / 2)).collect();
    let omitted_bytes = len - (head.len() + tail.len()) as u64;
    Ok((format!("{head}\n\n[... about {omitted_bytes} bytes omitted ...]\n\n{tail}"), true))
}

/// Drops a UTF-8 sequence cut at the end of `bytes`.
fn trim_partial_end(bytes: &[u8]) -> &[u8] {
    let start = bytes.len().saturating_sub(4);
    for i in (start..bytes.len()).rev() {
        let b = bytes[i];
        if b & 0xC0 != 0x80 {
            let width = if b < 0x80 {
                1
            } else if b >= 0xF0 {
                4
            } else if b >= 0xE0 {
                3
            } else {
                2
            };
            return if i + width <= bytes.len() { bytes } else { &bytes[..i] };
        }
    }
    bytes
}

/// Drops continuation bytes at the start of `bytes` (the rest of a character cut before it).
fn trim_partial_start(bytes: &[u8]) -> &[u8] {
    let skip = bytes.iter().take(3).take_while(|b| **b & 0xC0 == 0x80).count();
    &bytes[skip..]
}

/// Where the whole output of `call_id` is saved.
pub fn offload_path(tool_output_dir: &Path, call_id: &str) -> PathBuf {
    tool_output_dir.join(format!("{call_id}.txt"))
}

/// Saves `text` in full and returns the bounded text for the model with a note saying where the
/// rest is; small outputs are returned as they are and saved nowhere.
pub fn bound(
    text: &str,
    tool_output_dir: &Path,
    call_id: &str,
    max_chars: usize,
) -> io::Result<(String, Option<PathBuf>)> {
    let (shown, omitted) = head_and_tail(text, max_chars);
    if omitted == 0 {
        return Ok((shown, None));
    }
    std::fs::create_dir_all(tool_output_dir)?;
    let path = offload_path(tool_output_dir, call_id);
    std::fs::write(&path, text)?;
    Ok((format!("{shown}\n{}", saved_note(&path)), Some(path)))
}

/// The note telling the model where the whole output is.
pub fn saved_note(path: &Path) -> String {
    format!("[the whole output is saved in {}; page through it with read_file and start_line]", path.display())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn short_text_is_untouched() {
        assert_eq!(head_and_tail("héllo", 5), ("héllo".to_string(), 0));
    }

    #[test]
    fn long_text_keeps_head_and_tail_by_characters() {
        let text = "é".repeat(10) + &"ü".repeat(10);
        let (shown, omitted) = head_and_tail(&text, 6);
        assert_eq!(omitted, 14);
        assert!(shown.starts_with("ééé\n\n[... 14 characters omitted ...]\n\nüüü"), "{shown}");
    }

    #[test]
    fn a_huge_file_is_cut_without_splitting_characters() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.txt");
        let text = "α".repeat(100_000) + "END";
        std::fs::write(&path, &text).unwrap();
        let (shown, cut) = head_and_tail_of_file(&path, 1000).unwrap();
        assert!(cut);
        assert!(shown.starts_with(&"α".repeat(500)));
        assert!(shown.ends_with("END"));
        assert!(!shown.contains('\u{FFFD}'), "no broken characters");
    }

    #[test]
    fn bound_offloads_the_whole_output() {
        let dir = tempfile::tempdir().unwrap();
        let text: String = (0..5000).map(|i| format!("line {i}\n")).collect();
        let (shown, path) = bound(&text, &dir.path().join("s1"), "call-1", 1000).unwrap();
        let path = path.unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
        assert!(shown.contains("line 0\n") && shown.contains("line 4999\n"));
        assert!(shown.ends_with(&saved_note(&path)));
        assert_eq!(bound("small", dir.path(), "c2", 1000).unwrap(), ("small".to_string(), None));
    }
}
