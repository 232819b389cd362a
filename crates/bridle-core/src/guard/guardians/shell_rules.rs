//! The shell-rule guardian: dangerous command families from a rule file shipped with the app
//! (`crates/bridle-core/rules/shell-rules.toml`, compiled in).
//!
//! Rule: rules match the *unwrapped simple commands* of a line — program basenames, whole
//! arguments, flags (`-r` inside `-rf`), the located paths a command writes — never raw
//! substrings of the line, so `/bin/rm`, `\rm`, `env rm` and `$(which rm)` are `rm`, and `echo
//! "rm -rf /"` is an echo. The file is parsed and its regexes checked once per process; if it
//! could not be (a build that broke it), every shell command gets a high finding, so the guard
//! fails closed, and [`validate_builtin_rules`] lets the app refuse to start. A rule's regexes are
//! compiled the first time a command reaches them (most rules name programs a session never runs:
//! compiling every set when the engine started held 1.3 MB at idle).

use std::collections::HashSet;
use std::sync::{LazyLock, OnceLock};

use bridle_protocol::{Finding, Severity};
use regex::RegexSet;
use serde::Deserialize;

mod matching;
mod secrets;

use super::{finding, ShellView};

const GUARDIAN: &str = "shell-rule";

/// The shipped rule file.
pub const BUILTIN_RULES: &str = include_str!("../../../rules/shell-rules.toml");

