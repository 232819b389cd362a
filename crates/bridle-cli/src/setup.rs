//! Turning global options and the environment into paths, config and a store.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use bridle_core::audit::{AuditLog, AuditSink};
use bridle_core::config::{paths, Config};
use bridle_core::store::Store;
use bridle_core::workspace::Workspace;

use crate::cli::Global;

pub struct Setup {
    pub workspace: PathBuf,
    pub data_dir: PathBuf,
    pub config_file: PathBuf,
    pub config: Config,
}

impl Setup {
    pub fn load(global: &Global) -> anyhow::Result<Setup> {
        let env = |name: &str| std::env::var_os(name);
        let data_dir = paths::data_dir(global.data_dir.clone(), env);
        let config_file = paths::config_file(global.config.clone(), &data_dir, env);
        let config = Config::load(&config_file)?;
        let workspace = match &global.workspace {
            Some(dir) => dir.clone(),
            None => std::env::current_dir().context("cannot read the current directory")?,
        };
        let workspace = workspace
            .canonicalize()
            .with_context(|| format!("the workspace {} does not exist", workspace.display()))?;
        Ok(Setup { workspace, data_dir, config_file, config })
    }

    /// The user's home folder, for `~` in paths.
    pub fn home() -> Option<PathBuf> {
        paths::home(|name| std::env::var_os(name))
    }

    pub fn open_workspace(&self) -> anyhow::Result<Workspace> {
        Workspace::open(&self.workspace, Self::home(), &self.data_dir, &self.config.sensitive_paths)
            .with_context(|| format!("cannot open the workspace {}", self.workspace.display()))
    }

    /// The audit writer on `<data-dir>/audit.db`.
    pub fn audit(&self) -> anyhow::Result<AuditSink> {
        std::fs::create_dir_all(&self.data_dir)
            .with_context(|| format!("cannot create the data directory {}", self.data_dir.display()))?;
        Ok(AuditSink::start(AuditLog::open(&self.data_dir)?))
    }

    pub fn store(&self) -> anyhow::Result<Arc<Store>> {
        std::fs::create_dir_all(&self.data_dir)
            .with_context(|| format!("cannot create the data directory {}", self.data_dir.display()))?;
        Ok(Arc::new(Store::open(&self.data_dir.join("bridle.db"))?))
    }
}
