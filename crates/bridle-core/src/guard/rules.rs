//! User rules and disabled tools (DESIGN §6 step 3): the policy part of the guard.
//!
//! A rule is `tool` (every call of the tool) or `tool(arg)`; the tool part may be a glob
//! (`mcp__github__*`). For `bash` the argument is a glob over each simple command of the line
//! after splitting and unwrapping — `bash(git status*)` allows `git status -s`, but `git status
//! && rm -rf ~` also needs `rm -rf ~` allowed — matched against the command as written and as
//! normalised (quotes removed, single spaces). An argument without glob characters is exact, and
//! may also name the whole line (that is what "approve always" writes, see [`rule_for`]); a glob
//! never matches a whole compound line. For file tools the argument is a glob (`**` allowed,
//! `*` stops at `/`) over the canonical workspace-relative POSIX path, so `src/../.env` is
//! `.env`, not under `src/**`, and a path outside the workspace never matches. An argument on a
//! tool that has neither a command nor a path never matches.
//!
//! Precedence: a disabled tool or a deny rule denies (in every mode); an ask rule asks; an
//! allow rule needs every part (every simple command, every path) allowed by some allow rule.
//! Patterns are compiled once, when the policy is built.

use globset::{Glob, GlobBuilder, GlobMatcher};

use std::path::Path;

use crate::config::{Config, ConfigError, RuleList, Rules};
use crate::tools::{PreparedCall, ToolKind};

/// Why a rule in the config cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RuleError {
    /// The pattern is not `tool` or `tool(arg)`, or its glob does not compile.
    #[error("invalid {list} rule `{pattern}`: {reason}")]
    Invalid {
        /// `allow`, `ask`, `deny` or `disabled_tools`.
        list: &'static str,
        /// The pattern as written.
        pattern: String,
        /// What is wrong.
        reason: String,
    },
}

#[derive(Debug, Clone)]
enum NameMatcher {
    Exact(String),
    Glob(GlobMatcher),
}

impl NameMatcher {
    fn matches(&self, name: &str) -> bool {
        match self {
            NameMatcher::Exact(n) => n == name,
            NameMatcher::Glob(g) => g.is_match(name),
        }
    }
}

#[derive(Debug, Clone)]
struct ArgMatcher {
    /// The argument with escapes removed, when it has no glob characters.
    exact: Option<String>,
    /// For commands: `*` crosses `/`.
    command: GlobMatcher,
    /// For paths: `*` stops at `/`, `**` crosses it.
    path: GlobMatcher,
}

#[derive(Debug, Clone)]
struct Rule {
    pattern: String,
    tool: NameMatcher,
    arg: Option<ArgMatcher>,
}

/// What a call offers the rules to match.
#[derive(Debug, Clone)]
pub(crate) enum Subject {
    /// A shell command: the whole line and, per simple command, its text as written and
    /// normalised.
    Command {
        /// The whole line, trimmed.
        whole: String,
        /// One entry per simple command.
        parts: Vec<[String; 2]>,
    },
    /// A file tool's paths, canonical and workspace-relative (`None`: outside or unresolvable).
    Paths(Vec<Option<String>>),
    /// Neither.
    Nothing,
}

/// The user's rules and disabled tools, compiled.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    disabled: Vec<Rule>,
    allow: Vec<Rule>,
    ask: Vec<Rule>,
    deny: Vec<Rule>,
    /// The managed file that requires the sandbox (DESIGN §17): no call may escalate.
    sandbox_required_by: Option<String>,
}

/// What the policy says about a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RuleOutcome {
    /// The tool is disabled in the config.
    Disabled,
    /// A deny rule matched.
    Deny(String),
    /// An ask rule matched.
    Ask(String),
    /// Allow rules cover the whole call.
    Allow(String),
}

