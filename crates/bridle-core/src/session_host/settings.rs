//! The host's settings: the Settings view's values, saving them (the session reopens under
//! them), the models a server offers, what a rule means, and the open session's MCP servers.
//!
//! Rules: a saved config is reloaded even when the key could not be stored (the file is saved),
//! but never after a refusal; an edit of the MCP servers restarts only the servers it changed,
//! and the session goes on.

use bridle_protocol::{
    ErrorCode, ErrorInfo, McpServerList, McpServerSettings, ModelInfo, ProviderSettings, RuleMeaning, Settings,
    SettingsUpdate,
};

use super::{blocking, failure, Failure, SessionHost};
use crate::config::{Config, RuleList};
use crate::provider;
use crate::settings::{self, SaveError};

impl SessionHost {
    /// The Settings view's values, with the hosts allowed for the open session.
    pub async fn settings_get(&self) -> Result<Settings, ErrorInfo> {
        let wiring = self.wiring();
        let mut read = blocking(ErrorCode::SettingsReadFailed, move || Ok(settings::read(&wiring))).await?;
        read.session_hosts = self.engine().await.map(|engine| engine.session_hosts()).unwrap_or_default();
        Ok(read)
    }

    /// Saves the form, reloads the config and reopens the open session under it.
    pub async fn settings_save(&self, update: SettingsUpdate) -> Result<Settings, ErrorInfo> {
        let wiring = self.wiring();
        let (config_file, managed) = (wiring.config_file.clone(), wiring.config.managed.clone());
        let saved = tokio::task::spawn_blocking(move || settings::save(&config_file, &update, managed.as_ref()))
            .await
            .map_err(|e| failure(ErrorCode::SettingsSaveFailed, e))?;
        let code = match &saved {
            Err(SaveError::Invalid(_)) => ErrorCode::SettingsInvalid,
            Err(SaveError::Key(_)) => ErrorCode::KeychainFailed,
            _ => ErrorCode::SettingsSaveFailed,
        };
        // The file may be saved even when the key was not: reload in every case but a refusal.
        if !matches!(saved, Err(SaveError::Invalid(_)) | Err(SaveError::Config(_))) {
            self.reload().await.map_err(|e| failure(ErrorCode::SettingsReloadFailed, e))?;
        }
        saved.map_err(|e| failure(code, e))?;
        self.settings_get().await
    }

    /// Reads the config again and restarts the shown session with it (the other live sessions
    /// keep the settings they started with until they are next opened).
    pub(super) async fn reload(&self) -> Result<(), Failure> {
        let wiring = (self.0.reload)()?;
        *self.0.wiring.write().unwrap_or_else(std::sync::PoisonError::into_inner) = wiring;
        self.restart_shown().await.map(|_| ())
    }

    /// The models the form's server offers, asked with the key typed in or the stored one.
    pub async fn models_list(
        &self,
        provider: ProviderSettings,
        api_key: Option<String>,
    ) -> Result<Vec<ModelInfo>, ErrorInfo> {
        let config = settings::provider_of(&provider).map_err(|e| failure(ErrorCode::SettingsInvalid, e))?;
        let key = match api_key.map(|k| k.trim().to_string()).filter(|k| !k.is_empty()) {
            Some(key) => Some(key),
            None => {
                let (wiring, config) = (self.wiring(), config.clone());
                tokio::task::spawn_blocking(move || wiring.api_key(&config).map(|(key, _)| key))
                    .await
                    .map_err(|e| failure(ErrorCode::KeychainFailed, e))?
            }
        };
        provider::models::list(&config, key).await.map_err(|e| ErrorInfo {
            code: ErrorCode::ConnectionFailed,
            message: e.to_string(),
            retryable: true,
        })
    }

    /// The shown session's MCP servers.
    pub(super) async fn mcp(&self) -> Result<std::sync::Arc<crate::mcp::McpHub>, ErrorInfo> {
        let shown = self.0.shown().unwrap_or_default();
        match self.0.sessions.lock().await.get(&shown) {
            Some(live) => Ok(live.mcp.clone()),
            None => Err(failure(ErrorCode::NoSession, "no session is open")),
        }
    }

    /// The open session's MCP servers, numbered like the lists pushed.
    pub async fn mcp_status(&self) -> Result<McpServerList, ErrorInfo> {
        Ok(self.0.mcp_list(&*self.mcp().await?))
    }

    /// Restarts one MCP server; answers once it is ready or has failed.
    pub async fn mcp_restart(&self, name: String) -> Result<McpServerList, ErrorInfo> {
        let hub = self.mcp().await?;
        hub.restart(&name).await.map_err(|e| failure(ErrorCode::McpUnknownServer, e))?;
        Ok(self.0.mcp_list(&hub))
    }

    /// Adds or edits one MCP server in the config, then brings the running servers to it.
    pub async fn mcp_save(&self, server: McpServerSettings, previous: Option<String>) -> Result<Settings, ErrorInfo> {
        let config_file = self.wiring().config_file;
        self.edit_mcp(move || settings::save_mcp_server(&config_file, &server, previous.as_deref())).await
    }

    /// Removes one MCP server from the config and stops it.
    pub async fn mcp_remove(&self, name: String) -> Result<Settings, ErrorInfo> {
        let config_file = self.wiring().config_file;
        self.edit_mcp(move || settings::remove_mcp_server(&config_file, &name)).await
    }

    /// Applies one edit of the config's MCP servers, keeps the config it leaves for later
    /// sessions, and restarts only the servers it changed; the session goes on.
    async fn edit_mcp(
        &self,
        edit: impl FnOnce() -> Result<Config, SaveError> + Send + 'static,
    ) -> Result<Settings, ErrorInfo> {
        let config = tokio::task::spawn_blocking(edit).await.map_err(|e| failure(ErrorCode::SettingsSaveFailed, e))?;
        let config = config.map_err(|e| match e {
            SaveError::Invalid(_) => failure(ErrorCode::SettingsInvalid, e),
            _ => failure(ErrorCode::SettingsSaveFailed, e),
        })?;
        let servers = config.mcp;
        self.0.wiring.write().unwrap_or_else(std::sync::PoisonError::into_inner).config.mcp = servers.clone();
        self.mcp().await?.reconfigure(&servers).await;
        self.settings_get().await
    }
}

/// What each pattern of a rule list means, for the rule editor.
pub fn rules_explain(list: RuleList, patterns: &[String]) -> Result<Vec<RuleMeaning>, ErrorInfo> {
    Ok(patterns
        .iter()
        .map(|pattern| match crate::guard::describe_rule(list, pattern) {
            Ok(meaning) => RuleMeaning { pattern: pattern.clone(), meaning: Some(meaning), error: None },
            Err(e) => RuleMeaning { pattern: pattern.clone(), meaning: None, error: Some(e.to_string()) },
        })
        .collect())
}
