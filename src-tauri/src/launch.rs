//! Launch options for power users and tests: flags, else environment variables, else defaults.

use std::ffi::OsString;
use std::path::PathBuf;

use anyhow::{bail, Context};
use bridle_core::config::paths;

/// Where this window's session lives.
#[derive(Debug, Clone)]
pub struct LaunchOptions {
    pub workspace: PathBuf,
    pub data_dir: PathBuf,
    pub config_file: PathBuf,
}

impl LaunchOptions {
    /// Reads `--workspace`, `--data-dir`, `--config` (as `--flag value` or `--flag=value`), then
    /// `BRIDLE_WORKSPACE`, `BRIDLE_DATA_DIR`, `BRIDLE_CONFIG`. Unknown arguments are ignored:
    /// the webview's automation driver may add its own.
    pub fn from_env(
        args: impl IntoIterator<Item = OsString>,
        env: impl Fn(&str) -> Option<OsString>,
    ) -> anyhow::Result<Self> {
        let (mut workspace, mut data_dir, mut config) = (None, None, None);
        let mut args = args.into_iter();
        while let Some(arg) = args.next() {
            let text = arg.to_string_lossy().into_owned();
            let (flag, inline) = match text.split_once('=') {
                Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(OsString::from(v))),
                _ => (text.clone(), None),
            };
            let slot = match flag.as_str() {
                "--workspace" => &mut workspace,
                "--data-dir" => &mut data_dir,
                "--config" => &mut config,
                _ => continue,
            };
            let Some(value) = inline.or_else(|| args.next()) else { bail!("{flag} needs a value") };
            *slot = Some(PathBuf::from(value));
        }
        let data_dir = paths::data_dir(data_dir, &env);
        let config_file = paths::config_file(config, &data_dir, &env);
        let workspace = match workspace.or_else(|| env("BRIDLE_WORKSPACE").filter(|v| !v.is_empty()).map(PathBuf::from))
        {
            Some(dir) => dir,
            None => std::env::current_dir().context("cannot read the current directory")?,
        };
        let workspace = workspace
            .canonicalize()
            .with_context(|| format!("the workspace {} does not exist", workspace.display()))?;
        Ok(Self { workspace, data_dir, config_file })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn flags_in_both_forms_beat_the_environment_and_unknown_ones_are_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().to_str().unwrap().to_string();
        let args =
            ["--automation", "--data-dir=/d", "--workspace", ws.as_str(), "--config", "/c.toml"].map(OsString::from);
        let env = |name: &str| (name == "BRIDLE_DATA_DIR").then(|| OsString::from("/env"));
        let o = LaunchOptions::from_env(args, env).unwrap();
        assert_eq!(o.data_dir, PathBuf::from("/d"));
        assert_eq!(o.config_file, PathBuf::from("/c.toml"));
        assert_eq!(o.workspace, dir.path().canonicalize().unwrap());
    }

    #[test]
    fn a_flag_without_value_is_an_error() {
        assert!(LaunchOptions::from_env([OsString::from("--data-dir")], |_| None).is_err());
    }
}