fn glob(pattern: &str, literal_separator: bool) -> Result<GlobMatcher, globset::Error> {
    Ok(GlobBuilder::new(pattern).literal_separator(literal_separator).backslash_escape(true).build()?.compile_matcher())
}

fn has_glob_chars(text: &str) -> bool {
    let mut escaped = false;
    for c in text.chars() {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if matches!(c, '*' | '?' | '[' | '{') {
            return true;
        }
    }
    false
}

fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            out.extend(chars.next());
        } else {
            out.push(c);
        }
    }
    out
}

/// `text` as a glob that matches only itself.
pub(crate) fn escape_glob(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '{' | '}' | '\\' | ',') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

fn compile(list: &'static str, pattern: &str) -> Result<Rule, RuleError> {
    let invalid = |reason: String| RuleError::Invalid { list, pattern: pattern.to_string(), reason };
    let trimmed = pattern.trim();
    let (name, arg) = match trimmed.find('(') {
        Some(open) => {
            let Some(inner) = trimmed[open + 1..].strip_suffix(')') else {
                return Err(invalid("a rule with an argument must end with `)`, like `bash(git status*)`".into()));
            };
            if inner.trim().is_empty() {
                return Err(invalid(
                    "the argument in `(...)` is empty; write the bare tool name to match every call".into(),
                ));
            }
            (&trimmed[..open], Some(inner))
        }
        None => (trimmed, None),
    };
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '*' | '?')) {
        return Err(invalid("the tool name may hold only A-Z, a-z, 0-9, `_`, `-` and the globs `*` `?`".into()));
    }
    let tool = if name.contains(['*', '?']) {
        NameMatcher::Glob(Glob::new(name).map_err(|e| invalid(e.to_string()))?.compile_matcher())
    } else {
        NameMatcher::Exact(name.to_string())
    };
    let arg = match arg {
        None => None,
        Some(arg) => Some(ArgMatcher {
            exact: (!has_glob_chars(arg)).then(|| unescape(arg)),
            command: glob(arg, false).map_err(|e| invalid(e.kind().to_string()))?,
            path: glob(arg.trim_start_matches("./"), true).map_err(|e| invalid(e.kind().to_string()))?,
        }),
    };
    Ok(Rule { pattern: pattern.to_string(), tool, arg })
}

/// Disabled tools are names (globs allowed); an argument would silently disable the whole tool.
fn compile_disabled(names: &[String]) -> Result<Vec<Rule>, RuleError> {
    let rules = compile_all("disabled_tools", names)?;
    match rules.iter().find(|r| r.arg.is_some()) {
        Some(r) => Err(RuleError::Invalid {
            list: "disabled_tools",
            pattern: r.pattern.clone(),
            reason: "disabled_tools takes tool names only; to refuse some calls of a tool, write a deny rule".into(),
        }),
        None => Ok(rules),
    }
}

fn compile_all(list: &'static str, patterns: &[String]) -> Result<Vec<Rule>, RuleError> {
    patterns.iter().map(|p| compile(list, p)).collect()
}

impl Rule {
    /// Whether the rule matches `subject` as a whole or any part of it.
    fn matches_any(&self, name: &str, subject: &Subject) -> bool {
        if !self.tool.matches(name) {
            return false;
        }
        let Some(arg) = &self.arg else { return true };
        match subject {
            Subject::Command { whole, parts } => {
                arg.matches_whole(whole) || parts.iter().any(|p| arg.matches_command(p))
            }
            Subject::Paths(paths) => paths.iter().flatten().any(|p| arg.path.is_match(p)),
            Subject::Nothing => false,
        }
    }
}

impl ArgMatcher {
    fn matches_command(&self, texts: &[String; 2]) -> bool {
        texts.iter().any(|t| !t.is_empty() && self.command.is_match(t))
    }

    /// Only an exact argument may name a whole compound line; a glob would let `git status*`
    /// swallow `git status && rm -rf ~`.
    fn matches_whole(&self, whole: &str) -> bool {
        self.exact.as_deref() == Some(whole)
    }
}

