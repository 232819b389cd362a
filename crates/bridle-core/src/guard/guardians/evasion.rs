//! The shell-evasion guardian: forms that hide from a reader what a command will run.
//!
//! Rule (DESIGN §6): every such form is a high finding — command substitution `$(...)` and
//! backticks (inside double quotes too: they run there just the same), process substitution,
//! ANSI-C quoting `$'...'`, a backslash before whitespace or an operator outside quotes, a line
//! continuation inside a word, control characters, Unicode spaces outside quotes, invisible or
//! direction-changing characters anywhere, `IFS` games, `${!name}` indirection, a program name
//! known only at run time, hex or octal escapes fed to a shell, and text the guard could not
//! read to the end. Harmless forms are exempt: `find ... {} \;` and `\(`, a quoted heredoc,
//! anything inside single quotes, `# comments`, plain `$VAR` and `${VAR}`.
//!
//! A newline between two commands is not a finding: the splitter judges each command on its
//! own line exactly as it judges one after `;`, and multi-line scripts (heredocs, `for` loops)
//! are everyday work. Control characters are findings even inside quotes, since a carriage
//! return or an escape sequence can repaint what the person approving sees.

use bridle_protocol::{Finding, Severity};

use super::{finding, ShellView};
use crate::guard::shell::{self, Origin, Signal, SimpleCommand};

const GUARDIAN: &str = "shell-evasion";

pub(crate) fn judge(view: &ShellView) -> Vec<Finding> {
    let mut found: Vec<(&'static str, String)> = Vec::new();
    let mut add = |rule: &'static str, message: String| {
        if !found.iter().any(|(r, _)| *r == rule) {
            found.push((rule, message));
        }
    };
    // Every substitution's command is read and judged on its own (DESIGN §6): a harmless one
    // (`make -j$(nproc)`, a commit message from a heredoc) is no reason to ask. What its output
    // can do is judged where it lands: a program name only known at run time, a path a
    // variable hides.
    let read_whole = !view.script.signals.iter().any(|s| matches!(s, Signal::TooDeep | Signal::TooLarge));
    for signal in &view.script.signals {
        if read_whole && matches!(signal, Signal::CommandSubstitution { .. } | Signal::Backtick) {
            continue;
        }
        let (rule, message) = match signal {
            Signal::CommandSubstitution { .. } => (
                "command-substitution",
                "runs a command substitution `$(...)` whose output becomes part of the command".to_string(),
            ),
            Signal::Backtick => (
                "command-substitution",
                "runs a backtick substitution whose output becomes part of the command".to_string(),
            ),
            Signal::ProcessSubstitution => {
                ("process-substitution", "uses process substitution `<(...)` or `>(...)`".to_string())
            }
            Signal::AnsiCQuote => (
                "ansi-c-quoting",
                "uses ANSI-C quoting `$'...'`, which can spell any character as an escape".to_string(),
            ),
            Signal::EscapedWhitespace => (
                "escaped-whitespace",
                "escapes whitespace with a backslash outside quotes, joining what looks like two words".to_string(),
            ),
            Signal::ContinuationInWord => {
                ("split-word", "a line continuation splits a word in two, hiding what it spells".to_string())
            }
            Signal::ControlChar(c) => {
                ("control-character", format!("contains the control character U+{:04X}", u32::from(*c)))
            }
            Signal::UnicodeSpace(c) => (
                "unicode-whitespace",
                format!(
                    "contains the Unicode space U+{:04X} outside quotes, which looks like a space but is not one",
                    u32::from(*c)
                ),
            ),
            Signal::Invisible(c) => (
                "invisible-character",
                format!("contains the invisible or direction-changing character U+{:04X}", u32::from(*c)),
            ),
            Signal::Indirection => ("indirect-expansion", "uses `${!name}` indirection".to_string()),
            Signal::IfsExpansion => ("ifs", "uses `$IFS` to separate words".to_string()),
            Signal::Unbalanced => (
                "unbalanced",
                "has an unterminated quote, substitution or heredoc, so how the shell reads it is uncertain"
                    .to_string(),
            ),
            Signal::UnknownEvaluated => (
                "unknown-evaluated",
                "evaluates as arithmetic (or expands as a prompt) a value only known when it runs; bash runs any \
                 command substitution an array subscript in it holds (`a[$(...)]`)"
                    .to_string(),
            ),
            Signal::TooDeep => ("too-deep", "nests commands too deeply to be read to the end".to_string()),
            Signal::TooLarge => (
                "too-large",
                "grows past what the guard follows (a value doubled again and again, a huge brace product, \
                 too many repeats), so what it runs is not fully known"
                    .to_string(),
            ),
        };
        add(rule, message);
    }
    let shell_later = shell_later_in_pipeline(view);
    for cmd in &view.script.commands {
        if let Some(word) = cmd.words.iter().find(|w| w.escaped_operator && !find_syntax(cmd, &w.value)) {
            add("escaped-operator", format!("escapes an operator with a backslash (`{}`)", word.raw));
        }
        if cmd.assignments.iter().any(|a| a.value.starts_with("IFS=") || a.value.starts_with("IFS+=")) {
            add("ifs", "sets `IFS`, changing how the shell splits words".to_string());
        }
        if cmd.dynamic {
            let name = cmd.words.first().map_or("", |w| w.raw.as_str());
            add("dynamic-command", format!("runs a program whose name (`{name}`) is only known when it runs"));
        }
        if let Some(word) = cmd.words.iter().find(|w| quoted_option(w)) {
            add(
                "quoted-option",
                format!(
                    "quotes the option `{}`, which changes nothing for the program but hides it from a reader",
                    word.raw
                ),
            );
        }
        if encodes_for_a_shell(&shell_later, cmd) {
            add("encoded-command", "feeds hex or octal escapes to a shell, hiding the command they spell".to_string());
        }
    }
    found.into_iter().map(|(rule, message)| finding(GUARDIAN, rule, Severity::High, message)).collect()
}

