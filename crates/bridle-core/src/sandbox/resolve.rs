//! Path arithmetic for the sandbox: `~` expansion, lexical normalisation, and resolving symlinks
//! through the longest existing prefix.

use std::io;
use std::path::{Component, Path, PathBuf};

/// `~`, `~/x`, `$HOME/x` and `${HOME}/x` become paths under `home`; anything else is unchanged.
pub(super) fn expand_home(given: &str, home: Option<&Path>) -> PathBuf {
    let Some(home) = home else { return PathBuf::from(given) };
    for prefix in ["~", "$HOME", "${HOME}"] {
        if given == prefix {
            return home.to_path_buf();
        }
        if let Some(rest) = given.strip_prefix(prefix).and_then(|r| r.strip_prefix('/')) {
            return home.join(rest);
        }
    }
    PathBuf::from(given)
}

/// Removes `.` and resolves `..` without touching the file system (`..` at the root stays at
/// the root, as the kernel does).
pub fn lexical_normalise(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            // At the root, `..` is the root itself (`/../etc` is `/etc`).
            Component::ParentDir if out.has_root() && out.parent().is_none() => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push(component);
                }
            }
            other => out.push(other),
        }
    }
    out
}

/// The absolute path with every symlink resolved: the longest existing prefix is canonicalised
/// by the kernel, the rest (which does not exist, so holds no symlink) is applied lexically.
pub(super) fn resolve_existing_prefix(path: &Path) -> io::Result<PathBuf> {
    let mut existing = path.to_path_buf();
    let mut rest = Vec::new();
    loop {
        match existing.canonicalize() {
            Ok(canonical) => {
                let mut full = canonical;
                for part in rest.iter().rev() {
                    full.push(part);
                }
                return Ok(lexical_normalise(&full));
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound || e.raw_os_error() == Some(20) => {
                // ENOENT, or ENOTDIR (a file used as a directory): step up one component.
                let Some(name) = existing.file_name().map(|n| n.to_os_string()) else {
                    // `..` or the root itself: fall back to lexical handling of what is left.
                    return Ok(lexical_normalise(path));
                };
                rest.push(name);
                if !existing.pop() {
                    return Ok(lexical_normalise(path));
                }
            }
            Err(e) => return Err(e),
        }
    }
}

/// Canonical when the path exists, else lexical: for configured folders that may not exist yet.
pub(super) fn canonical_or_lexical(path: &Path) -> PathBuf {
    resolve_existing_prefix(path).unwrap_or_else(|_| lexical_normalise(path))
}
