//! Paths no file tool may touch in any mode: credentials, keychains, and Bridle's own data.

use std::path::{Path, PathBuf};

use super::resolve::canonical_or_lexical;

#[derive(Debug, Clone)]
pub(super) struct Protected {
    pub(super) path: PathBuf,
    why: &'static str,
}

/// Credentials under the home folder, by what they hold.
const HOME_SECRETS: &[(&str, &str)] = &[
    (".ssh", "SSH keys"),
    (".aws", "AWS credentials"),
    (".kube", "Kubernetes credentials"),
    (".gnupg", "GnuPG keys"),
    (".netrc", "network credentials"),
    (".config/gcloud", "Google Cloud credentials"),
    (".docker/config.json", "Docker registry credentials"),
    (".git-credentials", "git credentials"),
    (".local/share/keyrings", "the desktop keychain"),
];

pub(super) fn protected(home: Option<&Path>, data_dir: &Path, extra: &[PathBuf]) -> Vec<Protected> {
    let mut list = Vec::new();
    if let Some(home) = home {
        for (rel, why) in HOME_SECRETS {
            let path = home.join(rel);
            list.push(Protected { path: path.clone(), why });
            // Also where a symlinked home leads.
            let resolved = canonical_or_lexical(&path);
            if resolved != path {
                list.push(Protected { path: resolved, why });
            }
        }
    }
    list.push(Protected { path: data_dir.to_path_buf(), why: "Bridle's own data and config" });
    for path in extra {
        list.push(Protected { path: canonical_or_lexical(path), why: "protected in the user's config" });
    }
    list
}

/// Why `path` is protected, if it is. The session's own tool-output folder is the exception.
pub(super) fn matches(list: &[Protected], path: &Path, own_outputs: &Path) -> Option<String> {
    if path.starts_with(own_outputs) || path.starts_with(canonical_or_lexical(own_outputs)) {
        return None;
    }
    list.iter().find(|p| path.starts_with(&p.path)).map(|p| p.why.to_string())
}
