//! Permit: the one owner of what a session allows — its mode, the user's rules in force and the
//! approvals it remembers.
//!
//! Rule: nothing else keeps a copy. A mode change, or an "always" answer (its rule written to the
//! config file and read back with whatever else the user changed there), changes the permit, and
//! the very next call is judged under it; the window, the brief and the audit read the mode from
//! here. A session's grants ("approve for this session") live in the store, keyed by what the
//! tool says an approval covers; the command grants are forgotten when an exec-config file
//! changes, so an approved `npm test` cannot be turned into something else silently. The
//! session's network proxy lives here too: its policy and the hosts a person allowed are what
//! the session allows of the network.

use std::path::PathBuf;
use std::sync::{Arc, PoisonError, RwLock};

use bridle_protocol::{ApprovalAnswer, ErrorCode, Mode};

use super::approval::{COMMAND_GRANT, HOST_GRANT};
use super::record::Problem;
use crate::config::edit::RuleList;
use crate::guard::Policy;
use crate::network::Proxy;
use crate::store::Store;

/// What a "session" or "always" answer remembers: the session's grant keys, and what "always"
/// writes to the config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    /// The keys kept with the session's grants.
    pub keys: Vec<String>,
    /// What an "always" answer writes.
    pub always: Always,
}

/// What an "always" answer writes to the config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Always {
    /// An allow rule (`bash(npm test)`, `write_file(src/a.rs)`).
    Rule(String),
    /// A host, to `[sandbox.network] allow` (`host:port`).
    Host(String),
}

/// What a session allows now; shared by every call of the session.
pub struct Permit {
    in_force: RwLock<(Mode, Arc<Policy>)>,
    grants: Option<(Arc<Store>, String)>,
    config_file: Option<PathBuf>,
    network: Option<Arc<Proxy>>,
    /// The managed policy, applied again whenever the rules are read back from the file.
    managed: Option<crate::config::Managed>,
}

impl std::fmt::Debug for Permit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Permit").field("mode", &self.mode()).finish_non_exhaustive()
    }
}

impl Permit {
    /// `mode` and `policy`, remembering no approvals and writing no rules (`bridle tool`).
    pub fn new(mode: Mode, policy: Policy) -> Self {
        Self {
            in_force: RwLock::new((mode, Arc::new(policy))),
            grants: None,
            config_file: None,
            network: None,
            managed: None,
        }
    }

    /// Lets commands out through `proxy` (none: the network is off).
    pub fn with_network(self, proxy: Option<Arc<Proxy>>) -> Self {
        Self { network: proxy, ..self }
    }

    /// The session's proxy, when commands may reach hosts.
    pub fn network(&self) -> Option<&Arc<Proxy>> {
        self.network.as_ref()
    }

    /// An "always" answer about a host: `entry` (`host:port`) is written to `[sandbox.network]
    /// allow` in the config file (the proxy has it in force already).
    fn allow_host_always(&self, entry: &str) -> Option<Problem> {
        let Some(file) = &self.config_file else {
            let message = "no config file to write the host to; allowed for this session";
            return Some(Problem::fatal(ErrorCode::ConfigWriteFailed, message.into()));
        };
        if let Err(e) = crate::network::HostPattern::parse(entry) {
            return Some(Problem::fatal(ErrorCode::ConfigWriteFailed, e));
        }
        crate::config::edit::append_network_allow(file, entry)
            .err()
            .map(|e| Problem::retryable(ErrorCode::ConfigWriteFailed, format!("cannot write the host `{entry}`: {e}")))
    }

    /// Remembers "approve for this session" answers of `session_id` in `store`; the hosts the
    /// session was allowed before (in another process) are allowed again.
    pub fn with_grants(self, store: Arc<Store>, session_id: impl Into<String>) -> Self {
        let session_id = session_id.into();
        if let Some(proxy) = &self.network {
            for key in store.grants_with_prefix(&session_id, HOST_GRANT).unwrap_or_default() {
                proxy.grant(&key[HOST_GRANT.len()..]);
            }
        }
        Self { grants: Some((store, session_id)), ..self }
    }

    /// Writes "always" answers as rules to `file`.
    pub fn with_config_file(self, file: Option<PathBuf>) -> Self {
        Self { config_file: file, ..self }
    }

