//! Where Bridle keeps its files. Pure functions: the caller passes the environment in.

use std::ffi::OsString;
use std::path::PathBuf;

/// The data directory: `--data-dir`, else `BRIDLE_DATA_DIR`, else the OS app-data dir
/// (`$XDG_DATA_HOME/bridle` or `~/.local/share/bridle`).
pub fn data_dir(flag: Option<PathBuf>, env: impl Fn(&str) -> Option<OsString>) -> PathBuf {
    if let Some(dir) = flag {
        return dir;
    }
    let non_empty = |name: &str| env(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(dir) = non_empty("BRIDLE_DATA_DIR") {
        return dir;
    }
    if let Some(xdg) = non_empty("XDG_DATA_HOME") {
        return xdg.join("bridle");
    }
    non_empty("HOME").unwrap_or_else(|| PathBuf::from(".")).join(".local/share/bridle")
}

/// The user's home folder (`HOME`), used to expand `~` in paths.
pub fn home(env: impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    env("HOME").filter(|h| !h.is_empty()).map(PathBuf::from)
}

/// The config file: `--config`, else `BRIDLE_CONFIG`, else `<data-dir>/config.toml`.
pub fn config_file(
    flag: Option<PathBuf>,
    data_dir: &std::path::Path,
    env: impl Fn(&str) -> Option<OsString>,
) -> PathBuf {
    flag.or_else(|| env("BRIDLE_CONFIG").filter(|v| !v.is_empty()).map(PathBuf::from))
        .unwrap_or_else(|| data_dir.join("config.toml"))
}

/// The managed policy file: `BRIDLE_MANAGED_CONFIG`, else [`super::MANAGED_FILE`].
pub fn managed_file(env: impl Fn(&str) -> Option<OsString>) -> PathBuf {
    env("BRIDLE_MANAGED_CONFIG")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(super::MANAGED_FILE))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<OsString> + 'a {
        move |name| pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| OsString::from(v))
    }

    #[test]
    fn flag_beats_variable_beats_xdg_beats_home() {
        let all = [("BRIDLE_DATA_DIR", "/b"), ("XDG_DATA_HOME", "/x"), ("HOME", "/h")];
        assert_eq!(data_dir(Some("/f".into()), env(&all)), PathBuf::from("/f"));
        assert_eq!(data_dir(None, env(&all)), PathBuf::from("/b"));
        assert_eq!(data_dir(None, env(&all[1..])), PathBuf::from("/x/bridle"));
        assert_eq!(data_dir(None, env(&all[2..])), PathBuf::from("/h/.local/share/bridle"));
    }

    #[test]
    fn config_defaults_into_the_data_dir() {
        assert_eq!(config_file(None, "/d".as_ref(), env(&[])), PathBuf::from("/d/config.toml"));
        assert_eq!(config_file(None, "/d".as_ref(), env(&[("BRIDLE_CONFIG", "/c.toml")])), PathBuf::from("/c.toml"));
    }
}
