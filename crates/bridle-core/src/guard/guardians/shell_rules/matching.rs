//! Matching one compiled shell rule against one simple command, and the structural checks the
//! rule file names (`fork-bomb`, `pipe-to-shell`, `kill-all`).
//!
//! Rule: every condition a rule gives must hold; within a condition, any listed value will do.

use super::super::{PathOperand, ShellView};
use super::{secrets, Check, ShellRule, TargetClass};
use crate::guard::places::Place;
use crate::guard::shell::{is_shell, is_shell_or_interpreter, NestedKind, SimpleCommand};

/// Values given to options that come before a subcommand (`git -C dir push`).
const GLOBAL_OPTIONS_WITH_VALUE: &[&str] =
    &["-C", "-c", "--git-dir", "--work-tree", "--namespace", "--prefix", "--cwd", "--dir", "-F", "--filter"];

fn positional_values(cmd: &SimpleCommand) -> Vec<&str> {
    let mut out = Vec::new();
    let mut skip = false;
    let mut after_dashes = false;
    for w in cmd.args() {
        let v = w.value.as_str();
        if skip {
            skip = false;
            continue;
        }
        if !after_dashes && v == "--" {
            after_dashes = true;
            continue;
        }
        if !after_dashes && v.starts_with('-') && v != "-" {
            skip = GLOBAL_OPTIONS_WITH_VALUE.contains(&v);
            continue;
        }
        out.push(v);
    }
    out
}

impl ShellRule {
    pub(super) fn matches(&self, view: &ShellView, index: usize, cmd: &SimpleCommand, paths: &[PathOperand]) -> bool {
        if !self.programs.is_empty() {
            let Some(program) = cmd.program.as_deref() else { return false };
            let named = self.programs.iter().any(|p| match p.strip_suffix('*') {
                Some(prefix) => program.starts_with(prefix),
                None => p == program,
            });
            if !named {
                return false;
            }
        }
        if !self.wrappers.is_empty() && !cmd.wrappers.iter().any(|w| self.wrappers.contains(w)) {
            return false;
        }
        if !self.subcommands.is_empty() || self.max_positionals.is_some() {
            let positionals = positional_values(cmd);
            let starts = |sub: &Vec<String>| {
                if sub.is_empty() {
                    positionals.is_empty()
                } else {
                    positionals.len() >= sub.len() && sub.iter().zip(&positionals).all(|(a, b)| a == b)
                }
            };
            if !self.subcommands.is_empty() && !self.subcommands.iter().any(starts) {
                return false;
            }
            if self.max_positionals.is_some_and(|max| positionals.len() > max) {
                return false;
            }
        }
        if !self.flags.is_empty() && !self.flags.iter().any(|f| cmd.has_flag(f)) {
            return false;
        }
        if self.without_flags.iter().any(|f| cmd.has_flag(f)) {
            return false;
        }
        if let Some(set) = &self.args {
            let hit =
                cmd.args().iter().any(|w| set.is_match(&w.value)) || cmd.stdin_text.iter().any(|t| set.is_match(t));
            if !hit {
                return false;
            }
        }
        if let Some(class) = self.targets {
            if !paths.iter().any(|p| p.writes && in_class(p, class)) {
                return false;
            }
        }
        if let Some(set) = &self.write_targets {
            let hit = paths.iter().any(|p| {
                p.writes && !p.located.via_empty_variable && set.is_match(&p.located.absolute.to_string_lossy())
            });
            if !hit {
                return false;
            }
        }
        if let Some(set) = &self.any_targets {
            let hit = paths.iter().any(|p| set.is_match(&p.located.absolute.to_string_lossy()))
                || cmd.args().iter().any(|w| set.is_match(&w.value))
                || cmd.redirects.iter().any(|r| set.is_match(&r.target.value));
            if !hit {
                return false;
            }
        }
        if let Some(set) = &self.assignments {
            if !cmd.assignments.iter().any(|a| set.is_match(&a.value)) {
                return false;
            }
        }
        match self.check {
            None => true,
            Some(Check::ForkBomb) => fork_bomb(view, cmd),
            Some(Check::PipeToShell) => pipe_to_shell(cmd),
            // `kill -9 -1`: pid -1 after a signal is every process the user may signal.
            Some(Check::KillAll) => cmd.args().iter().skip(1).any(|w| targets_everything(&w.value)),
            Some(Check::ReadsOutside) => paths.iter().any(|p| {
                !p.located.via_empty_variable && matches!(p.located.place, Place::Outside | Place::Sensitive(_))
            }),
            Some(Check::RunsDownload) => view.runs_download.get(index).copied().unwrap_or(false),
            Some(Check::HuntsSecrets) => secrets::hunts(cmd, paths),
            Some(Check::ListsSecrets) => secrets::lists(cmd, paths),
            Some(Check::ReadsSecretFolder) => secrets::reads_folder(cmd, paths),
            // A program run from shared scratch space: anyone could have put it there.
            Some(Check::ProgramFromScratch) => cmd
                .words
                .first()
                .is_some_and(|w| !w.expands && (w.value.starts_with("/tmp/") || w.value.starts_with("/var/tmp/"))),
        }
    }
}

/// A `kill` target that reaches every process: `-1` in any spelling (`-01`, `" -1"`), or
/// pid 1 (init: the machine goes down with it).
fn targets_everything(value: &str) -> bool {
    let v = value.trim();
    let digits = v.strip_prefix('-').unwrap_or(v);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) && digits.parse::<u64>() == Ok(1)
}

fn in_class(p: &PathOperand, class: TargetClass) -> bool {
    let l = &p.located;
    match class {
        TargetClass::System => l.system && !l.via_empty_variable,
        TargetClass::SystemIfUnset => l.system && l.via_empty_variable,
        TargetClass::Outside => !l.via_empty_variable && matches!(l.place, Place::Outside | Place::Sensitive(_)),
        TargetClass::Scratch => !l.via_empty_variable && l.place == Place::Scratch,
        TargetClass::WorkspaceRoot => !l.via_empty_variable && l.place == Place::Inside(String::new()),
    }
}

/// A function that calls itself in the background or in a pipe, from inside its own body.
fn fork_bomb(view: &ShellView, cmd: &SimpleCommand) -> bool {
    let (Some(function), Some(program)) = (cmd.function.as_deref(), cmd.program.as_deref()) else { return false };
    let piped = view.script.pipelines.get(cmd.pipeline).is_some_and(|stages| stages.len() > 1);
    function == program && (cmd.background || piped)
}

/// Programs that fetch from the network.
const FETCHERS: &[&str] = &["curl", "wget", "fetch", "aria2c", "http", "https", "xh", "nc", "ncat", "lwp-request"];

/// `... | sh`, `bash <(...)`, `source <(...)`, `sh -c "$(curl ...)"`, `python -c "$(curl ...)"`.
fn pipe_to_shell(cmd: &SimpleCommand) -> bool {
    if cmd.stage > 0 && cmd.reads_code_from_stdin() {
        return true;
    }
    let Some(program) = cmd.program.as_deref() else { return false };
    let runs_code = is_shell(program) || matches!(program, "source" | "." | "eval");
    let fetched = |text: &str| {
        text.split_whitespace().next().is_some_and(|first| FETCHERS.contains(&crate::guard::shell::basename(first)))
    };
    cmd.words.iter().any(|w| {
        w.nested.iter().any(|n| {
            (runs_code && n.kind == NestedKind::Process)
                || ((runs_code || cmd.dynamic || is_shell_or_interpreter(program)) && fetched(&n.text))
        })
    })
}
