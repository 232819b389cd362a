//! The config guardian: writes to files that make code run later.
//!
//! Rule (DESIGN §6): changing a file that decides what an approved command will run —
//! `package.json`'s scripts, a `Makefile`, `build.rs`, `.cargo/config.toml`, git hooks, CI
//! workflows, `.envrc` ... — is a medium finding, whichever tool does it (a file tool, or a
//! shell redirection, `sed -i`, `tee`, `cp`, `mv`), so approving `npm test` once cannot be
//! turned into anything by a silent edit. Paths are matched workspace-relative and canonical
//! (`src/../Makefile` is `Makefile`), case-insensitively (macOS file systems are), at any depth
//! (a monorepo's `web/package.json` runs scripts too).
//!
//! Left out on purpose: `Dockerfile` (what it runs, runs in a container; editing it is
//! everyday work) and source files in general (tests run code too, but editing code is the
//! job; these are the files that name *which* commands run).

use std::sync::LazyLock;

use bridle_protocol::{Finding, Severity};
use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use super::{finding, list, ShellView};
use crate::guard::places::Place;
use crate::sandbox::Access;

const GUARDIAN: &str = "config";

/// Files that make code run later, as workspace-relative globs.
pub const EXEC_CONFIG_FILES: &[&str] = &[
    "**/package.json",
    "**/.npmrc",
    "**/.yarnrc",
    "**/.yarnrc.yml",
    "**/bunfig.toml",
    "**/deno.json",
    "**/deno.jsonc",
    "**/pyproject.toml",
    "**/setup.py",
    "**/setup.cfg",
    "**/tox.ini",
    "**/noxfile.py",
    "**/Pipfile",
    "**/Cargo.toml",
    "**/build.rs",
    "**/.cargo/config",
    "**/.cargo/config.toml",
    "**/rust-toolchain",
    "**/rust-toolchain.toml",
    "**/Makefile",
    "**/makefile",
    "**/GNUmakefile",
    "**/*.mk",
    "**/CMakeLists.txt",
    "**/meson.build",
    "**/*.gradle",
    "**/*.gradle.kts",
    "**/pom.xml",
    "**/Gemfile",
    "**/Rakefile",
    "**/justfile",
    "**/.justfile",
    "**/Taskfile.yml",
    "**/Taskfile.yaml",
    "**/.git/hooks/**",
    "**/.husky/**",
    "**/lefthook.yml",
    "**/.lefthook.yml",
    "**/.pre-commit-config.yaml",
    "**/.github/workflows/**",
    "**/.github/actions/**",
    "**/.gitlab-ci.yml",
    "**/.circleci/**",
    "**/Jenkinsfile",
    "**/azure-pipelines.yml",
    "**/.envrc",
    "**/.mise.toml",
    "**/mise.toml",
    "**/.tool-versions",
    "**/.vscode/tasks.json",
    "**/docker-compose.yml",
    "**/docker-compose.yaml",
    "**/compose.yml",
    "**/compose.yaml",
];

static EXEC_CONFIG: LazyLock<Option<GlobSet>> = LazyLock::new(|| {
    let mut builder = GlobSetBuilder::new();
    for pattern in EXEC_CONFIG_FILES {
        let glob = GlobBuilder::new(pattern).case_insensitive(true).literal_separator(true).build().ok()?;
        builder.add(glob);
    }
    builder.build().ok()
});

/// Whether a workspace-relative POSIX path is a file that makes code run later (the config
/// guardian's list). Approvals use it to forget command approvals when such a file changes.
pub fn is_exec_config(workspace_relative_posix_path: &str) -> bool {
    let path = workspace_relative_posix_path.trim_start_matches("./");
    match EXEC_CONFIG.as_ref() {
        Some(set) => set.is_match(path),
        // The list is fixed and a test proves it compiles; were it not to, every file counts.
        None => true,
    }
}

/// Findings for a file tool's writes, given each path's access and canonical workspace-relative
/// form (`None` when not inside).
pub(crate) fn judge_file_call(paths: &[(Access, Option<String>)]) -> Vec<Finding> {
    let changed: Vec<String> = paths
        .iter()
        .filter(|(access, _)| *access == Access::Write)
        .filter_map(|(_, rel)| rel.clone())
        .filter(|rel| is_exec_config(rel))
        .collect();
    report(&changed)
}

/// Findings for a shell command's writes.
pub(crate) fn judge_shell(view: &ShellView) -> Vec<Finding> {
    let changed: Vec<String> = view
        .commands()
        .flat_map(|(_, paths, _)| paths.iter())
        .filter(|p| p.writes)
        .filter_map(|p| match &p.located.place {
            Place::Inside(rel) if is_exec_config(rel) => Some(rel.clone()),
            _ => None,
        })
        .collect();
    report(&changed)
}

fn report(changed: &[String]) -> Vec<Finding> {
    if changed.is_empty() {
        return Vec::new();
    }
    vec![finding(
        GUARDIAN,
        "exec-config-write",
        Severity::Medium,
        format!("changes {}, which decides what commands run later (build, test, hooks, CI)", list(changed)),
    )]
}