impl Policy {
    /// No rules, nothing disabled.
    pub fn empty() -> Policy {
        Policy::default()
    }

    /// The rules and disabled tools of `config`; an invalid pattern is an error naming it.
    pub fn from_config(config: &Config) -> Result<Policy, RuleError> {
        Ok(Policy {
            disabled: compile_disabled(&config.disabled_tools)?,
            allow: compile_all(RuleList::Allow.as_str(), &config.rules.allow)?,
            ask: compile_all(RuleList::Ask.as_str(), &config.rules.ask)?,
            deny: compile_all(RuleList::Deny.as_str(), &config.rules.deny)?,
            sandbox_required_by: config
                .managed
                .as_ref()
                .filter(|m| m.policy.sandbox.required)
                .map(|m| m.file.display().to_string()),
        })
    }

    /// The managed file that forbids running outside the sandbox, if one does.
    pub(crate) fn sandbox_required_by(&self) -> Option<&str> {
        self.sandbox_required_by.as_deref()
    }

    /// Whether the policy holds no rule at all.
    pub fn is_empty(&self) -> bool {
        self.disabled.is_empty() && self.allow.is_empty() && self.ask.is_empty() && self.deny.is_empty()
    }

    /// What the rules say about a call of `name`: deny > ask > allow.
    pub(crate) fn judge(&self, name: &str, subject: &Subject) -> Option<RuleOutcome> {
        if self.disabled.iter().any(|r| r.tool.matches(name)) {
            return Some(RuleOutcome::Disabled);
        }
        if let Some(rule) = self.deny.iter().find(|r| r.matches_any(name, subject)) {
            return Some(RuleOutcome::Deny(rule.pattern.clone()));
        }
        if let Some(rule) = self.ask.iter().find(|r| r.matches_any(name, subject)) {
            return Some(RuleOutcome::Ask(rule.pattern.clone()));
        }
        self.allowed(name, subject).map(RuleOutcome::Allow)
    }

    /// The allow rule(s) covering every part of the call.
    fn allowed(&self, name: &str, subject: &Subject) -> Option<String> {
        let rules: Vec<&Rule> = self.allow.iter().filter(|r| r.tool.matches(name)).collect();
        if let Some(bare) = rules.iter().find(|r| r.arg.is_none()) {
            return Some(bare.pattern.clone());
        }
        let mut used: Vec<String> = Vec::new();
        let mut cover = |found: Option<&&Rule>| match found {
            Some(rule) => {
                if !used.contains(&rule.pattern) {
                    used.push(rule.pattern.clone());
                }
                true
            }
            None => false,
        };
        let covered = match subject {
            Subject::Command { whole, parts } => {
                let by_whole = rules.iter().find(|r| r.arg.as_ref().is_some_and(|a| a.matches_whole(whole)));
                if by_whole.is_some() {
                    cover(by_whole)
                } else {
                    !parts.is_empty()
                        && parts
                            .iter()
                            .all(|p| cover(rules.iter().find(|r| r.arg.as_ref().is_some_and(|a| a.matches_command(p)))))
                }
            }
            Subject::Paths(paths) => {
                !paths.is_empty()
                    && paths.iter().all(|p| match p {
                        Some(p) => cover(rules.iter().find(|r| r.arg.as_ref().is_some_and(|a| a.path.is_match(p)))),
                        None => false,
                    })
            }
            Subject::Nothing => false,
        };
        covered.then(|| used.join(", "))
    }
}

