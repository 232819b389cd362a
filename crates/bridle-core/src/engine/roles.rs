//! The roles a child may be given (DESIGN §16.1): the config's `[agents.roles]`, then each
//! `.agents/roles/NAME.md` of the workspace whose name the config does not use.
//!
//! Rule: a role file is read through the one door (`fs/`): beneath the workspace, a regular
//! file only (a link is not followed), at most [`ROLE_LIMIT`] bytes; one that cannot be read or
//! parsed is left out with its reason.

use std::collections::BTreeMap;
use std::path::Path;

use crate::config::{AgentsConfig, Role};
use crate::fs::{Entry, WorkspaceFs};

/// The largest role file read.
const ROLE_LIMIT: u64 = 64 * 1024;

/// The roles a session in `workspace` may give under `config` (the user's own config wins a
/// name), and why each role file left out was.
pub(super) fn roles_in(config: &AgentsConfig, workspace: &Path) -> (BTreeMap<String, Role>, Vec<String>) {
    let mut roles = config.roles.clone();
    let mut problems = Vec::new();
    let folder = Path::new(".agents/roles");
    // Through the one door: beneath the workspace, regular files only, links not followed.
    let Ok(fs) = WorkspaceFs::open(workspace) else { return (roles, problems) };
    let Ok(Some(mut names)) = fs.names(folder) else { return (roles, problems) };
    names.sort();
    for file in names {
        let file = Path::new(&file);
        let (Some(name), Some("md")) =
            (file.file_stem().and_then(|s| s.to_str()), file.extension().and_then(|s| s.to_str()))
        else {
            continue;
        };
        if roles.contains_key(name) {
            continue;
        }
        let rel = folder.join(file);
        let read = match fs.entry(&rel) {
            Ok(Some(Entry::File { .. })) => match fs.read_at_most(&rel, ROLE_LIMIT) {
                Ok(Some(bytes)) => String::from_utf8(bytes).map_err(|_| "it is not UTF-8 text".to_string()),
                Ok(None) => Err("it is gone".to_string()),
                Err(e) => Err(e.to_string()),
            },
            Ok(_) => Err("it is not a regular file (a link is not followed)".to_string()),
            Err(e) => Err(e.to_string()),
        };
        match read.and_then(|text| Role::parse(&text)) {
            Ok(role) => {
                roles.insert(name.to_string(), role);
            }
            Err(why) => problems.push(format!("{}: {why}", workspace.join(&rel).display())),
        }
    }
    (roles, problems)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use bridle_protocol::Mode;

    #[test]
    fn a_role_file_reads_its_front_matter_and_the_config_wins_a_name() {
        let dir = tempfile::tempdir().unwrap();
        let roles = dir.path().join(".agents/roles");
        std::fs::create_dir_all(&roles).unwrap();
        std::fs::write(
            roles.join("reader.md"),
            "---\ntools: [read_file, grep_search]\nmode: read-only\n---\nRead and summarise.\n",
        )
        .unwrap();
        std::fs::write(roles.join("mine.md"), "From the file.\n").unwrap();
        std::fs::write(roles.join("broken.md"), "---\ntools: 3: x\n---\n").unwrap();
        // A link is not followed, wherever it points.
        std::os::unix::fs::symlink("/etc/hostname", roles.join("linked.md")).unwrap();
        let config = AgentsConfig {
            roles: BTreeMap::from([(
                "mine".to_string(),
                Role { instructions: "From the config.".into(), ..Role::default() },
            )]),
            ..AgentsConfig::default()
        };
        let (found, problems) = roles_in(&config, dir.path());
        let reader = &found["reader"];
        assert_eq!(reader.tools.as_deref(), Some(&["read_file".to_string(), "grep_search".to_string()][..]));
        assert_eq!(reader.mode, Some(Mode::ReadOnly));
        assert_eq!(reader.instructions, "Read and summarise.");
        assert_eq!(found["mine"].instructions, "From the config.");
        assert!(!found.contains_key("broken") && !found.contains_key("linked"));
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].contains("broken.md") && problems[1].contains("linked.md"), "{problems:?}");
    }
}
