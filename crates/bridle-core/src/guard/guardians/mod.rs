//! The guardians of DESIGN §6 step 4. Each looks at one call and reports findings
//! `{ guardian, rule, severity, message }`; none of them decides anything — the decision table
//! does, from the mode, the tool's kind, the user's rules and the worst finding.
//!
//! Rule: a shell command is read once ([`ShellView`]) and every guardian judges that same
//! reading — its simple commands after unwrapping, the working directory each runs in, and the
//! paths each touches — so no guardian can be fooled by a form another one understood.
//!
//! Judging stays linear in the line: the working directory is shared by the commands that run
//! in it, each lookup from it and each glob's matcher is charged to the line's budget (a
//! refused one asks, like everything the guard stopped following), and no guardian compares
//! every command, stage or path with every other.

pub(crate) mod config;
pub(crate) mod evasion;
pub(crate) mod path;
pub(crate) mod shell_rules;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bridle_protocol::{Finding, Severity};

use super::places::{Cwd, GlobChecks, Located, Places};
use super::shell::budget::Budget;
use super::shell::operands::{operands, Operand};
use super::shell::{self, Script, Signal, SimpleCommand};
use crate::sandbox::PathSandbox;

/// A path one simple command touches, located.
#[derive(Debug, Clone)]
pub(crate) struct PathOperand {
    /// As written (less an `of=` or `@` prefix).
    pub text: String,
    /// The command creates, changes or deletes it.
    pub writes: bool,
    /// Where it leads.
    pub located: Located,
}

/// A shell command, read once for every guardian.
#[derive(Debug)]
pub(crate) struct ShellView {
    /// The reading.
    pub script: Script,
    /// Each command's working directory (same index as `script.commands`).
    pub cwds: Vec<Cwd>,
    /// Each command's paths (same index as `script.commands`).
    pub paths: Vec<Vec<PathOperand>>,
}

impl ShellView {
    pub(crate) fn new(command: &str, places: &Places) -> Self {
        let (mut script, budget) = shell::parse_budgeted(command);
        let mut lookup = Lookup { places, budget, globs: GlobChecks::default() };
        let mut cwds = Vec::with_capacity(script.commands.len());
        let mut paths = Vec::with_capacity(script.commands.len());
        let mut cwd = Cwd::Workspace;
        // `cd -` returns to the folder before the last change; `pushd`/`popd` keep a stack.
        let mut previous = Cwd::Workspace;
        let mut stack: Vec<Cwd> = Vec::new();
        for cmd in &script.commands {
            // `env -C DIR cmd` runs cmd in DIR, for that command only.
            let own = cmd.chdir.as_deref().and_then(|dir| lookup.locate(dir, &cwd, false)).map(|l| at(l.absolute));
            let here = own.unwrap_or_else(|| cwd.clone());
            let located: Vec<PathOperand> = operands(cmd)
                .into_iter()
                .filter(worth_judging)
                .filter_map(|op| {
                    let located = lookup.locate(&op.path, &here, op.certain)?;
                    Some(PathOperand { text: op.path, writes: op.writes, located })
                })
                .collect();
            cwds.push(here);
            paths.push(located);
            let next = match cmd.program.as_deref() {
                Some("cd" | "pushd") => Some(lookup.next_cwd(cmd, &cwd, &previous)),
                Some("popd") => Some(stack.pop().unwrap_or(Cwd::Unknown)),
                _ => None,
            };
            if let Some(next) = next {
                if cmd.program.as_deref() == Some("pushd") {
                    stack.push(cwd.clone());
                }
                previous = std::mem::replace(&mut cwd, next);
            }
        }
        if lookup.budget.exhausted() && !script.signals.contains(&Signal::TooLarge) {
            script.signals.push(Signal::TooLarge);
        }
        Self { script, cwds, paths }
    }

    /// Commands with their paths and working directories.
    pub(crate) fn commands(&self) -> impl Iterator<Item = (&SimpleCommand, &[PathOperand], &Cwd)> {
        self.script.commands.iter().zip(&self.paths).zip(&self.cwds).map(|((c, p), w)| (c, p.as_slice(), w))
    }
}

