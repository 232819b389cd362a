//! Launch options for power users and tests: `--workspace`, `--data-dir`, `--config` (as
//! `--flag value` or `--flag=value`), handed to core's one wiring with the environment
//! (`BRIDLE_WORKSPACE`, `BRIDLE_DATA_DIR`, `BRIDLE_CONFIG`).

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::bail;
use bridle_core::session_host::Reload;
use bridle_core::wiring::{Flags, Wiring};

/// Reads the flags; unknown arguments are ignored (the webview's automation driver may add its
/// own).
pub fn flags(args: impl IntoIterator<Item = OsString>) -> anyhow::Result<Flags> {
    let mut flags = Flags::default();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let text = arg.to_string_lossy().into_owned();
        let (flag, inline) = match text.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(OsString::from(v))),
            _ => (text.clone(), None),
        };
        let slot = match flag.as_str() {
            "--workspace" => &mut flags.workspace,
            "--data-dir" => &mut flags.data_dir,
            "--config" => &mut flags.config,
            _ => continue,
        };
        let Some(value) = inline.or_else(|| args.next()) else { bail!("{flag} needs a value") };
        *slot = Some(PathBuf::from(value));
    }
    Ok(flags)
}

/// This process's launch: the wiring its flags and the environment give, and how to load it
/// again the same way (after Settings saves the config).
pub fn wiring() -> anyhow::Result<(Wiring, Reload)> {
    let flags = flags(std::env::args_os().skip(1))?;
    let wiring = Wiring::from_process(flags.clone())?;
    let reload: Reload = Arc::new(move || Wiring::from_process(flags.clone()));
    Ok((wiring, reload))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn flags_in_both_forms_and_unknown_ones_are_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().to_str().unwrap().to_string();
        let args =
            ["--automation", "--data-dir=/d", "--workspace", ws.as_str(), "--config", "/c.toml"].map(OsString::from);
        let flags = flags(args).unwrap();
        assert_eq!(flags.data_dir, Some(PathBuf::from("/d")));
        assert_eq!(flags.config, Some(PathBuf::from("/c.toml")));
        assert_eq!(flags.workspace, Some(PathBuf::from(ws)));
        // The environment is a fallback only: the flag wins.
        let env = |name: &str| (name == "BRIDLE_DATA_DIR").then(|| OsString::from("/env"));
        let wiring = Wiring::load(flags, env, || unreachable!()).unwrap();
        assert_eq!(wiring.data_dir, PathBuf::from("/d"));
        assert_eq!(wiring.workspace, dir.path().canonicalize().unwrap());
    }

    #[test]
    fn a_flag_without_value_is_an_error() {
        assert!(flags([OsString::from("--data-dir")]).is_err());
    }
}
