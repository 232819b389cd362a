//! The Settings view's reading and saving of the config (DESIGN §11, first run). Beside
//! [`crate::wiring`] (it reads what a launch wired, and checks a saved config's rules with the guard),
//! above the plain data of [`crate::config`].
//!
//! Rule: saving edits the user's file in place (`toml_edit`: comments, order and every key the
//! form does not show survive), checks the result loads — the whole config and its rules —
//! before anything is written, writes atomically, and never writes a key: a key given with the
//! form goes to the OS keychain ([`crate::secrets`]), and only after the file is saved.

use std::path::Path;

use bridle_protocol::{
    LimitSettings, ManagedSetting, McpServerSettings, Mode, NetworkSettings, ProviderKindInfo, ProviderSettings,
    RuleSettings, Settings, SettingsUpdate,
};
use toml_edit::{Array, DocumentMut, Item, Table, Value};

use crate::config::edit::write_atomically;
use crate::config::{Config, ConfigError, ProviderConfig, ProviderKind};
use crate::secrets::{self, SecretError};
use crate::wiring::Wiring;

/// Why the form could not be saved.
#[derive(Debug, thiserror::Error)]
pub enum SaveError {
    /// The form's values do not make a valid config (nothing was written).
    #[error("{0}")]
    Invalid(String),
    /// The file could not be read or written.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The config was saved but the key could not be stored.
    #[error("the settings were saved, but the key was not: {0}")]
    Key(#[from] SecretError),
}

/// What the Settings view shows for this launch.
pub fn read(wiring: &Wiring) -> Settings {
    let config = &wiring.config;
    let provider = config.provider.as_ref().map_or_else(
        || ProviderSettings {
            kind: ProviderKind::Openai.as_str().into(),
            base_url: ProviderKind::Openai.default_base_url().into(),
            model: String::new(),
            context_window: None,
        },
        |p| ProviderSettings {
            kind: p.kind.as_str().into(),
            base_url: p.base_url.clone(),
            model: p.model.clone(),
            context_window: p.context_window,
        },
    );
    let key_source = config.provider.as_ref().and_then(|p| wiring.api_key(p)).map(|(_, source)| source.as_str().into());
    // The managed policy's entries are shown apart, read-only: the lists here are the user's own.
    let policy = config.managed.as_ref().map(|m| &m.policy);
    let own = |list: &[String], managed: Option<&Vec<String>>| -> Vec<String> {
        list.iter().filter(|item| !managed.is_some_and(|m| m.contains(item))).cloned().collect()
    };
    Settings {
        config_file: wiring.config_file.display().to_string(),
        workspace: wiring.workspace.display().to_string(),
        configured: config.provider.is_some(),
        provider,
        key_source,
        mode: config.mode,
        rules: RuleSettings {
            allow: config.rules.allow.clone(),
            ask: config.rules.ask.clone(),
            deny: own(&config.rules.deny, policy.map(|p| &p.rules.deny)),
        },
        network: NetworkSettings {
            mode: config.sandbox.network.mode,
            allow: config.sandbox.network.allow.clone(),
            deny: own(&config.sandbox.network.deny, policy.map(|p| &p.sandbox.network.deny)),
        },
        session_hosts: Vec::new(),
        limits: LimitSettings {
            max_steps: config.limits.max_steps,
            tool_timeout_secs: config.limits.tool_timeout_secs,
            approval_timeout_secs: config.limits.approval_timeout_secs,
            max_retries: config.limits.max_retries,
        },
        kinds: [ProviderKind::Openai, ProviderKind::Anthropic, ProviderKind::Ollama]
            .into_iter()
            .map(|kind| ProviderKindInfo {
                kind: kind.as_str().into(),
                default_base_url: kind.default_base_url().into(),
                key_variable: kind.api_key_variable().into(),
            })
            .collect(),
        mcp_servers: config
            .mcp
            .servers
            .iter()
            .map(|(name, server)| McpServerSettings {
                name: name.clone(),
                command: server.command.clone().unwrap_or_default(),
                args: server.args.clone(),
                url: server.url.clone().unwrap_or_default(),
                enabled: server.enabled,
                startup_timeout_secs: u32::try_from(server.startup_timeout_secs).unwrap_or(u32::MAX),
                env_names: server.env.keys().cloned().collect(),
                header_names: server.headers.keys().cloned().collect(),
            })
            .collect(),
        managed: config.managed.as_ref().map(|m| {
            m.settings().into_iter().map(|(key, value, reason)| ManagedSetting { key, value, reason }).collect()
        }),
        allowed_modes: config
            .managed
            .as_ref()
            .filter(|m| m.policy.allowed_modes.is_some())
            .map(|m| Mode::ALL.into_iter().filter(|mode| m.allows(*mode)).collect()),
    }
}

/// The provider the form describes, checked: a known kind, an http(s) URL, a model.
pub fn provider_of(form: &ProviderSettings) -> Result<ProviderConfig, SaveError> {
    let kind: ProviderKind = form.kind.parse().map_err(SaveError::Invalid)?;
    let base_url = form.base_url.trim().to_string();
    let scheme_ok = base_url.starts_with("http://") || base_url.starts_with("https://");
    if !scheme_ok || base_url.len() <= "https://".len() {
        return Err(SaveError::Invalid(format!("the base URL must start with http:// or https:// (got `{base_url}`)")));
    }
    if form.context_window == Some(0) {
        return Err(SaveError::Invalid("the context window must be a positive number of tokens".into()));
    }
    Ok(ProviderConfig {
        kind,
        base_url,
        model: form.model.trim().to_string(),
        context_window: form.context_window,
        max_output_tokens: crate::config::default_max_output_tokens(),
    })
}

/// Writes the form into `config_file`, then the key (if one is given) into the keychain.
/// Returns the config as it now loads.
pub fn save(
    config_file: &Path,
    form: &SettingsUpdate,
    managed: Option<&crate::config::Managed>,
) -> Result<Config, SaveError> {
    let provider = provider_of(&form.provider)?;
    if provider.model.is_empty() {
        return Err(SaveError::Invalid("choose a model (\"List models\" asks the server)".into()));
    }
    let config = edit(config_file, managed, |doc| {
        set(doc.as_table_mut(), "mode", form.mode.as_str());
        {
            let table = table(doc, "provider")?;
            set(table, "kind", provider.kind.as_str());
            set(table, "base_url", provider.base_url.as_str());
            set(table, "model", provider.model.as_str());
            match provider.context_window {
                Some(window) => set(table, "context_window", window_value(window)?),
                None => {
                    table.remove("context_window");
                }
            }
        }
        {
            let table = table(doc, "rules")?;
            set_list(table, "allow", &form.rules.allow);
            set_list(table, "ask", &form.rules.ask);
            set_list(table, "deny", &form.rules.deny);
        }
        {
            // The old `network = true` becomes the table it means.
            let sandbox = table(doc, "sandbox")?;
            if sandbox.get("network").is_some_and(|item| !item.is_table()) {
                sandbox.remove("network");
            }
            let network = sandbox
                .entry("network")
                .or_insert_with(toml_edit::table)
                .as_table_mut()
                .ok_or_else(|| SaveError::Invalid("`sandbox.network` in the config is not a table".into()))?;
            set(network, "mode", form.network.mode.as_str());
            set_list(network, "allow", &form.network.allow);
            set_list(network, "deny", &form.network.deny);
        }
        let limits = &form.limits;
        let table = table(doc, "limits")?;
        set(table, "max_steps", i64::from(limits.max_steps));
        set(table, "tool_timeout_secs", window_value(limits.tool_timeout_secs)?);
        set(table, "approval_timeout_secs", window_value(limits.approval_timeout_secs)?);
        set(table, "max_retries", i64::from(limits.max_retries));
        Ok(())
    })?;
    if let Some(key) = form.api_key.as_deref().map(str::trim).filter(|k| !k.is_empty()) {
        secrets::set(provider.kind, &provider.base_url, key)?;
    }
    Ok(config)
}

/// Adds `server` to the config, or edits the server named `previous` (renaming it when the name
/// changed): its command or URL, arguments, switch and start-up timeout. Its `env` and `headers`
/// (which may hold secrets the form never sees) are kept as written.
pub fn save_mcp_server(
    config_file: &Path,
    server: &McpServerSettings,
    previous: Option<&str>,
) -> Result<Config, SaveError> {
    let name = server.name.trim();
    let valid_name = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !valid_name {
        return Err(SaveError::Invalid(format!(
            "`{name}` cannot name a server: use letters, digits, `_` and `-` (its tools are mcp__{name}__TOOL)"
        )));
    }
    let (command, url) = (server.command.trim(), server.url.trim());
    match (command.is_empty(), url.is_empty()) {
        (true, true) => return Err(SaveError::Invalid("give a command (stdio) or a URL (streamable HTTP)".into())),
        (false, false) => return Err(SaveError::Invalid("give a command or a URL, not both".into())),
        (true, false) if !(url.starts_with("http://") || url.starts_with("https://")) => {
            return Err(SaveError::Invalid(format!("`{url}` is not an http(s) URL")))
        }
        _ => {}
    }
    if server.startup_timeout_secs == 0 {
        return Err(SaveError::Invalid("the start-up timeout must be at least one second".into()));
    }
    edit(config_file, None, |doc| {
        let servers = mcp_servers(doc)?;
        let mut entry = match previous {
            Some(old) => match servers.remove(old) {
                Some(Item::Table(table)) => table,
                Some(_) => return Err(SaveError::Invalid(format!("`mcp.servers.{old}` in the config is not a table"))),
                None => return Err(SaveError::Invalid(format!("no MCP server is named `{old}`"))),
            },
            None => Table::new(),
        };
        if servers.contains_key(name) {
            return Err(SaveError::Invalid(format!("an MCP server named `{name}` already exists")));
        }
        if command.is_empty() {
            for key in ["command", "args", "env"] {
                entry.remove(key);
            }
            set(&mut entry, "url", url);
        } else {
            for key in ["url", "headers"] {
                entry.remove(key);
            }
            set(&mut entry, "command", command);
            let args: Vec<&str> = server.args.iter().map(String::as_str).filter(|a| !a.is_empty()).collect();
            if args.is_empty() {
                entry.remove("args");
            } else if !holds_list(&entry, "args", &args) {
                set(&mut entry, "args", args.iter().copied().collect::<Array>());
            }
        }
        set(&mut entry, "enabled", server.enabled);
        set(&mut entry, "startup_timeout_secs", i64::from(server.startup_timeout_secs));
        servers.insert(name, Item::Table(entry));
        Ok(())
    })
}

/// Removes the server `name` from the config.
pub fn remove_mcp_server(config_file: &Path, name: &str) -> Result<Config, SaveError> {
    edit(config_file, None, |doc| match mcp_servers(doc)?.remove(name) {
        Some(_) => Ok(()),
        None => Err(SaveError::Invalid(format!("no MCP server is named `{name}`"))),
    })
}

/// `[mcp.servers]`, created (as dotted headers only) when missing.
fn mcp_servers(doc: &mut DocumentMut) -> Result<&mut Table, SaveError> {
    let mcp = table(doc, "mcp")?;
    if mcp.is_empty() {
        mcp.set_implicit(true);
    }
    let servers = mcp.entry("servers").or_insert_with(|| {
        let mut servers = Table::new();
        servers.set_implicit(true);
        Item::Table(servers)
    });
    servers.as_table_mut().ok_or_else(|| SaveError::Invalid("`mcp.servers` in the config is not a table".into()))
}

/// Reads the config file (none yet is an empty one), applies `change` to its document, checks the
/// result loads exactly as a launch will load it, rules included, and only then replaces the
/// file, atomically and with its permissions.
fn edit(
    config_file: &Path,
    managed: Option<&crate::config::Managed>,
    change: impl FnOnce(&mut DocumentMut) -> Result<(), SaveError>,
) -> Result<Config, SaveError> {
    let shown = config_file.display().to_string();
    let (text, permissions) = match std::fs::read_to_string(config_file) {
        Ok(text) => (text, std::fs::metadata(config_file).ok().map(|m| m.permissions())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => (String::new(), None),
        Err(source) => return Err(ConfigError::Read { path: shown, source }.into()),
    };
    let mut doc: DocumentMut = text
        .parse()
        .map_err(|e: toml_edit::TomlError| ConfigError::Parse { path: shown.clone(), message: e.to_string() })?;
    change(&mut doc)?;
    let text = doc.to_string();
    let config = Config::parse(&text).map_err(|e| SaveError::Invalid(e.to_string()))?;
    crate::guard::Policy::from_config(&config).map_err(|e| SaveError::Invalid(e.to_string()))?;
    crate::network::Policy::new(&config.sandbox.network).map_err(SaveError::Invalid)?;
    // What the managed policy would refuse at the next load is refused now, and not written.
    if let Some(managed) = managed {
        managed.apply(config.clone(), config_file).map_err(|e| SaveError::Invalid(e.to_string()))?;
    }
    write_atomically(config_file, text.as_bytes(), permissions)
        .map_err(|source| ConfigError::Write { path: shown, source })?;
    Ok(config)
}

/// The table `name`, created when missing; an error when the key holds something else.
fn table<'d>(doc: &'d mut DocumentMut, name: &str) -> Result<&'d mut Table, SaveError> {
    let item = doc.entry(name).or_insert_with(toml_edit::table);
    item.as_table_mut().ok_or_else(|| SaveError::Invalid(format!("`{name}` in the config is not a table")))
}

