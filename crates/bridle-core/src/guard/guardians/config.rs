//! The config guardian: writes to files that make code run later.
//!
//! Rule (DESIGN §6): changing a file that decides what an approved command will run —
//! `package.json`'s scripts, a `Makefile`, `build.rs`, `.cargo/config.toml`, git hooks, CI
//! workflows, `.envrc`, a test runner's or linter's config that is code (`conftest.py`,
//! `vite.config.ts`), a build wrapper (`gradlew`), editor and dev-container settings, a module
//! shadowing a standard one (`json.py`), the instructions every later agent session reads
//! (`AGENTS.md`) ... — is a medium finding, whichever tool does it (a file tool, or a
//! shell redirection, `sed -i`, `tee`, `cp`, `mv`), so approving `npm test` once cannot be
//! turned into anything by a silent edit. Paths are matched workspace-relative and canonical
//! (`src/../Makefile` is `Makefile`), case-insensitively (macOS file systems are), at any depth
//! (a monorepo's `web/package.json` runs scripts too).
//!
//! Left out on purpose: `Dockerfile` (what it runs, runs in a container; editing it is
//! everyday work) and source files in general (tests run code too, but editing code is the
//! job; these are the files that name *which* commands run).

use bridle_protocol::{Finding, Severity};

use super::{finding, list, ShellView};
pub use crate::config::{is_exec_config, EXEC_CONFIG_FILES};
use crate::guard::places::Place;
use crate::sandbox::Access;

const GUARDIAN: &str = "config";

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
