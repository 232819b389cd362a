//! The managed policy (DESIGN §17): a file the user cannot write (`/etc/bridle/managed.toml`, or
//! `BRIDLE_MANAGED_CONFIG`) that sets limits above the user's config — deny rules, disabled
//! tools, the modes allowed, the sandbox required, network deny entries, the telemetry endpoint.
//!
//! Rule: the policy only ever tightens. Its lists are added to the user's; a user setting that
//! would loosen one of its limits (a mode it does not allow, the sandbox off, another telemetry
//! endpoint) is refused at load with an error naming the managed file, never quietly overridden.

use std::path::{Path, PathBuf};

use bridle_protocol::Mode;
use serde::{Deserialize, Serialize};

use super::{Config, ConfigError, TelemetryConfig};

/// Where the managed policy lives when `BRIDLE_MANAGED_CONFIG` does not say.
pub const MANAGED_FILE: &str = "/etc/bridle/managed.toml";

/// The managed file as written; its keys are the user config's where they exist.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ManagedPolicy {
    /// Tools denied in every mode, added to the user's.
    pub disabled_tools: Vec<String>,
    /// `[rules] deny`, added to the user's (deny beats any allow).
    pub rules: ManagedRules,
    /// The modes a session may be in; none, every mode.
    pub allowed_modes: Option<Vec<Mode>>,
    /// `[sandbox] required` and `[sandbox.network] deny`.
    pub sandbox: ManagedSandbox,
    /// The collector every record goes to; the user cannot change or turn it off.
    pub telemetry: Option<TelemetryConfig>,
}

/// `[rules]` of the managed file: deny rules only.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ManagedRules {
    /// Calls always denied.
    pub deny: Vec<String>,
}

/// `[sandbox]` of the managed file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ManagedSandbox {
    /// Commands always run in the sandbox: no `enabled = false`, no escalation.
    pub required: bool,
    /// `[sandbox.network] deny` entries added to the user's.
    pub network: ManagedNetwork,
}

/// `[sandbox.network]` of the managed file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ManagedNetwork {
    /// Hosts always refused.
    pub deny: Vec<String>,
}

/// A managed policy and the file it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Managed {
    /// The managed file.
    pub file: PathBuf,
    /// What it says.
    pub policy: ManagedPolicy,
}

impl Managed {
    /// Reads the policy at `file`; a missing file is no policy.
    pub fn load(file: &Path) -> Result<Option<Managed>, ConfigError> {
        let text = match std::fs::read_to_string(file) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => return Err(ConfigError::Read { path: file.display().to_string(), source }),
        };
        let policy = toml::from_str(&text)
            .map_err(|e| ConfigError::Parse { path: file.display().to_string(), message: e.to_string() })?;
        Ok(Some(Managed { file: file.to_path_buf(), policy }))
    }

    /// Whether the policy lets a session be in `mode`.
    pub fn allows(&self, mode: Mode) -> bool {
        self.policy.allowed_modes.as_ref().is_none_or(|modes| modes.contains(&mode))
    }

    /// Refuses `mode` when the policy does not allow it, naming the managed file.
    pub fn check_mode(&self, mode: Mode) -> Result<(), String> {
        if self.allows(mode) {
            return Ok(());
        }
        Err(format!("mode {} is not allowed by the managed policy {}", mode.as_str(), self.file.display()))
    }

    /// `config` (read from `user_file`) with the policy applied above it, or the first user
    /// setting that would loosen it.
    pub fn apply(&self, mut config: Config, user_file: &Path) -> Result<Config, ConfigError> {
        let refuse = |message: String| ConfigError::Managed {
            path: user_file.display().to_string(),
            managed: self.file.display().to_string(),
            message,
        };
        if !self.allows(config.mode) {
            return Err(refuse(format!("mode = \"{}\" is not an allowed mode", config.mode.as_str())));
        }
        if self.policy.sandbox.required && !config.sandbox.enabled {
            return Err(refuse("[sandbox] enabled = false: the sandbox is required".into()));
        }
        if let Some(telemetry) = &self.policy.telemetry {
            if config.telemetry.is_on() && config.telemetry.endpoint != telemetry.endpoint {
                return Err(refuse(format!(
                    "[telemetry] endpoint = \"{}\": the endpoint is managed",
                    config.telemetry.endpoint.as_deref().unwrap_or_default()
                )));
            }
            config.telemetry = telemetry.clone();
        }
        add_missing(&mut config.disabled_tools, &self.policy.disabled_tools);
        add_missing(&mut config.rules.deny, &self.policy.rules.deny);
        add_missing(&mut config.sandbox.network.deny, &self.policy.sandbox.network.deny);
        config.managed = Some(self.clone());
        Ok(config)
    }

    /// The managed settings as `(key, value, reason)`, for the Settings view and `config explain`.
    pub fn settings(&self) -> Vec<(String, String, String)> {
        let reason = format!("set by the managed policy {}", self.file.display());
        let list = |items: &[String]| format!("{items:?}");
        let p = &self.policy;
        let mut out = Vec::new();
        if !p.disabled_tools.is_empty() {
            out.push(("disabled_tools".to_string(), list(&p.disabled_tools)));
        }
        if !p.rules.deny.is_empty() {
            out.push(("rules.deny".into(), list(&p.rules.deny)));
        }
        if let Some(modes) = &p.allowed_modes {
            let modes: Vec<String> = modes.iter().map(|m| m.as_str().to_string()).collect();
            out.push(("allowed_modes".into(), list(&modes)));
        }
        if p.sandbox.required {
            out.push(("sandbox.required".into(), "true".into()));
        }
        if !p.sandbox.network.deny.is_empty() {
            out.push(("sandbox.network.deny".into(), list(&p.sandbox.network.deny)));
        }
        if let Some(t) = &p.telemetry {
            out.push(("telemetry.endpoint".into(), t.endpoint.clone().unwrap_or_default()));
        }
        out.into_iter().map(|(k, v)| (k, v, reason.clone())).collect()
    }
}

