//! One door for Bridle's own file I/O (DESIGN §5): every file Bridle reads or writes for any
//! purpose goes through `fs/` (beneath the root, regular files only, never waiting, bounded, links
//! judged at use). The test reads the source of every crate and counts, file by file, the uses of
//! `std::fs` outside `fs/`; each file that has any is listed below with why it may (Bridle's own
//! data dir, `/proc`, its sandbox's set-up), and a new use anywhere fails by name.
//!
//! Tests are left out: `tests.rs`, `*_tests.rs`, `tests/` folders and inline `#[cfg(test)] mod`
//! blocks. Comments are not uses.

use std::collections::BTreeMap;
use std::path::Path;

use super::source::{code_lines, source_files};

/// Files that use `std::fs` outside `fs/`, how many lines, and why that is not a door.
const ALLOWED: &[(&str, usize, &str)] = &[
    ("bridle-cli/src/audit.rs", 1, "a session export the user names, read to check it (`audit verify --export`)"),
    ("bridle-cli/src/config.rs", 1, "the user's config file, read to say which settings it sets"),
    ("bridle-core/src/audit/head.rs", 5, "the audit head file in the data dir"),
    ("bridle-core/src/audit/log.rs", 4, "the audit database's folder and an export's temp file in the data dir"),
    ("bridle-core/src/changes/blobs.rs", 21, "checkpoint blobs in the data dir"),
    ("bridle-core/src/changes/layer.rs", 6, "a command's upper layer, Bridle's own folder, read without following"),
    ("bridle-core/src/changes/undo.rs", 1, "the session's tool-output folder in the data dir"),
    ("bridle-core/src/config/edit.rs", 9, "the user's config file, written atomically"),
    ("bridle-core/src/config/managed.rs", 1, "the managed policy file"),
    ("bridle-core/src/config/mod.rs", 1, "the user's config file"),
    ("bridle-core/src/settings.rs", 2, "the user's config file"),
    ("bridle-core/src/session_host/audit.rs", 1, "the exports folder in the data dir"),
    ("bridle-core/src/mcp/server.rs", 1, "/proc"),
    ("bridle-core/src/processes/group.rs", 4, "/proc"),
    ("bridle-core/src/sandbox/mod.rs", 1, "the path sandbox's own walk (no content read)"),
    ("bridle-core/src/shell_sandbox/child.rs", 1, "an inherited descriptor as a File"),
    ("bridle-core/src/shell_sandbox/landlock.rs", 1, "the rules' set-up: listing a folder's names"),
    ("bridle-core/src/shell_sandbox/overlay.rs", 13, "the layers' folders in the data dir"),
    ("bridle-core/src/shell_sandbox/pids.rs", 20, "cgroup files"),
    ("bridle-core/src/store/lease.rs", 2, "the lease file in the data dir"),
    ("bridle-core/src/tools/bash/capture.rs", 1, "a command's output file, already open"),
    ("bridle-core/src/tools/bash/mod.rs", 3, "a command's output file in the data dir"),
    ("bridle-core/src/tools/output.rs", 3, "saved tool outputs in the data dir"),
    ("bridle-core/src/tools/read_file.rs", 4, "the type of a handle fs/ opened"),
    ("bridle-core/src/tools/search/mod.rs", 1, "a walker's look before fs/ opens the file"),
    ("bridle-core/src/wiring.rs", 2, "the data dir and a new workspace folder, made"),
];

const PATTERNS: &[&str] = &["std::fs", "File::open", "File::create", "OpenOptions::new", ".read_dir("];
const FS_CALLS: &[&str] = &[
    "read",
    "write",
    "File",
    "OpenOptions",
    "metadata",
    "symlink_metadata",
    "read_dir",
    "read_link",
    "rename",
    "remove",
    "create_dir",
    "copy",
    "set_permissions",
    "canonicalize",
    "hard_link",
    "DirEntry",
    "Metadata",
    "Permissions",
];

/// Whether `line` (code, not a comment) uses `std::fs` by any spelling.
fn uses_fs(line: &str) -> bool {
    let code = line.trim_start();
    if code.starts_with("//") {
        return false;
    }
    // `needle` where it starts a path (`cap_std::fs` and `LockFile::open` are not it).
    let starts_path = |needle: &str| {
        code.match_indices(needle).any(|(at, _)| {
            let before = code[..at].chars().next_back();
            !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':')
        })
    };
    PATTERNS.iter().any(|p| if p.starts_with('.') { code.contains(p) } else { starts_path(p) })
        || FS_CALLS.iter().any(|call| starts_path(&format!("fs::{call}")))
}

/// Lines using `std::fs` in the non-test code of `file`.
fn uses_in(file: &Path) -> Vec<(usize, String)> {
    code_lines(file)
        .into_iter()
        .filter(|(_, line)| uses_fs(line))
        .map(|(n, line)| (n, line.trim().to_string()))
        .collect()
}

#[test]
fn bridle_reads_and_writes_files_only_through_fs_or_its_own_data() {
    let mut counted: BTreeMap<String, Vec<(usize, String)>> = BTreeMap::new();
    for (rel, file) in source_files() {
        if rel.starts_with("bridle-core/src/fs/") || rel.starts_with("../src-tauri/") {
            continue;
        }
        let uses = uses_in(&file);
        if !uses.is_empty() {
            counted.insert(rel, uses);
        }
    }
    let mut wrong = Vec::new();
    for (file, uses) in &counted {
        match ALLOWED.iter().find(|(allowed, _, _)| allowed == file) {
            Some((_, n, _)) if uses.len() <= *n => {}
            Some((_, n, why)) => wrong.push(format!("{file}: {} uses, {n} allowed ({why}): {uses:?}", uses.len())),
            None => wrong.push(format!("{file}: reads or writes by name, not through fs/: {uses:?}")),
        }
    }
    for (file, n, _) in ALLOWED {
        let now = counted.get(*file).map_or(0, Vec::len);
        if now < *n {
            wrong.push(format!("{file}: {now} uses now, {n} listed: lower the count"));
        }
    }
    assert!(wrong.is_empty(), "file I/O outside fs/:\n{}", wrong.join("\n"));
}

#[test]
fn the_counter_sees_every_spelling_and_no_comment() {
    for line in ["let f = std::fs::File::open(p)?;", "fs::read_to_string(p)", "File::create(&t)?", "x.read_dir()"] {
        assert!(uses_fs(line), "{line}");
    }
    for line in ["// std::fs::read", "crate::fs::open_named(p)", "cap_std::fs::Dir", "rustix::fs::openat("] {
        assert!(!uses_fs(line), "{line}");
    }
}