/// What `pattern` in the `list` rules matches, in words (the Settings rule editor shows it), or
/// why it is invalid. `bash` rules match commands; every other tool's argument is a path.
pub fn describe(list: RuleList, pattern: &str) -> Result<String, RuleError> {
    let rule = compile(list.as_str(), pattern)?;
    let verb = match list {
        RuleList::Allow => "runs without asking",
        RuleList::Ask => "always asks",
        RuleList::Deny => "is always refused",
    };
    let tools = match &rule.tool {
        NameMatcher::Exact(name) => format!("`{name}`"),
        NameMatcher::Glob(glob) => format!("any tool named like `{}`", glob.glob()),
    };
    let is_shell = matches!(&rule.tool, NameMatcher::Exact(name) if name == "bash");
    Ok(match (&rule.arg, pattern.trim().split_once('(')) {
        (None, _) => format!("every call of {tools} {verb}"),
        (Some(arg), Some((_, inner))) => {
            let inner = inner.strip_suffix(')').unwrap_or(inner);
            match (is_shell, &arg.exact) {
                (true, Some(exact)) => format!("the command `{exact}` exactly {verb}"),
                (true, None) if list == RuleList::Allow => format!(
                    "commands matching `{inner}` run without asking; in a line of several commands, each must be allowed"
                ),
                (true, None) => format!("a line with any command matching `{inner}` {verb}"),
                (false, Some(exact)) => format!("{tools} on the workspace path `{exact}` {verb}"),
                (false, None) => format!(
                    "{tools} on workspace paths matching `{inner}` {verb} (`*` stays within a folder, `**` crosses folders)"
                ),
            }
        }
        (Some(_), None) => format!("{tools} {verb}"),
    })
}

/// The allow rule an "approve always" answer writes for `call`: `bash(<exact command>)`,
/// `edit_file(<path>)` (`apply_patch({a,b})` for several), or the bare tool name for tools with
/// neither a command nor a path. Glob characters in the command or path are escaped, so the rule
/// matches exactly what was approved. Paths are kept as the call gave them (lexically
/// normalised); use [`crate::guard::Guard::rule_for`] to get them workspace-relative.
pub fn rule_for(call: &PreparedCall) -> String {
    rule_with_paths(call, |p| Some(p.to_string()))
}

pub(crate) fn rule_with_paths(call: &PreparedCall, relative: impl Fn(&str) -> Option<String>) -> String {
    if call.kind == ToolKind::Exec {
        if let Some(line) = call.call.shell() {
            return format!("{}({})", call.name, escape_glob(line.command.trim()));
        }
    }
    let mut paths: Vec<String> = Vec::new();
    for (path, _) in call.call.paths() {
        // Outside the workspace (the sandbox will refuse it anyway): keep it as given, never
        // widen the rule to the bare tool.
        let rel = relative(&path).unwrap_or(path);
        let normal = super::places::posix(&crate::sandbox::lexical_normalise(std::path::Path::new(&rel)));
        let shown = if rel.starts_with('/') { format!("/{normal}") } else { normal };
        let escaped = escape_glob(if shown.is_empty() { "." } else { &shown });
        if !paths.contains(&escaped) {
            paths.push(escaped);
        }
    }
    match paths.len() {
        0 => call.name.clone(),
        1 => format!("{}({})", call.name, paths[0]),
        _ => format!("{}({{{}}})", call.name, paths.join(",")),
    }
}

/// Adds `pattern` to `[rules] <list>` in `config_file` (as an "approve always" answer does) once
/// it compiles, so the file always loads again: the rule language is checked here, the file is
/// edited by [`crate::config::edit::append_rule`].
pub fn append_rule(config_file: &Path, list: RuleList, pattern: &str) -> Result<(), ConfigError> {
    let mut check = Config { rules: Rules::default(), ..Config::default() };
    match list {
        RuleList::Allow => check.rules.allow.push(pattern.to_string()),
        RuleList::Ask => check.rules.ask.push(pattern.to_string()),
        RuleList::Deny => check.rules.deny.push(pattern.to_string()),
    }
    Policy::from_config(&check)
        .map_err(|e| ConfigError::Parse { path: config_file.display().to_string(), message: e.to_string() })?;
    crate::config::edit::append_rule(config_file, list, pattern)
}
