//! The source the grep tests read: the non-test Rust of every crate and of the shell, and the
//! window's TypeScript, each line with its number.
//!
//! Rule: tests are left out the same way for every reader — `tests.rs`, `*_tests.rs`, `tests/`
//! folders and inline `#[cfg(test)] mod` blocks; `node_modules` and the generated bindings are
//! never read as the window's own code.

use std::path::{Path, PathBuf};

fn files(dir: &Path, ext: &[&str], out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n != "node_modules") {
                files(&path, ext, out);
            }
        } else if path.extension().is_some_and(|e| ext.iter().any(|x| e == *x)) {
            out.push(path);
        }
    }
}

/// The lines of `file` before its inline `#[cfg(test)] mod` block, numbered from 1.
pub(super) fn code_lines(file: &Path) -> Vec<(usize, String)> {
    let text = std::fs::read_to_string(file).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut code = Vec::new();
    for (n, line) in lines.iter().enumerate() {
        let inline_tests = line.trim() == "#[cfg(test)]"
            && lines
                .get(n + 1)
                .is_some_and(|next| next.trim_start().starts_with("mod ") && next.trim_end().ends_with('{'));
        if inline_tests {
            break;
        }
        code.push((n + 1, line.to_string()));
    }
    code
}

/// The non-test Rust files of Bridle's crates, by their path below `crates/` (or the repository
/// for the shell), with their paths.
pub(super) fn source_files() -> Vec<(String, PathBuf)> {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for krate in ["bridle-core", "bridle-cli", "bridle-app", "bridle-protocol", "../src-tauri"] {
        let src = crates.join(krate).join("src");
        if src.is_dir() {
            self::files(&src, &["rs"], &mut files);
        }
    }
    files
        .into_iter()
        .map(|file| (file.strip_prefix(&crates).unwrap().to_string_lossy().replace('\\', "/"), file))
        .filter(|(rel, file)| {
            let name = file.file_name().unwrap().to_string_lossy();
            !(name == "tests.rs" || name.ends_with("_tests.rs") || rel.contains("/tests/"))
        })
        .collect()
}

/// The window's own TypeScript (`ui/src`, the generated bindings aside), by its path below
/// `ui/src`, with its paths.
pub(super) fn ui_files() -> Vec<(String, PathBuf)> {
    let ui = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ui/src");
    let mut found = Vec::new();
    files(&ui, &["ts", "tsx"], &mut found);
    found
        .into_iter()
        .map(|file| (file.strip_prefix(&ui).unwrap().to_string_lossy().replace('\\', "/"), file))
        .filter(|(rel, _)| !rel.starts_with("api/bindings/"))
        .collect()
}
