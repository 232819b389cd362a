//! What a command changed when its changes cannot be captured (a background process, DESIGN
//! §4.4): a scan of every file's stamp before it started and after it ended, compared.
//!
//! Rule: the list names what changed and how, nothing more — no content is kept, so it cannot be
//! undone, and the caller says so. Paths ignored by `.gitignore` (build output) and `.git/` are
//! not scanned; past [`MAX_FILES`] the scan stops and says it is partial.

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt as _;
use std::path::Path;

use super::ChangeKind;

/// Most files one scan looks at.
pub const MAX_FILES: usize = 200_000;

/// Every file's stamp under a root at one moment.
#[derive(Debug, Default)]
pub struct Scan {
    files: HashMap<String, (i64, i64, u64, u64, u32)>,
    partial: bool,
}

/// One path a command changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScannedChange {
    /// Workspace-relative POSIX path.
    pub path: String,
    /// How it changed (a mode change is `Modified`).
    pub kind: ChangeKind,
}

impl ScannedChange {
    /// `path (created)`, for lists the model and the user read.
    pub fn shown(&self) -> String {
        let kind = match self.kind {
            ChangeKind::Created => "created",
            ChangeKind::Modified => "modified",
            ChangeKind::Deleted => "deleted",
        };
        format!("{} ({kind})", self.path)
    }
}

impl Scan {
    /// The stamps of the files under `root` now (symlinks as themselves, never followed).
    pub fn take(root: &Path) -> Scan {
        let mut scan = Scan::default();
        let walk = ignore::WalkBuilder::new(root)
            .hidden(false)
            .follow_links(false)
            .require_git(false)
            .filter_entry(|e| e.file_name() != ".git")
            .build();
        for entry in walk.flatten() {
            if entry.depth() == 0 || entry.file_type().is_some_and(|t| t.is_dir()) {
                continue;
            }
            if scan.files.len() >= MAX_FILES {
                scan.partial = true;
                break;
            }
            let Ok(meta) = entry.path().symlink_metadata() else { continue };
            let Ok(rel) = entry.path().strip_prefix(root) else { continue };
            let stamp = (meta.mtime(), meta.mtime_nsec(), meta.size(), meta.ino(), meta.mode());
            scan.files.insert(super::shown(rel), stamp);
        }
        scan
    }

    /// What differs between `self` (before) and `after`, by path; and whether either scan was
    /// partial (the list may then miss some).
    pub fn changes_until(&self, after: &Scan) -> (Vec<ScannedChange>, bool) {
        let mut changes: Vec<ScannedChange> = Vec::new();
        for (path, stamp) in &after.files {
            let kind = match self.files.get(path) {
                None => ChangeKind::Created,
                Some(before) if before != stamp => ChangeKind::Modified,
                Some(_) => continue,
            };
            changes.push(ScannedChange { path: path.clone(), kind });
        }
        for path in self.files.keys().filter(|p| !after.files.contains_key(*p)) {
            changes.push(ScannedChange { path: path.clone(), kind: ChangeKind::Deleted });
        }
        changes.sort_by(|a, b| a.path.cmp(&b.path));
        (changes, self.partial || after.partial)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn created_modified_deleted_and_mode_changes_are_listed_ignored_paths_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
        for name in ["keep.txt", "edit.txt", "gone.txt", "run.sh"] {
            std::fs::write(root.join(name), name).unwrap();
        }
        std::fs::create_dir(root.join("target")).unwrap();
        let before = Scan::take(root);
        std::fs::write(root.join("edit.txt"), "changed, longer").unwrap();
        std::fs::remove_file(root.join("gone.txt")).unwrap();
        std::fs::write(root.join("new.txt"), "x").unwrap();
        std::fs::write(root.join("target/out.o"), "x").unwrap();
        std::os::unix::fs::symlink("keep.txt", root.join("link")).unwrap();
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(root.join("run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
        let (changes, partial) = before.changes_until(&Scan::take(root));
        let shown: Vec<String> = changes.iter().map(ScannedChange::shown).collect();
        assert_eq!(
            shown,
            ["edit.txt (modified)", "gone.txt (deleted)", "link (created)", "new.txt (created)", "run.sh (modified)"]
        );
        assert!(!partial);
    }
}