/// Options that make a program run something, quoted (`find . '-exec' ls`): quoting them
/// buys nothing but hiding them.
fn quoted_option(word: &shell::Word) -> bool {
    const RUNS: &[&str] = &["-exec", "-execdir", "-ok", "-okdir", "-delete", "-c", "-e", "--exec", "--eval", "-x"];
    word.quoted && word.raw != word.value && RUNS.contains(&word.value.as_str())
}

/// `find . \( -name a -o -name b \) -exec wc -l {} \;`: escaped operators that are find's own
/// syntax.
fn find_syntax(cmd: &SimpleCommand, value: &str) -> bool {
    matches!(cmd.program.as_deref(), Some("find" | "gfind" | "fd" | "fdfind"))
        && matches!(value, ";" | "+" | "(" | ")" | "!")
}

/// `printf '\x72\x6d ...' | sh`, `$(echo -e '\162\155')`.
fn encodes_for_a_shell(shell_later: &[Vec<bool>], cmd: &SimpleCommand) -> bool {
    if !matches!(cmd.program.as_deref(), Some("echo" | "printf")) || !cmd.args().iter().any(|w| has_escape(&w.value)) {
        return false;
    }
    let piped_to_shell =
        shell_later.get(cmd.pipeline).and_then(|stages| stages.get(cmd.stage)).copied().unwrap_or(false);
    piped_to_shell || cmd.origin == Origin::Substitution
}

/// For each pipeline and stage: whether a later stage reads code from its standard input.
/// Computed once from the end, so a pipeline of N `echo`s costs N, not N squared.
fn shell_later_in_pipeline(view: &ShellView) -> Vec<Vec<bool>> {
    let commands = &view.script.commands;
    view.script
        .pipelines
        .iter()
        .map(|stages| {
            let mut later = vec![false; stages.len()];
            let mut shell = false;
            for (stage, &i) in stages.iter().enumerate().rev() {
                later[stage] = shell;
                shell = shell || commands.get(i).is_some_and(SimpleCommand::reads_code_from_stdin);
            }
            later
        })
        .collect()
}

fn has_escape(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.windows(2).enumerate().any(|(i, w)| {
        w[0] == b'\\'
            && (w[1].is_ascii_digit()
                || (matches!(w[1], b'x' | b'u' | b'U') && bytes.get(i + 2).is_some_and(u8::is_ascii_hexdigit)))
    })
}
