//! The open session's skills and slash commands, as the window lists them (Settings, the
//! composer's completion), and the window's way of trusting the workspace's skills.
//!
//! Rule: trusting reopens the session, so the catalog the model reads and the commands offered
//! are those of the skills as trusted now; a session never changes its catalog mid-way.

use bridle_protocol::{ErrorCode, ErrorInfo, SkillInfo, SlashCommandInfo};

use super::{blocking, failure, SessionHost};
use crate::clock::{Clock, SystemClock};

impl SessionHost {
    /// The skills the open session found, offered or not, with their errors.
    pub async fn skills_list(&self) -> Result<Vec<SkillInfo>, ErrorInfo> {
        Ok(self.engine().await?.skills())
    }

    /// The slash commands the open session offers: built-ins, then its user-invocable skills.
    pub async fn slash_commands(&self) -> Result<Vec<SlashCommandInfo>, ErrorInfo> {
        Ok(self.engine().await?.commands())
    }

    /// Trusts the workspace's skills as their files are now, then reopens the session so they
    /// are offered; answers the skills as the reopened session found them.
    pub async fn skills_trust(&self) -> Result<Vec<SkillInfo>, ErrorInfo> {
        let places = self.wiring().engine_config().skill_places();
        let store = self.0.store.clone();
        blocking(ErrorCode::StoreWriteFailed, move || {
            crate::skills::trust_workspace(&places, &store, SystemClock.now_ms()).map(|_| ()).map_err(Into::into)
        })
        .await?;
        self.reload().await.map_err(|e| failure(ErrorCode::SettingsReloadFailed, e))?;
        self.skills_list().await
    }
}
