//! The home folder as a command sees it (DESIGN §5.1): empty but for what toolchains need to
//! build offline and to commit, the user's `[sandbox] readable` paths, the workspace and the
//! writable paths. Credentials keep being found under new names (rclone, gh, docker, kube, cloud
//! CLIs, wallets): an allow-list of what is shown holds where a list of what is hidden cannot.
//!
//! Rule: every entry is shown read-only, and the sensitive-path masks still apply inside what
//! is shown.

use std::path::{Path, PathBuf};

/// What of the home folder commands see, and why each is there.
pub const HOME_READABLE: &[&str] = &[
    // cargo's binaries, and the registry and git caches an offline build reads.
    ".cargo/bin",
    ".cargo/registry",
    ".cargo/git",
    // Rust toolchains.
    ".rustup",
    // npm's cache (an offline install reads it) and node versions.
    ".npm",
    ".nvm",
    // Python versions and their shims.
    ".pyenv",
    // Programs and libraries installed for the user (pip --user, pipx).
    ".local/bin",
    ".local/lib",
    // git's identity and settings, for commits.
    ".gitconfig",
    ".config/git",
    // Maven's and Go's module caches.
    ".m2/repository",
    "go/pkg/mod",
    // Build caches (pip, go-build, ...).
    ".cache",
];

/// The paths of [`HOME_READABLE`] that exist under `home`, as they are named there (a link
/// stays a link: bwrap shows it as one).
pub(super) fn readable_in(home: &Path) -> Vec<PathBuf> {
    HOME_READABLE.iter().map(|rel| home.join(rel)).filter(|p| p.symlink_metadata().is_ok()).collect()
}

/// How the home folder is shown, for results and the window: `~/` and what is visible.
pub(super) fn shown(home: &Path, visible: &[PathBuf]) -> String {
    let names: Vec<String> = visible
        .iter()
        .map(|p| match p.strip_prefix(home) {
            Ok(rel) => format!("~/{}", rel.display()),
            Err(_) => p.display().to_string(),
        })
        .collect();
    match names.is_empty() {
        true => "home is hidden (an empty folder)".to_string(),
        false => format!("home is hidden but for (read-only) {}", names.join(", ")),
    }
}
