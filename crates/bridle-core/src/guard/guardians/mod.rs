//! The guardians of DESIGN §6 step 4. Each looks at one call and reports findings
//! `{ guardian, rule, severity, message }`; none of them decides anything — the decision table
//! does, from the mode, the tool's kind, the user's rules and the worst finding.
//!
//! Rule: a shell command is read once ([`ShellView`]) and every guardian judges that same
//! reading — its simple commands after unwrapping, the working directory each runs in, and the
//! paths each touches — so no guardian can be fooled by a form another one understood.

pub(crate) mod config;
pub(crate) mod evasion;
pub(crate) mod path;
pub(crate) mod shell_rules;

use bridle_protocol::{Finding, Severity};

use super::places::{Cwd, Located, Places};
use super::shell::operands::{operands, Operand};
use super::shell::{self, Script, SimpleCommand};

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
        let script = shell::parse(command);
        let mut cwds = Vec::with_capacity(script.commands.len());
        let mut paths = Vec::with_capacity(script.commands.len());
        let mut cwd = Cwd::Workspace;
        // `cd -` returns to the folder before the last change; `pushd`/`popd` keep a stack.
        let mut previous = Cwd::Workspace;
        let mut stack: Vec<Cwd> = Vec::new();
        for cmd in &script.commands {
            // `env -C DIR cmd` runs cmd in DIR, for that command only.
            let own = cmd.chdir.as_deref().and_then(|dir| places.locate(dir, &cwd, false)).map(|l| Cwd::At(l.absolute));
            let here = own.unwrap_or_else(|| cwd.clone());
            cwds.push(here.clone());
            let located: Vec<PathOperand> = operands(cmd)
                .into_iter()
                .filter(worth_judging)
                .filter_map(|op| {
                    let located = places.locate(&op.path, &here, op.certain)?;
                    Some(PathOperand { text: op.path, writes: op.writes, located })
                })
                .collect();
            paths.push(located);
            let next = match cmd.program.as_deref() {
                Some("cd" | "pushd") => Some(next_cwd(cmd, &cwd, &previous, places)),
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
        Self { script, cwds, paths }
    }

    /// Commands with their paths and working directories.
    pub(crate) fn commands(&self) -> impl Iterator<Item = (&SimpleCommand, &[PathOperand], &Cwd)> {
        self.script.commands.iter().zip(&self.paths).zip(&self.cwds).map(|((c, p), w)| (c, p.as_slice(), w))
    }
}

/// Where `cd`/`pushd` leads: `-` is the previous folder, a target only known at run time
/// (`cd "$X"`, `cd $(...)`) is [`Cwd::Unknown`], so what follows is not judged as if still in
/// the workspace.
fn next_cwd(cmd: &SimpleCommand, cwd: &Cwd, previous: &Cwd, places: &Places) -> Cwd {
    let Some(word) = cmd.positionals().first().copied() else {
        return places.locate("~", cwd, true).map_or(Cwd::Unknown, |l| Cwd::At(l.absolute));
    };
    if word.value == "-" {
        return previous.clone();
    }
    if word.expands {
        return Cwd::Unknown;
    }
    places.locate(&word.value, cwd, true).map_or(Cwd::Unknown, |l| Cwd::At(l.absolute))
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
    let mut unique: Vec<&String> = Vec::new();
    for item in items {
        if !unique.contains(&item) {
            unique.push(item);
        }
    }
    let shown: Vec<String> = unique.iter().take(3).map(|s| format!("`{s}`")).collect();
    match unique.len() {
        n if n > 3 => format!("{} and {} more", shown.join(", "), n - 3),
        _ => shown.join(", "),
    }
}
