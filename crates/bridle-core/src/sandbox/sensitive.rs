//! Paths no file tool may touch in any mode: credentials, keychains, and Bridle's own data.
//! The list of credentials is kept here once ([`SECRET_NAMES`]); the guard reads it too.

use std::path::{Path, PathBuf};

use super::resolve::canonical_or_lexical;

#[derive(Debug, Clone)]
pub(super) struct Protected {
    pub(super) path: PathBuf,
    pub(super) why: &'static str,
    /// A folder inside `path` that is not protected: the session's own worktree, when Bridle
    /// keeps it in its data dir.
    pub(super) except: Option<PathBuf>,
}

/// Credentials under a home folder, by what they hold: the one list. File tools refuse them
/// under the user's home, the shell sandbox masks them, and the guard recognises them by name in
/// anyone's home.
pub(crate) const SECRET_NAMES: &[(&str, &str)] = &[
    (".ssh", "SSH keys"),
    (".aws", "AWS credentials"),
    (".kube", "Kubernetes credentials"),
    (".gnupg", "GnuPG keys"),
    (".netrc", "network credentials"),
    (".git-credentials", "git credentials"),
    (".config/gcloud", "Google Cloud credentials"),
    (".docker/config.json", "Docker registry credentials"),
    (".local/share/keyrings", "the desktop keychain"),
    (".password-store", "the password store"),
    (".pgpass", "PostgreSQL passwords"),
    (".npmrc", "npm tokens"),
    (".pypirc", "PyPI tokens"),
    (".cargo/credentials", "crates.io tokens"),
    (".cargo/credentials.toml", "crates.io tokens"),
    (".config/gh/hosts.yml", "GitHub CLI tokens"),
    (".azure", "Azure credentials"),
    (".vault-token", "Vault token"),
];

/// Every protected path. `own_worktree` is the workspace when it is a session's worktree in
/// `data_dir` (`<data-dir>/worktrees/<id>`): the one part of the data dir left out.
pub(super) fn protected(
    home: Option<&Path>,
    data_dir: &Path,
    own_worktree: Option<&Path>,
    extra: &[PathBuf],
) -> Vec<Protected> {
    let mut list = Vec::new();
    if let Some(home) = home {
        for (rel, why) in SECRET_NAMES {
            let path = home.join(rel);
            list.push(Protected { path: path.clone(), why, except: None });
            // Also where a symlinked home leads.
            let resolved = canonical_or_lexical(&path);
            if resolved != path {
                list.push(Protected { path: resolved, why, except: None });
            }
        }
    }
    list.push(Protected {
        path: data_dir.to_path_buf(),
        why: "Bridle's own data and config",
        except: own_worktree.map(Path::to_path_buf),
    });
    for path in extra {
        list.push(Protected { path: canonical_or_lexical(path), why: "protected in the user's config", except: None });
    }
    list
}

/// Why `path` is protected, if it is. The session's own tool-output folder is the exception.
pub(super) fn matches(list: &[Protected], path: &Path, own_outputs: &Path) -> Option<String> {
    if path.starts_with(own_outputs) || path.starts_with(canonical_or_lexical(own_outputs)) {
        return None;
    }
    list.iter()
        .find(|p| path.starts_with(&p.path) && !p.except.as_ref().is_some_and(|e| path.starts_with(e)))
        .map(|p| p.why.to_string())
}