/// Why the shell rule file cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShellRuleError {
    /// Not TOML of the expected shape.
    #[error("the shell rule file is invalid: {0}")]
    Parse(String),
    /// A rule with a bad field.
    #[error("shell rule `{id}`: {message}")]
    Rule {
        /// The rule.
        id: String,
        /// What is wrong.
        message: String,
    },
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleFile {
    version: u32,
    rule: Vec<RawRule>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
enum TargetClass {
    System,
    SystemIfUnset,
    Outside,
    Scratch,
    WorkspaceRoot,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
enum Check {
    ForkBomb,
    PipeToShell,
    KillAll,
    ProgramFromScratch,
    ReadsOutside,
    RunsDownload,
    HuntsSecrets,
    ListsSecrets,
    ReadsSecretFolder,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRule {
    id: String,
    family: String,
    severity: Severity,
    message: String,
    #[serde(default)]
    programs: Vec<String>,
    #[serde(default)]
    wrappers: Vec<String>,
    #[serde(default)]
    subcommands: Vec<String>,
    #[serde(default)]
    flags: Vec<String>,
    #[serde(default)]
    without_flags: Vec<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    targets: Option<TargetClass>,
    #[serde(default)]
    write_targets: Vec<String>,
    #[serde(default)]
    any_targets: Vec<String>,
    #[serde(default)]
    assignments: Vec<String>,
    #[serde(default)]
    max_positionals: Option<usize>,
    #[serde(default)]
    check: Option<Check>,
    #[serde(default)]
    examples: Vec<String>,
    #[serde(default)]
    counter_examples: Vec<String>,
}

/// One compiled rule. `family`, `examples` and `counter_examples` are read by the tests that
/// hold the file to its word.
#[derive(Debug)]
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) struct ShellRule {
    pub id: String,
    pub family: String,
    pub severity: Severity,
    pub message: String,
    programs: Vec<String>,
    wrappers: Vec<String>,
    subcommands: Vec<Vec<String>>,
    flags: Vec<String>,
    without_flags: Vec<String>,
    args: Option<Patterns>,
    targets: Option<TargetClass>,
    write_targets: Option<Patterns>,
    any_targets: Option<Patterns>,
    assignments: Option<Patterns>,
    max_positionals: Option<usize>,
    check: Option<Check>,
    pub examples: Vec<String>,
    pub counter_examples: Vec<String>,
}

/// A compiled rule file.
#[derive(Debug)]
pub(crate) struct ShellRules {
    pub rules: Vec<ShellRule>,
}

static BUILTIN: LazyLock<Result<ShellRules, ShellRuleError>> = LazyLock::new(|| ShellRules::parse(BUILTIN_RULES));

/// Parses and compiles the shipped rule file; the number of rules, or why it cannot be used.
/// Call it at startup to refuse to run with a broken rule file.
pub fn validate_builtin_rules() -> Result<usize, ShellRuleError> {
    BUILTIN.as_ref().map(|r| r.rules.len()).map_err(Clone::clone)
}

pub(crate) fn builtin() -> Result<&'static ShellRules, &'static ShellRuleError> {
    BUILTIN.as_ref()
}

/// One field's regexes: their syntax checked when the file is read, the set compiled at the first
/// text it is asked about.
#[derive(Debug)]
struct Patterns {
    sources: Vec<String>,
    set: OnceLock<Option<RegexSet>>,
}

impl Patterns {
    /// Whether one of the regexes matches `text`. A set that does not compile (past the syntax
    /// check, only a regex over the engine's size limit) matches everything: the rule fires.
    fn is_match(&self, text: &str) -> bool {
        let set = self.set.get_or_init(|| {
            RegexSet::new(&self.sources)
                .inspect_err(|e| tracing::error!("a shell rule's regexes do not compile, so the rule fires: {e}"))
                .ok()
        });
        set.as_ref().is_none_or(|set| set.is_match(text))
    }
}

fn patterns(id: &str, field: &str, patterns: &[String]) -> Result<Option<Patterns>, ShellRuleError> {
    if patterns.is_empty() {
        return Ok(None);
    }
    for pattern in patterns {
        regex_syntax::Parser::new()
            .parse(pattern)
            .map_err(|e| ShellRuleError::Rule { id: id.into(), message: format!("{field}: {e}") })?;
    }
    Ok(Some(Patterns { sources: patterns.to_vec(), set: OnceLock::new() }))
}

impl ShellRules {
    pub(crate) fn parse(text: &str) -> Result<Self, ShellRuleError> {
        let file: RuleFile = toml::from_str(text).map_err(|e| ShellRuleError::Parse(e.to_string()))?;
        if file.version != 1 {
            return Err(ShellRuleError::Parse(format!("unknown version {}", file.version)));
        }
        let mut ids = HashSet::new();
        let mut rules = Vec::with_capacity(file.rule.len());
        for raw in file.rule {
            let id = raw.id.clone();
            let bad = |message: &str| ShellRuleError::Rule { id: id.clone(), message: message.into() };
            if !ids.insert(id.clone()) {
                return Err(bad("duplicate id"));
            }
            let matches_something = !raw.programs.is_empty()
                || !raw.wrappers.is_empty()
                || !raw.write_targets.is_empty()
                || !raw.any_targets.is_empty()
                || !raw.assignments.is_empty()
                || !raw.args.is_empty()
                || raw.check.is_some();
            if !matches_something {
                return Err(bad("matches every command: give programs, wrappers, targets, args, assignments or check"));
            }
            rules.push(ShellRule {
                args: patterns(&id, "args", &raw.args)?,
                write_targets: patterns(&id, "write_targets", &raw.write_targets)?,
                any_targets: patterns(&id, "any_targets", &raw.any_targets)?,
                assignments: patterns(&id, "assignments", &raw.assignments)?,
                subcommands: raw.subcommands.iter().map(|s| s.split_whitespace().map(String::from).collect()).collect(),
                id: raw.id,
                family: raw.family,
                severity: raw.severity,
                message: raw.message,
                programs: raw.programs,
                wrappers: raw.wrappers,
                flags: raw.flags,
                without_flags: raw.without_flags,
                targets: raw.targets,
                max_positionals: raw.max_positionals,
                check: raw.check,
                examples: raw.examples,
                counter_examples: raw.counter_examples,
            });
        }
        Ok(Self { rules })
    }

    /// How many of the rules' regex sets are compiled so far.
    #[cfg(test)]
    pub(crate) fn compiled(&self) -> usize {
        let sets = self.rules.iter().flat_map(|r| [&r.args, &r.write_targets, &r.any_targets, &r.assignments]);
        sets.flatten().filter(|p| p.set.get().is_some()).count()
    }

    /// The rules that match, with the command each matched first.
    pub(crate) fn matches<'r>(&'r self, view: &ShellView) -> Vec<(&'r ShellRule, String)> {
        let mut out: Vec<(&ShellRule, String)> = Vec::new();
        for (index, (cmd, paths, _)) in view.commands().enumerate() {
            for rule in &self.rules {
                if out.iter().any(|(r, _)| std::ptr::eq(*r, rule)) {
                    continue;
                }
                if rule.matches(view, index, cmd, paths) {
                    out.push((rule, cmd.raw.clone()));
                }
            }
        }
        out
    }

    /// The critical rules a command whose program is only known at run time would match as one
    /// of the programs they name, with that program and the command.
    fn critical_stand_ins<'r>(&'r self, view: &ShellView) -> Vec<(&'r ShellRule, String, String)> {
        let mut out: Vec<(&ShellRule, String, String)> = Vec::new();
        for (index, cmd, paths) in &view.stand_ins {
            let program = cmd.program.clone().unwrap_or_default();
            // A glob names the programs it matches; any other unknown word could be any of them,
            // so only what its arguments say counts (`$x -rf ~`), never the name alone.
            let globbed = view.script.commands.get(*index).is_some_and(|c| !c.words[0].value.contains('$'));
            let named = |rule: &ShellRule| rule.programs.iter().any(|p| p.trim_end_matches('*') == program);
            let telling = |rule: &ShellRule| globbed || rule.says_more_than_its_program();
            for rule in self.rules.iter().filter(|r| r.severity == Severity::Critical && named(r) && telling(r)) {
                if out.iter().any(|(r, _, _)| std::ptr::eq(*r, rule)) {
                    continue;
                }
                if rule.matches(view, *index, cmd, paths) {
                    let raw = view.script.commands.get(*index).map(|c| c.raw.clone()).unwrap_or_default();
                    out.push((rule, program.clone(), raw));
                }
            }
        }
        out
    }
}