/// Looks paths up for one line, charging its [`Budget`] for the part of the working directory
/// the line made, which each lookup from there rereads. A line that goes one folder deeper with every `cd` makes every later lookup longer,
/// so without the charge `cd a; ` said 20,000 times costs the square of the line's length. A
/// refused lookup is made from [`Cwd::Unknown`], and the line carries [`Signal::TooLarge`]: it
/// asks, as every line the guard stopped following does. A glob's matcher is charged the same
/// way, once per distinct glob ([`GlobChecks`]).
struct Lookup<'p> {
    places: &'p Places,
    budget: Budget,
    globs: GlobChecks,
}

impl Lookup<'_> {
    fn locate(&mut self, text: &str, cwd: &Cwd, certain: bool) -> Option<Located> {
        let cwd = match cwd {
            Cwd::At(dir) if reads_cwd(text) && !self.budget.take(self.made_by_line(dir)) => &Cwd::Unknown,
            other => other,
        };
        self.places.locate(text, cwd, certain, &mut self.globs, &mut self.budget)
    }

    /// The part of a working directory the line made: below the workspace root, all of it
    /// elsewhere. The root itself is reread by every lookup, `cd` or not, and its length is the
    /// user's, not the line's.
    fn made_by_line(&self, dir: &Path) -> usize {
        let root = self.places.sandbox().map(PathSandbox::root);
        root.and_then(|root| dir.strip_prefix(root).ok()).unwrap_or(dir).as_os_str().len()
    }

    /// Where `cd`/`pushd` leads: `-` is the previous folder, a target only known at run time
    /// (`cd "$X"`, `cd $(...)`) is [`Cwd::Unknown`], so what follows is not judged as if still
    /// in the workspace.
    fn next_cwd(&mut self, cmd: &SimpleCommand, cwd: &Cwd, previous: &Cwd) -> Cwd {
        let Some(word) = cmd.positionals().first().copied() else {
            return self.locate("~", cwd, true).map_or(Cwd::Unknown, |l| at(l.absolute));
        };
        if word.value == "-" {
            return previous.clone();
        }
        if word.expands {
            return Cwd::Unknown;
        }
        self.locate(&word.value, cwd, true).map_or(Cwd::Unknown, |l| at(l.absolute))
    }
}

fn at(absolute: PathBuf) -> Cwd {
    Cwd::At(Arc::from(absolute))
}

/// Whether locating `text` joins it to the working directory: anything but an absolute path or
/// a home folder (`~+` and `$PWD` are the working directory itself).
fn reads_cwd(text: &str) -> bool {
    !(text.starts_with('/') || (text.starts_with('~') && !text.starts_with("~+")))
}

/// Certain operands are always judged; a guess when it could be a file name at all (no spaces,
/// no shell or regex punctuation, not a URL or an option). Relative guesses are judged too: a
/// symlink inside the workspace can lead out (`keys -> ~/.ssh`).
fn worth_judging(op: &Operand<'_>) -> bool {
    let t = op.path.as_str();
    if op.certain {
        return !t.is_empty();
    }
    let plain = t.replace("${", "$").replace('}', "");
    !(t.is_empty()
        || t.starts_with('-')
        || t.contains("://")
        || t.contains(char::is_whitespace)
        || plain.contains(['{', '|', '^', '(', ')', '<', '>', ';', '"', '\'', '\\', '`', '=']))
}

/// A finding of `guardian`.
pub(crate) fn finding(guardian: &str, rule: &str, severity: Severity, message: impl Into<String>) -> Finding {
    Finding { guardian: guardian.into(), rule: rule.into(), severity, message: message.into() }
}

/// Up to three items, then how many more.
pub(crate) fn list(items: &[String]) -> String {
    // A set, not a scan of what is kept: a line may name tens of thousands of paths.
    let mut seen: HashSet<&String> = HashSet::with_capacity(items.len());
    let unique: Vec<&String> = items.iter().filter(|item| seen.insert(item)).collect();
    let shown: Vec<String> = unique.iter().take(3).map(|s| format!("`{s}`")).collect();
    match unique.len() {
        n if n > 3 => format!("{} and {} more", shown.join(", "), n - 3),
        _ => shown.join(", "),
    }
}
