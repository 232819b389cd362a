//! Writing a rule (or an allowed host) into the user's config file, as an "approve always" answer
//! does.
//!
//! Rule: the file is edited, never regenerated — the user's comments, key order and layout
//! survive (`toml_edit`); the caller checks the rule before it is written (the rule language is
//! the guard's, which checks and then calls this), so the file always loads again; a pattern already in the list is not added twice; a missing file, `[rules]` table or
//! list is created; and the write is atomic (a temp file in the same folder, fsync, rename,
//! fsync of the folder), so a crash leaves the old file or the new one, never half of one.

use std::fs;
use std::io::Write;
use std::path::Path;

use toml_edit::{Array, DocumentMut, Item, Value};

use super::ConfigError;

/// One of the three rule lists of `[rules]` (the protocol's: the window names one too).
pub use bridle_protocol::RuleList;

/// Adds `pattern` to `[rules] <list>` in `config_file`, keeping everything else as it is. The
/// pattern is written as given: the caller has checked it compiles.
pub fn append_rule(config_file: &Path, list: RuleList, pattern: &str) -> Result<(), ConfigError> {
    append_to_list(config_file, &["rules", list.as_str()], pattern)
}

/// Adds `pattern` to `[sandbox.network] allow` in `config_file` (an "always" answer about a host),
/// the same way: the caller has checked it reads as a host pattern.
pub fn append_network_allow(config_file: &Path, pattern: &str) -> Result<(), ConfigError> {
    append_to_list(config_file, &["sandbox", "network", "allow"], pattern)
}

/// Adds `pattern` to the list at `path` (tables, then the list's key), creating what is missing.
fn append_to_list(config_file: &Path, path: &[&str], pattern: &str) -> Result<(), ConfigError> {
    let shown = config_file.display().to_string();
    let parse_error = |message: String| ConfigError::Parse { path: shown.clone(), message };
    let (text, permissions) = match fs::read_to_string(config_file) {
        Ok(text) => (text, fs::metadata(config_file).ok().map(|m| m.permissions())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => (String::new(), None),
        Err(source) => return Err(ConfigError::Read { path: shown, source }),
    };
    let mut doc: DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| parse_error(e.to_string()))?;
    let Some((key, tables)) = path.split_last() else { return Ok(()) };
    let mut table = doc.as_table_mut() as &mut dyn toml_edit::TableLike;
    for (depth, name) in tables.iter().enumerate() {
        let entry = table.entry(name).or_insert_with(toml_edit::table);
        table = entry
            .as_table_like_mut()
            .ok_or_else(|| parse_error(format!("`{}` is not a table", tables[..=depth].join("."))))?;
    }
    let entry = table.entry(key).or_insert(Item::Value(Value::Array(Array::new())));
    let Some(array) = entry.as_array_mut() else {
        return Err(parse_error(format!("`{}` is not a list", path.join("."))));
    };
    if array.iter().any(|v| v.as_str() == Some(pattern)) {
        return Ok(());
    }
    push_like_the_others(array, pattern);
    write_atomically(config_file, doc.to_string().as_bytes(), permissions)
        .map_err(|source| ConfigError::Write { path: config_file.display().to_string(), source })
}

/// Appends to `array` with the layout of its last element (one per line stays one per line).
fn push_like_the_others(array: &mut Array, pattern: &str) {
    let decor = array.iter().last().map(|v| {
        let d = v.decor();
        (d.prefix().and_then(|p| p.as_str()).map(String::from), d.suffix().and_then(|s| s.as_str()).map(String::from))
    });
    array.push(pattern);
    if let (Some((prefix, suffix)), Some(new)) = (decor, array.iter_mut().last()) {
        let d = new.decor_mut();
        // The first element of `["a"]` has no leading space; the ones after it do.
        d.set_prefix(prefix.filter(|p| p.contains('\n')).unwrap_or_else(|| " ".into()));
        d.set_suffix(suffix.unwrap_or_default());
    }
}

/// Replaces `path` with `bytes` atomically (a temp file in the same folder, fsync, rename, fsync of
/// the folder), with `permissions` when given.
pub fn write_atomically(path: &Path, bytes: &[u8], permissions: Option<fs::Permissions>) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    fs::create_dir_all(&dir)?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "config.toml".into());
    let temp = dir.join(format!(".{name}.{}.{}.tmp", std::process::id(), rand::random::<u32>()));
    let result = (|| {
        let mut file = fs::OpenOptions::new().write(true).create_new(true).open(&temp)?;
        if let Some(p) = permissions {
            file.set_permissions(p)?;
        }
        file.write_all(bytes)?;
        file.sync_all()?;
        fs::rename(&temp, path)?;
        fs::File::open(&dir)?.sync_all()
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::config::Config;
    use pretty_assertions::assert_eq;

    #[test]
    fn keeps_comments_and_layout_and_appends_to_the_list() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        let before = "# my config\nmode = \"auto\" # fast\n\n[rules]\n# reviewed\nallow = [\n  \"bash(git status*)\",\n]\ndeny = [\"bash(rm *)\"]\n";
        fs::write(&path, before).unwrap();
        append_rule(&path, RuleList::Allow, "bash(cargo test)").unwrap();
        let after = fs::read_to_string(&path).unwrap();
        assert_eq!(
            after,
            "# my config\nmode = \"auto\" # fast\n\n[rules]\n# reviewed\nallow = [\n  \"bash(git status*)\",\n  \"bash(cargo test)\",\n]\ndeny = [\"bash(rm *)\"]\n"
        );
        append_rule(&path, RuleList::Deny, "edit_file(.env)").unwrap();
        let config = Config::load(&path).unwrap();
        assert_eq!(config.rules.deny, ["bash(rm *)", "edit_file(.env)"]);
        let text = fs::read_to_string(&path).unwrap();
        assert!(text.contains("deny = [\"bash(rm *)\", \"edit_file(.env)\"]"), "{text}");
    }

    #[test]
    fn does_not_add_a_duplicate() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        append_rule(&path, RuleList::Allow, "read_file").unwrap();
        let once = fs::read_to_string(&path).unwrap();
        append_rule(&path, RuleList::Allow, "read_file").unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), once);
    }

    #[test]
    fn creates_the_file_and_the_table() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nested/config.toml");
        append_rule(&path, RuleList::Allow, "bash(ls \\*.rs)").unwrap();
        let config = Config::load(&path).unwrap();
        assert_eq!(config.rules.allow, ["bash(ls \\*.rs)"]);
        let other = dir.path().join("other.toml");
        fs::write(&other, "mode = \"ask\"\n").unwrap();
        append_rule(&other, RuleList::Ask, "bash(git push*)").unwrap();
        assert_eq!(Config::load(&other).unwrap().rules.ask, ["bash(git push*)"]);
        assert!(fs::read_to_string(&other).unwrap().starts_with("mode = \"ask\"\n"));
        let leftovers: Vec<_> = fs::read_dir(dir.path()).unwrap().filter_map(Result::ok).collect();
        assert_eq!(leftovers.len(), 2, "no temp files are left behind: {leftovers:?}");
    }

    #[test]
    fn keeps_the_file_mode() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        fs::write(&path, "").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
        append_rule(&path, RuleList::Allow, "read_file").unwrap();
        assert_eq!(fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
    }
}