impl ShellRule {
    /// Whether the rule asks anything of a command beyond its program's name.
    fn says_more_than_its_program(&self) -> bool {
        !self.subcommands.is_empty()
            || !self.flags.is_empty()
            || self.args.is_some()
            || self.targets.is_some()
            || self.write_targets.is_some()
            || self.any_targets.is_some()
            || self.check.is_some()
    }
}

static CRITICAL_PROGRAMS: LazyLock<Vec<String>> = LazyLock::new(|| {
    let mut programs: Vec<String> = builtin()
        .map(|rules| {
            rules
                .rules
                .iter()
                .filter(|r| r.severity == Severity::Critical)
                .flat_map(|r| r.programs.iter().map(|p| p.trim_end_matches('*').to_string()))
                .collect()
        })
        .unwrap_or_default();
    programs.sort();
    programs.dedup();
    programs
});

/// The programs the critical rules name: what a program only known at run time is tried as.
pub(crate) fn critical_programs() -> &'static [String] {
    &CRITICAL_PROGRAMS
}

/// Findings for a shell command.
pub(crate) fn judge(view: &ShellView) -> Vec<Finding> {
    let rules = match builtin() {
        Ok(rules) => rules,
        Err(e) => {
            return vec![finding(
                GUARDIAN,
                "rules-unavailable",
                Severity::High,
                format!("the shell rules could not be loaded, so this command cannot be checked ({e})"),
            )]
        }
    };
    let shown = |command: &str| {
        let shown: String = command.chars().take(120).collect();
        let ellipsis = if shown.len() < command.len() { "…" } else { "" };
        format!("{shown}{ellipsis}")
    };
    let mut out: Vec<Finding> = rules
        .matches(view)
        .into_iter()
        .map(|(rule, command)| {
            finding(GUARDIAN, &rule.id, rule.severity, format!("{}: `{}`", rule.message, shown(&command)))
        })
        .collect();
    // Judged as the worst thing it could be: `"$x" -rf ~` is critical if `$x` is `rm`.
    out.extend(rules.critical_stand_ins(view).into_iter().map(|(rule, program, command)| {
        finding(
            GUARDIAN,
            "unknown-program",
            Severity::Critical,
            format!(
                "runs a program only known when it runs; were it `{program}`: {}: `{}`",
                rule.message,
                shown(&command)
            ),
        )
    }));
    out
}