/// Sets `key` to `new`, keeping the old value's comments and spacing; an unchanged value is left
/// exactly as written.
fn set(table: &mut Table, key: &str, new: impl Into<Value>) {
    let mut new: Value = new.into();
    if let Some(old) = table.get(key).and_then(Item::as_value) {
        if old.to_string().trim() == new.to_string().trim() {
            return;
        }
        *new.decor_mut() = old.decor().clone();
    }
    table[key] = Item::Value(new);
}

/// Replaces a list, keeping the old one (and its comments) when nothing changed.
fn set_list(table: &mut Table, key: &str, patterns: &[String]) {
    let patterns: Vec<&str> = patterns.iter().map(|p| p.trim()).filter(|p| !p.is_empty()).collect();
    if holds_list(table, key, &patterns) {
        return;
    }
    if patterns.is_empty() && !table.contains_key(key) {
        return;
    }
    let mut array = Array::new();
    for pattern in patterns {
        array.push(pattern);
    }
    set(table, key, array);
}

/// Whether `key` already holds exactly these strings, in this order.
fn holds_list(table: &Table, key: &str, items: &[&str]) -> bool {
    let old = table.get(key).and_then(Item::as_array);
    old.is_some_and(|old| old.iter().map(|v| v.as_str()).eq(items.iter().map(|i| Some(*i))))
}

