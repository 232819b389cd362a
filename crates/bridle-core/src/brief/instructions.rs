//! The project's instructions for agents: `AGENTS.md` (else `CLAUDE.md`) in the user's config
//! folder, then in the workspace root. Each is read through a size cap and named with its path.

use std::io::Read;
use std::path::{Path, PathBuf};

/// The file names looked for in each folder, the first found wins.
pub const INSTRUCTION_FILES: [&str; 2] = ["AGENTS.md", "CLAUDE.md"];

/// Bytes of one file put in the prompt; the rest is cut (and the cut said).
pub const INSTRUCTION_LIMIT: usize = 32 * 1024;

/// One instruction file in the brief.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstructionFile {
    /// Where it was read.
    pub path: String,
    /// Its text (up to the limit).
    pub text: String,
    /// Whether it was longer than the limit.
    pub truncated: bool,
    /// Its cost in the prompt, in tokens.
    pub tokens: u64,
}

/// The instruction files of `config_dir` (the user's own) and of `workspace`, in that order; a
/// folder holding neither adds nothing, and so does an unreadable or non-UTF-8 file.
pub fn load_instructions(config_dir: Option<&Path>, workspace: &Path) -> Vec<InstructionFile> {
    let mut folders: Vec<PathBuf> = config_dir.map(Path::to_path_buf).into_iter().collect();
    if !folders.iter().any(|f| f == workspace) {
        folders.push(workspace.to_path_buf());
    }
    folders.iter().filter_map(|folder| INSTRUCTION_FILES.iter().find_map(|name| read(&folder.join(name)))).collect()
}

fn read(path: &Path) -> Option<InstructionFile> {
    // A symlink out of the folder, a FIFO or a device is not an instruction file.
    let (file, _) = crate::fs::open_named(path).ok()?;
    let mut bytes = Vec::new();
    file.take(INSTRUCTION_LIMIT as u64 + 1).read_to_end(&mut bytes).ok()?;
    let truncated = bytes.len() > INSTRUCTION_LIMIT;
    bytes.truncate(INSTRUCTION_LIMIT);
    // Cut at a character boundary.
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) if truncated => {
            let valid = e.utf8_error().valid_up_to();
            let mut bytes = e.into_bytes();
            bytes.truncate(valid);
            String::from_utf8(bytes).ok()?
        }
        Err(_) => return None,
    };
    let tokens = crate::compaction::count_text_tokens(&text);
    Some(InstructionFile { path: path.display().to_string(), text, truncated, tokens })
}
