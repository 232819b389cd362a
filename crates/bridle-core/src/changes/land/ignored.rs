//! Which paths a command's layer writes through without checkpoints: what `.gitignore`,
//! `.ignore` or `.git/info/exclude` ignore (the deepest file that names a path decides, as in
//! git), and the scratch folders.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::Match;

/// The workspace's ignore files, read as they are needed.
pub(super) struct Rules {
    root: PathBuf,
    scratch: Vec<String>,
    /// Each folder's rules (`None`: it has no ignore file).
    folders: HashMap<PathBuf, Option<Gitignore>>,
}

impl Rules {
    pub(super) fn new(root: &Path, scratch: &[String]) -> Self {
        Self { root: root.to_path_buf(), scratch: scratch.to_vec(), folders: HashMap::new() }
    }

    /// Whether `rel` (a folder when `is_dir`) is ignored.
    pub(super) fn ignores(&mut self, rel: &Path, is_dir: bool) -> bool {
        let first = rel.components().next().map(|c| c.as_os_str().to_string_lossy().into_owned());
        if first.is_some_and(|f| self.scratch.contains(&f)) {
            return true;
        }
        let mut ignored = false;
        let mut folder = PathBuf::new();
        let parents: Vec<_> = rel.parent().map(|p| p.components().collect()).unwrap_or_default();
        for step in std::iter::once(None).chain(parents.into_iter().map(Some)) {
            if let Some(c) = step {
                folder.push(c);
            }
            let Some(rules) = self.folder(&folder) else { continue };
            let Ok(inner) = rel.strip_prefix(&folder) else { continue };
            match rules.matched_path_or_any_parents(inner, is_dir) {
                Match::Ignore(_) => ignored = true,
                Match::Whitelist(_) => ignored = false,
                Match::None => {}
            }
        }
        ignored
    }

    fn folder(&mut self, folder: &Path) -> Option<&Gitignore> {
        let root = &self.root;
        self.folders
            .entry(folder.to_path_buf())
            .or_insert_with(|| {
                let at = root.join(folder);
                let mut builder = GitignoreBuilder::new(&at);
                let mut any = false;
                let mut files = vec![at.join(".gitignore"), at.join(".ignore")];
                if folder.as_os_str().is_empty() {
                    files.push(at.join(".git/info/exclude"));
                }
                for file in files {
                    if file.is_file() {
                        any |= builder.add(&file).is_none();
                    }
                }
                any.then(|| builder.build().ok()).flatten()
            })
            .as_ref()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_deepest_ignore_file_decides_and_scratch_folders_are_ignored() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(".gitignore"), "*.log\nout/\n").unwrap();
        std::fs::create_dir(dir.path().join("keep")).unwrap();
        std::fs::write(dir.path().join("keep/.gitignore"), "!important.log\n").unwrap();
        let mut rules = Rules::new(dir.path(), &["target".to_string()]);
        assert!(rules.ignores(Path::new("a.log"), false));
        assert!(rules.ignores(Path::new("out/x/y.txt"), false));
        assert!(rules.ignores(Path::new("target/debug/app"), false));
        assert!(!rules.ignores(Path::new("keep/important.log"), false));
        assert!(rules.ignores(Path::new("keep/other.log"), false));
        assert!(!rules.ignores(Path::new("src/main.rs"), false));
    }
}