fn window_value(n: u64) -> Result<i64, SaveError> {
    i64::try_from(n).map_err(|_| SaveError::Invalid(format!("{n} is too large")))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use bridle_protocol::Mode;
    use pretty_assertions::assert_eq;

    fn form() -> SettingsUpdate {
        SettingsUpdate {
            provider: ProviderSettings {
                kind: "openai".into(),
                base_url: "http://127.0.0.1:4010/v1".into(),
                model: "gpt-test".into(),
                context_window: Some(32768),
            },
            api_key: None,
            mode: Mode::AutoEdit,
            rules: RuleSettings {
                allow: vec!["bash(cargo test*)".into()],
                ask: vec![],
                deny: vec!["bash(rm *)".into()],
            },
            network: NetworkSettings {
                mode: bridle_protocol::NetworkMode::Ask,
                allow: vec!["crates.io".into(), "*.npmjs.org".into()],
                deny: vec![],
            },
            limits: LimitSettings { max_steps: 20, tool_timeout_secs: 90, approval_timeout_secs: 300, max_retries: 2 },
        }
    }

    #[test]
    fn a_save_the_managed_policy_would_refuse_is_refused_and_nothing_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let (path, policy) = (dir.path().join("config.toml"), dir.path().join("managed.toml"));
        std::fs::write(&path, "mode = \"ask\"\n").unwrap();
        std::fs::write(&policy, "allowed_modes = [\"ask\", \"auto\"]\n").unwrap();
        let managed = crate::config::Managed::load(&policy).unwrap().unwrap();
        // The form's mode, auto-edit, is not one the policy allows.
        let err = save(&path, &form(), Some(&managed)).unwrap_err();
        assert!(err.to_string().contains(&policy.display().to_string()), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "mode = \"ask\"\n");
        let allowed = SettingsUpdate { mode: Mode::Auto, ..form() };
        save(&path, &allowed, Some(&managed)).unwrap();
        assert!(std::fs::read_to_string(&path).unwrap().contains("mode = \"auto\""));
    }

    #[test]
    fn saving_keeps_comments_and_keys_the_form_does_not_show() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(
            &path,
            "# my config\nmode = \"ask\" # careful\ndisabled_tools = [\"web_fetch\"]\n\n[rules]\n# reviewed by me\ndeny = [\"bash(rm *)\"]\n",
        )
        .unwrap();
        let config = save(&path, &form(), None).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("# my config\nmode = \"auto-edit\" # careful\n"), "{text}");
        assert!(text.contains("# reviewed by me\ndeny = [\"bash(rm *)\"]"), "{text}");
        assert!(text.contains("disabled_tools = [\"web_fetch\"]"), "{text}");
        assert_eq!(config.disabled_tools, ["web_fetch"]);
        let loaded = Config::load(&path).unwrap();
        assert_eq!(loaded, config);
        let provider = loaded.provider.unwrap();
        assert_eq!((provider.model.as_str(), provider.context_window), ("gpt-test", Some(32768)));
        assert_eq!(loaded.rules.allow, ["bash(cargo test*)"]);
        assert_eq!(loaded.sandbox.network.mode, bridle_protocol::NetworkMode::Ask);
        assert_eq!(loaded.sandbox.network.allow, ["crates.io", "*.npmjs.org"]);
        assert_eq!((loaded.limits.max_steps, loaded.limits.tool_timeout_secs), (20, 90));
    }

    #[test]
    fn an_invalid_form_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "mode = \"ask\"\n").unwrap();
        let mut bad_rule = form();
        bad_rule.rules.allow = vec!["bash(git status".into()];
        let mut bad_url = form();
        bad_url.provider.base_url = "127.0.0.1:4010".into();
        let mut no_model = form();
        no_model.provider.model = " ".into();
        let mut bad_kind = form();
        bad_kind.provider.kind = "gemini".into();
        let mut bad_host = form();
        bad_host.network.allow = vec!["exa mple.com".into()];
        for (form, expect) in [
            (bad_rule, "bash(git status"),
            (bad_url, "http://"),
            (no_model, "model"),
            (bad_kind, "gemini"),
            (bad_host, "exa mple.com"),
        ] {
            let err = save(&path, &form, None).unwrap_err();
            assert!(err.to_string().contains(expect), "{err}");
            assert_eq!(std::fs::read_to_string(&path).unwrap(), "mode = \"ask\"\n");
        }
    }

    fn server(name: &str, command: &str, url: &str) -> McpServerSettings {
        McpServerSettings {
            name: name.into(),
            command: command.into(),
            args: vec!["-y".into(), "server-everything".into()],
            url: url.into(),
            enabled: true,
            startup_timeout_secs: 20,
            env_names: vec![],
            header_names: vec![],
        }
    }

    #[test]
    fn mcp_servers_are_added_edited_renamed_and_removed_keeping_their_secrets_and_comments() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(
            &path,
            "mode = \"ask\"\n\n# the git server\n[mcp.servers.git]\ncommand = \"uvx\"\nargs = [\"mcp-server-git\"]\nenv = { GIT_TOKEN = \"s3cret\" }\n",
        )
        .unwrap();
        let config = save_mcp_server(&path, &server("everything", "npx", ""), None).unwrap();
        assert_eq!(config.mcp.servers["everything"].args, ["-y", "server-everything"]);
        assert_eq!(config.mcp.servers["everything"].startup_timeout_secs, 20);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("[mcp.servers.everything]\ncommand = \"npx\""), "{text}");
        assert!(!text.contains("[mcp]\n") && !text.contains("[mcp.servers]\n"), "{text}");

        // Edit git: switched off, renamed; its env (a secret the form never saw) stays.
        let mut git = server("repo", "uvx", "");
        git.args = vec!["mcp-server-git".into()];
        git.enabled = false;
        let config = save_mcp_server(&path, &git, Some("git")).unwrap();
        assert!(!config.mcp.servers.contains_key("git"));
        let repo = &config.mcp.servers["repo"];
        assert_eq!((repo.enabled, repo.env["GIT_TOKEN"].as_str()), (false, "s3cret"));
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("# the git server\n[mcp.servers.repo]"), "{text}");

        // A stdio server becomes an HTTP one: no command or args left over.
        let config =
            save_mcp_server(&path, &server("everything", "", "http://127.0.0.1:3001/mcp"), Some("everything")).unwrap();
        let everything = &config.mcp.servers["everything"];
        assert_eq!((everything.command.as_deref(), everything.args.len()), (None, 0));

        let config = remove_mcp_server(&path, "everything").unwrap();
        assert_eq!(config.mcp.servers.keys().collect::<Vec<_>>(), ["repo"]);
        assert_eq!(Config::load(&path).unwrap(), config);
    }

    #[test]
    fn a_bad_mcp_server_form_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        let before = "[mcp.servers.time]\ncommand = \"uvx\"\n";
        std::fs::write(&path, before).unwrap();
        let mut zero = server("t2", "uvx", "");
        zero.startup_timeout_secs = 0;
        let cases = [
            (server("my server", "uvx", ""), None, "cannot name"),
            (server("t2", "", ""), None, "command"),
            (server("t2", "uvx", "http://x"), None, "not both"),
            (server("t2", "", "ftp://x"), None, "http(s)"),
            (server("time", "uvx", ""), None, "already exists"),
            (server("t2", "uvx", ""), Some("nope"), "no MCP server"),
            (zero, None, "at least one second"),
        ];
        for (form, previous, expect) in cases {
            let err = save_mcp_server(&path, &form, previous).unwrap_err();
            assert!(err.to_string().contains(expect), "{err}");
            assert_eq!(std::fs::read_to_string(&path).unwrap(), before);
        }
        assert!(remove_mcp_server(&path, "nope").unwrap_err().to_string().contains("no MCP server"));
    }
}