fn add_missing(to: &mut Vec<String>, from: &[String]) {
    for item in from {
        if !to.contains(item) {
            to.push(item.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn managed(text: &str) -> Managed {
        Managed { file: "/etc/bridle/managed.toml".into(), policy: toml::from_str(text).unwrap() }
    }

    #[test]
    fn the_policy_adds_its_lists_and_refuses_what_loosens_it() {
        let m = managed(
            "disabled_tools = [\"web_fetch\"]\nallowed_modes = [\"ask\", \"auto\"]\n[rules]\ndeny = [\"bash(git push*)\"]\n\
             [sandbox]\nrequired = true\n[sandbox.network]\ndeny = [\"*.evil.test\"]\n",
        );
        let user = Config::parse("mode = \"auto\"\n[rules]\nallow = [\"bash(git push*)\"]\n").unwrap();
        let config = m.apply(user, Path::new("/home/u/config.toml")).unwrap();
        assert_eq!(config.rules.deny, ["bash(git push*)"]);
        assert_eq!(config.disabled_tools, ["web_fetch"]);
        assert_eq!(config.sandbox.network.deny, ["*.evil.test"]);
        assert!(config.managed.is_some());

        let bypass = Config::parse("mode = \"bypass\"\n").unwrap();
        let e = m.apply(bypass, Path::new("/home/u/config.toml")).unwrap_err().to_string();
        assert!(e.contains("bypass") && e.contains("/etc/bridle/managed.toml"), "{e}");
        let off = Config::parse("mode = \"ask\"\n[sandbox]\nenabled = false\n").unwrap();
        let e = m.apply(off, Path::new("/home/u/config.toml")).unwrap_err().to_string();
        assert!(e.contains("sandbox is required") && e.contains("/etc/bridle/managed.toml"), "{e}");
    }

    #[test]
    fn a_managed_endpoint_replaces_none_and_refuses_another() {
        let m = managed("[telemetry]\nendpoint = \"http://collector:4318\"\n");
        let config = m.apply(Config::default(), Path::new("c.toml")).unwrap();
        assert_eq!(config.telemetry.endpoint.as_deref(), Some("http://collector:4318"));
        let other = Config::parse("[telemetry]\nendpoint = \"http://elsewhere:4318\"\n").unwrap();
        assert!(m.apply(other, Path::new("c.toml")).unwrap_err().to_string().contains("endpoint is managed"));
    }
}