    /// The managed policy over the config file's rules (DESIGN §17): a reload keeps it above them.
    pub fn with_managed(self, managed: Option<crate::config::Managed>) -> Self {
        Self { managed, ..self }
    }

    /// The mode in force.
    pub fn mode(&self) -> Mode {
        self.in_force.read().unwrap_or_else(PoisonError::into_inner).0
    }

    /// The mode and the user's rules in force.
    pub fn in_force(&self) -> (Mode, Arc<Policy>) {
        self.in_force.read().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Switches to `mode` for every later call.
    pub fn set_mode(&self, mode: Mode) {
        self.in_force.write().unwrap_or_else(PoisonError::into_inner).0 = mode;
    }

    fn set_policy(&self, policy: Policy) {
        self.in_force.write().unwrap_or_else(PoisonError::into_inner).1 = Arc::new(policy);
    }

    /// Whether the session remembers an approval for every one of `keys` (never for none).
    pub fn granted(&self, keys: &[String]) -> bool {
        let Some((store, session)) = &self.grants else { return false };
        !keys.is_empty() && keys.iter().all(|k| store.has_grant(session, k).unwrap_or(false))
    }

    /// Remembers `answer` for what an approval covers (`grant`): "session" and "always" answers
    /// are kept with the session's grants (a host's too, so a later process of the session
    /// reaches it); "always" also writes its rule to the config file and reads the rules back,
    /// or writes its host. What could not be done comes back, for the record.
    pub fn remember(&self, answer: ApprovalAnswer, grant: &Grant, now: i64) -> Vec<Problem> {
        if !matches!(answer, ApprovalAnswer::ApproveSession | ApprovalAnswer::ApproveAlways) {
            return Vec::new();
        }
        let mut problems = Vec::new();
        if let Some((store, session)) = &self.grants {
            for key in &grant.keys {
                if let Err(e) = store.add_grant(session, key, now) {
                    problems.push(Problem::retryable(
                        ErrorCode::StoreWriteFailed,
                        format!("cannot remember the approval: {e}"),
                    ));
                }
            }
        }
        if answer == ApprovalAnswer::ApproveAlways {
            problems.extend(match &grant.always {
                Always::Rule(rule) => self.write_allow_rule(rule),
                Always::Host(entry) => self.allow_host_always(entry),
            });
        }
        problems
    }

    fn write_allow_rule(&self, rule: &str) -> Option<Problem> {
        let Some(file) = &self.config_file else {
            let message = "no config file to write the rule to; approved for this session";
            return Some(Problem::fatal(ErrorCode::ConfigWriteFailed, message.into()));
        };
        if let Err(e) = crate::guard::append_rule(file, RuleList::Allow, rule) {
            return Some(Problem::retryable(
                ErrorCode::ConfigWriteFailed,
                format!("cannot write the rule `{rule}`: {e}"),
            ));
        }
        // In force from the next call on: the rules are read back from the file just written,
        // with whatever else the user changed there meanwhile.
        let reloaded = crate::config::Config::load(file)
            .and_then(|config| match &self.managed {
                Some(managed) => managed.apply(config, file),
                None => Ok(config),
            })
            .map_err(|e| e.to_string())
            .and_then(|config| Policy::from_config(&config).map_err(|e| e.to_string()));
        match reloaded {
            Ok(policy) => {
                self.set_policy(policy);
                None
            }
            Err(e) => {
                let message = format!("the rule `{rule}` was written but the config cannot be read back: {e}");
                Some(Problem::fatal(ErrorCode::ConfigReadFailed, message))
            }
        }
    }

    /// Files changed at `paths`: a changed exec-config file voids every command approval of the
    /// session.
    pub fn files_changed<'a>(&self, paths: impl IntoIterator<Item = &'a str>) -> Option<Problem> {
        let (store, session) = self.grants.as_ref()?;
        if !paths.into_iter().any(crate::guard::is_exec_config) {
            return None;
        }
        let forgotten = store.forget_grants(session, COMMAND_GRANT);
        forgotten
            .err()
            .map(|e| Problem::retryable(ErrorCode::StoreWriteFailed, format!("cannot forget command approvals: {e}")))
    }
}
