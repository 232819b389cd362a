//! The folders skills are found in, read through the one door ([`crate::fs`]): each skill is a
//! folder holding `SKILL.md`; its other files are its resources.
//!
//! Rules: nothing is followed through a symbolic link (a skill folder or a `SKILL.md` that is a
//! link is reported, not read); a `SKILL.md` is read up to [`SKILL_LIMIT`] bytes, never past it;
//! a resource list is bounded in depth and length.

use std::path::{Path, PathBuf};

use crate::fs::{Entry, WorkspaceFs};

/// The most bytes of one `SKILL.md` read; a longer one is malformed.
pub const SKILL_LIMIT: u64 = 256 * 1024;
/// The most resources listed for one skill.
const RESOURCE_LIMIT: usize = 200;
/// How deep below the skill's folder resources are listed.
const RESOURCE_DEPTH: usize = 4;

/// A folder of skill folders: `base` opened as a handle, `rel` the folder beneath it (so a
/// workspace's `.agents/skills` is reached without following a link on the way).
pub(super) struct Root {
    pub base: PathBuf,
    pub rel: PathBuf,
}

/// One skill folder's `SKILL.md`, read (or why not).
pub(super) struct Read {
    /// The folder's name.
    pub folder: String,
    /// The skill's folder, absolute.
    pub dir: PathBuf,
    /// Its `SKILL.md`, absolute.
    pub path: PathBuf,
    /// The bytes, or why they were not read.
    pub bytes: Result<Vec<u8>, String>,
}

impl Root {
    /// Every skill folder beneath this root, sorted by name; a root that is missing has none.
    pub fn read(&self) -> Vec<Read> {
        let Ok(fs) = WorkspaceFs::open(&self.base) else { return Vec::new() };
        let Ok(Some(names)) = fs.names(&self.rel) else { return Vec::new() };
        let mut found = Vec::new();
        for name in names {
            let Some(folder) = name.to_str().filter(|n| !n.starts_with('.')) else { continue };
            let rel = self.rel.join(folder);
            let skill_md = rel.join("SKILL.md");
            let (dir, path) = (self.base.join(&rel), self.base.join(&skill_md));
            let bytes = match fs.entry(&rel) {
                Ok(Some(Entry::Folder { .. })) => read_skill_md(&fs, &skill_md),
                // A link to a folder outside reads as an error here (cap-std refuses to read an
                // absolute target): either way it is a link, and not followed.
                Ok(Some(Entry::Link(_))) => {
                    Err("the skill's folder is a symbolic link; Bridle does not follow links to skills".into())
                }
                Err(e) => Err(format!(
                    "the skill's folder is a symbolic link or cannot be read without following one ({e}); Bridle does not follow links to skills"
                )),
                Ok(_) => continue,
            };
            if matches!(&bytes, Err(e) if e.is_empty()) {
                continue;
            }
            found.push(Read { folder: folder.to_string(), dir, path, bytes });
        }
        found
    }
}

/// The `SKILL.md` at `rel`; `Err("")` when there is none (the folder is no skill).
fn read_skill_md(fs: &WorkspaceFs, rel: &Path) -> Result<Vec<u8>, String> {
    match fs.entry(rel) {
        Ok(Some(Entry::File { .. })) => {}
        Ok(Some(Entry::Link(_))) => return Err("SKILL.md is a symbolic link; Bridle does not follow it".into()),
        Ok(Some(_)) => return Err("SKILL.md is not a regular file".into()),
        Ok(None) => return Err(String::new()),
        Err(e) => return Err(e.to_string()),
    }
    match fs.read_at_most(rel, SKILL_LIMIT) {
        Ok(Some(bytes)) => Ok(bytes),
        Ok(None) => Err(String::new()),
        Err(e) => Err(format!("SKILL.md could not be read: {e}")),
    }
}

/// The files of the skill folder `dir` other than `SKILL.md`, relative to it, sorted; links are
/// not followed and not listed.
pub(super) fn resources(dir: &Path) -> Vec<String> {
    let Ok(fs) = WorkspaceFs::open(dir) else { return Vec::new() };
    let mut out = Vec::new();
    let mut stack = vec![(PathBuf::new(), 0)];
    while let Some((rel, depth)) = stack.pop() {
        let Ok(Some(names)) = fs.names(&rel) else { continue };
        for name in names {
            let Some(name) = name.to_str() else { continue };
            let path = rel.join(name);
            match fs.entry(&path) {
                Ok(Some(Entry::File { .. })) if path != Path::new("SKILL.md") => {
                    out.push(path.to_string_lossy().into_owned())
                }
                Ok(Some(Entry::Folder { .. })) if depth + 1 < RESOURCE_DEPTH && !name.starts_with('.') => {
                    stack.push((path, depth + 1))
                }
                _ => {}
            }
            if out.len() >= RESOURCE_LIMIT {
                out.sort();
                return out;
            }
        }
    }
    out.sort();
    out
}
