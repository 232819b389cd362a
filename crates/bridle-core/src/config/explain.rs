//! `bridle config explain`: each setting in force with where it came from — the managed policy,
//! the user's config file, or the built-in default (DESIGN §17).
//!
//! Rule: the answer is computed from the config as loaded (managed policy applied) and the
//! user's file as written, so it cannot drift from what the front ends actually use.

use std::path::Path;

use super::Config;

/// One setting in force.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Explained {
    /// Dotted key, e.g. `rules.deny`.
    pub key: String,
    /// Its value, as TOML.
    pub value: String,
    /// Where it came from: `managed <file>`, `user <file>`, `default`, or both files for a list
    /// the policy added to.
    pub source: String,
}

/// Every leaf setting of `config` (loaded from `user_file`, whose text is `user_text`), with
/// the managed policy's own keys first.
pub fn explain(config: &Config, user_file: &Path, user_text: Option<&str>) -> Vec<Explained> {
    let user: toml::Table = user_text.and_then(|t| t.parse().ok()).unwrap_or_default();
    let managed = config.managed.as_ref().map(|m| (m.file.display().to_string(), m.settings()));
    let managed_keys: Vec<String> =
        managed.as_ref().map(|(_, s)| s.iter().map(|(k, _, _)| k.clone()).collect()).unwrap_or_default();
    let mut out = Vec::new();
    if let Some((file, settings)) = &managed {
        for (key, value, _) in
            settings.iter().filter(|(k, _, _)| matches!(k.as_str(), "allowed_modes" | "sandbox.required"))
        {
            out.push(Explained { key: key.clone(), value: value.clone(), source: format!("managed {file}") });
        }
    }
    let Ok(toml::Value::Table(effective)) = toml::Value::try_from(config) else { return out };
    let mut leaves = Vec::new();
    flatten("", &toml::Value::Table(effective), &mut leaves);
    for (key, value) in leaves {
        let in_user = lookup(&user, &key).is_some();
        let is_managed = managed_keys.iter().any(|k| k == &key)
            || (key == "sandbox.enabled" && managed_keys.iter().any(|k| k == "sandbox.required"))
            || key.starts_with("telemetry.") && managed_keys.iter().any(|k| k == "telemetry.endpoint");
        let user_source = format!("user {}", user_file.display());
        let source = match (&managed, is_managed, in_user) {
            (Some((file, _)), true, true) => format!("managed {file} + {user_source}"),
            (Some((file, _)), true, false) => format!("managed {file}"),
            (_, _, true) => user_source,
            _ => "default".into(),
        };
        out.push(Explained { key, value: value.to_string(), source });
    }
    out
}

fn flatten(prefix: &str, value: &toml::Value, out: &mut Vec<(String, toml::Value)>) {
    match value {
        toml::Value::Table(table) if !table.is_empty() => {
            for (k, v) in table {
                let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                flatten(&key, v, out);
            }
        }
        other => out.push((prefix.to_string(), other.clone())),
    }
}

fn lookup<'a>(table: &'a toml::Table, key: &str) -> Option<&'a toml::Value> {
    let mut parts = key.split('.');
    let mut value = table.get(parts.next()?)?;
    for part in parts {
        value = value.as_table()?.get(part)?;
    }
    Some(value)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::config::Managed;

    #[test]
    fn each_setting_names_its_source() {
        let managed = Managed {
            file: "/etc/bridle/managed.toml".into(),
            policy: toml::from_str("allowed_modes = [\"ask\"]\n[rules]\ndeny = [\"bash(git push*)\"]\n").unwrap(),
        };
        let text = "mode = \"ask\"\n[rules]\nallow = [\"read_file\"]\n";
        let config = managed.apply(Config::parse(text).unwrap(), Path::new("/u/config.toml")).unwrap();
        let lines = explain(&config, Path::new("/u/config.toml"), Some(text));
        let source = |key: &str| lines.iter().find(|l| l.key == key).unwrap().source.clone();
        assert_eq!(source("allowed_modes"), "managed /etc/bridle/managed.toml");
        assert_eq!(source("rules.deny"), "managed /etc/bridle/managed.toml");
        assert_eq!(source("rules.allow"), "user /u/config.toml");
        assert_eq!(source("mode"), "user /u/config.toml");
        assert_eq!(source("limits.max_steps"), "default");
    }
}
