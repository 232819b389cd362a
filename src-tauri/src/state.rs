//! The app's state: one engine for the window's session.

use std::sync::Arc;

use anyhow::Context;
use bridle_core::clock::SystemClock;
use bridle_core::config::{paths, Config};
use bridle_core::engine::{Engine, EngineConfig, EngineDeps, SessionSpec};
use bridle_core::provider::{self, ModelProvider};
use bridle_core::store::Store;
use bridle_core::tools::builtin_registry;
use bridle_protocol::{Event, SessionSummary};
use tokio::sync::mpsc::Receiver;

use crate::launch::LaunchOptions;

pub struct AppState {
    pub engine: Engine,
    pub summary: SessionSummary,
}

impl AppState {
    /// Loads the config, opens the store and starts a new session.
    pub async fn start(options: &LaunchOptions) -> anyhow::Result<(AppState, Receiver<Event>)> {
        let config = Config::load(&options.config_file)?;
        std::fs::create_dir_all(&options.data_dir)
            .with_context(|| format!("cannot create the data directory {}", options.data_dir.display()))?;
        let store = Arc::new(Store::open(&options.data_dir.join("bridle.db"))?);
        let provider: Arc<dyn ModelProvider> = match &config.provider {
            Some(p) => {
                // Keys come from the environment until the keychain lands; never from the config.
                let key = std::env::var(p.kind.api_key_variable()).ok().filter(|k| !k.is_empty());
                provider::from_config(p, key)?.into()
            }
            None => Arc::new(provider::Unconfigured),
        };
        let deps = EngineDeps { provider, tools: Arc::new(builtin_registry()?), store, clock: Arc::new(SystemClock) };
        let mut engine_config = EngineConfig::from_config(&config, options.workspace.clone(), options.data_dir.clone());
        engine_config.home = paths::home(|name| std::env::var_os(name));
        let (engine, events) = Engine::spawn(engine_config, deps, SessionSpec::New)?;
        let summary = SessionSummary {
            session_id: engine.session_id().to_string(),
            workspace: options.workspace.display().to_string(),
            mode: config.mode,
            model: config.provider.as_ref().map(|p| p.model.clone()),
            context_window: config.provider.as_ref().and_then(|p| p.context_window),
        };
        Ok((AppState { engine, summary }, events))
    }
}
