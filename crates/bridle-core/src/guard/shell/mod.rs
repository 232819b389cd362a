//! A quote-aware reading of shell command lines, enough to judge them before they run.
//!
//! The rule this module keeps: a command line is judged by what bash would run, not by how it
//! looks. So it is cut the way bash cuts it — quotes removed, escapes applied, split into simple
//! commands on `&&`, `||`, `;`, `|`, `|&`, `&`, newlines, `( )` and `{ }` — wrappers (`env`,
//! `sudo`, `timeout`, `xargs`, `sh -c`, `eval`, ...) are unwrapped to the command they run, and
//! every command hidden inside another (`$(...)`, backticks, `<(...)`, `sh -c '...'`, `find
//! -exec`, an unquoted heredoc's substitutions, a heredoc or `echo ... |` fed to a shell) is
//! read too, as one more simple command that must pass on its own, and so is every command bash
//! would run while evaluating arithmetic (`a[$(cmd)]` in a value). Nothing is executed; what the
//! line itself sets — variables, arrays, positional parameters (`set --`, `shift`, a call,
//! `sh -c '...' name args`) — is followed, and what it cannot know is unknown, never empty
//! (`$HOME` is located later; another variable of the environment may hold anything). What a
//! human would not see at a glance — ANSI-C quotes, escaped operators, invisible characters — is
//! kept as a [`Signal`] for the shell-evasion guardian.
//!
//! Reading is bounded in memory and time whatever the line: nesting stops at [`MAX_DEPTH`] and
//! the text made while following bash (values, brace products, replayed loops and calls) at a
//! fixed multiple of the line's length ([`budget`]). What a bound leaves unread is said with
//! [`Signal::TooDeep`] or [`Signal::TooLarge`], which ask: the guard never allows a line it
//! stopped reading.

pub mod budget;
mod command;
mod fold;
mod lexer;
pub(crate) mod operands;
mod split;
#[cfg(test)]
mod tests;
mod unwrap;
mod vars;
mod words;

pub use command::{is_shell, is_shell_or_interpreter, INTERPRETERS, SHELLS};
pub use split::parse;
pub(crate) use split::parse_budgeted;
#[cfg(test)]
pub(crate) use split::parse_measured;
pub(crate) use vars::UNKNOWN;

/// How deep commands may nest (`$(...)` inside `sh -c` inside `eval` ...) before the rest is
/// left unread and a [`Signal::TooDeep`] raised.
pub const MAX_DEPTH: usize = 8;

/// One word as the shell sees it after quote removal.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Word {
    /// The text as written, quotes included.
    pub raw: String,
    /// Quotes removed and escapes applied; expansions (`$X`, `$(...)`) kept as written.
    pub value: String,
    /// Some part was quoted or backslash-escaped.
    pub quoted: bool,
    /// Holds a parameter expansion or a substitution, so its run-time value is not `value`.
    pub expands: bool,
    /// A backslash escaped an operator character (`\;`, `\|`, `\>` ...).
    pub escaped_operator: bool,
    /// The commands nested inside the word.
    pub nested: Vec<Nested>,
    /// When the whole word is one command substitution (`$(which rm)`, `"$(...)"`), its text.
    pub whole_substitution: Option<String>,
    /// Text bash evaluates as arithmetic when it expands the word, as written: `$((...))`,
    /// `$[...]`, an arithmetic command `((...))`, an array subscript `${a[...]}`, a substring's
    /// offset and length `${x:...:...}`.
    pub arithmetic: Vec<String>,
    /// Where the word starts and ends in the text it was read from (characters).
    pub(crate) span: (usize, usize),
}

impl Word {
    /// A plain word (for tests and for words built from strings).
    pub fn plain(value: &str) -> Self {
        Self { raw: value.into(), value: value.into(), ..Self::default() }
    }
}

/// A command nested in a word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Nested {
    /// How it was written.
    pub kind: NestedKind,
    /// Its text, to be read as a script of its own.
    pub text: String,
    /// How it stands in the word's value (`$(...)`, the backticks and their escapes).
    pub raw: String,
}

/// How a nested command was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NestedKind {
    /// `$(...)`.
    Substitution,
    /// `` `...` ``.
    Backtick,
    /// `<(...)` or `>(...)`.
    Process,
}

/// A redirection operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedirectOp {
    /// `<`
    In,
    /// `>`
    Out,
    /// `>>`
    Append,
    /// `>|`
    Clobber,
    /// `<>`
    ReadWrite,
    /// `<&`
    DupIn,
    /// `>&`
    DupOut,
    /// `&>`
    OutErr,
    /// `&>>`
    AppendOutErr,
    /// `<<` (and `<<-`, which strips leading tabs).
    HereDoc {
        /// `<<-`.
        strip_tabs: bool,
    },
    /// `<<<`
    HereString,
}

/// One redirection of a simple command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    /// The file descriptor written before the operator (`2>`), if any.
    pub fd: Option<u32>,
    /// The operator.
    pub op: RedirectOp,
    /// The target word (the delimiter of a heredoc).
    pub target: Word,
    /// A heredoc's body.
    pub body: Option<String>,
}

impl Redirect {
    /// The file this redirection opens and whether it writes it; `None` for fd duplications
    /// (`2>&1`, `>&-`), heredocs and here-strings.
    pub fn file(&self) -> Option<(&Word, bool)> {
        let writes = match self.op {
            RedirectOp::In => false,
            RedirectOp::Out
            | RedirectOp::Append
            | RedirectOp::Clobber
            | RedirectOp::ReadWrite
            | RedirectOp::OutErr
            | RedirectOp::AppendOutErr => true,
            RedirectOp::DupIn | RedirectOp::DupOut => {
                let v = self.target.value.as_str();
                if v == "-" || v.trim_end_matches('-').chars().all(|c| c.is_ascii_digit()) {
                    return None;
                }
                self.op == RedirectOp::DupOut
            }
            RedirectOp::HereDoc { .. } | RedirectOp::HereString => return None,
        };
        Some((&self.target, writes))
    }

    /// The operator as written, with its descriptor (`2>`, `&>>`, `<<-`).
    pub fn operator(&self) -> String {
        let op = match self.op {
            RedirectOp::In => "<",
            RedirectOp::Out => ">",
            RedirectOp::Append => ">>",
            RedirectOp::Clobber => ">|",
            RedirectOp::ReadWrite => "<>",
            RedirectOp::DupIn => "<&",
            RedirectOp::DupOut => ">&",
            RedirectOp::OutErr => "&>",
            RedirectOp::AppendOutErr => "&>>",
            RedirectOp::HereDoc { strip_tabs: false } => "<<",
            RedirectOp::HereDoc { strip_tabs: true } => "<<-",
            RedirectOp::HereString => "<<<",
        };
        match self.fd {
            Some(fd) => format!("{fd}{op}"),
            None => op.to_string(),
        }
    }
}

/// Something in the text a reader could miss, noticed while reading it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// `$(...)`, inside double quotes or not.
    CommandSubstitution {
        /// Inside double quotes.
        quoted: bool,
    },
    /// `` `...` ``.
    Backtick,
    /// `<(...)` or `>(...)`.
    ProcessSubstitution,
    /// `$'...'`.
    AnsiCQuote,
    /// A backslash before a space or tab outside quotes.
    EscapedWhitespace,
    /// A line continuation in the middle of a word (`r\` newline `m`).
    ContinuationInWord,
    /// A control character (other than tab and newline).
    ControlChar(char),
    /// A Unicode space outside quotes (no-break space, em space, ...).
    UnicodeSpace(char),
    /// An invisible or direction-changing character (zero-width space, RTL override, ...).
    Invisible(char),
    /// `${!name}` indirection.
    Indirection,
    /// `$IFS` or `${IFS}` used in a word.
    IfsExpansion,
    /// An unterminated quote, substitution or heredoc, or a redirection without a target.
    Unbalanced,
    /// Bash evaluates as arithmetic (or expands as a prompt) a value only known when it runs:
    /// a substitution's output, a variable read from input. An array subscript in it
    /// (`a[$(cmd)]`) would run a command the reader cannot see.
    UnknownEvaluated,
    /// Nesting deeper than [`MAX_DEPTH`]; the rest was not read.
    TooDeep,
    /// Following the line would make more text than [`budget`] allows (a variable doubled
    /// again and again, a huge brace product, too many loop or call repeats); from there on
    /// words were left as written.
    TooLarge,
}

/// Where a simple command came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// The command line itself.
    TopLevel,
    /// A `$(...)`, backtick or `<(...)` substitution.
    Substitution,
    /// A string run as shell code: `sh -c`, `eval`, `su -c`, `watch`.
    ShellString,
    /// A `find -exec` clause (with `{}` replaced by find's start paths).
    FindExec,
    /// Text fed to a shell on its standard input (heredoc, here-string, `echo ... | sh`).
    Stdin,
}

/// One simple command, after unwrapping.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimpleCommand {
    /// The program's basename (`/bin/rm`, `\rm`, `"rm"`, `$(which rm)` are all `rm`); `None` for
    /// a command made only of redirections or assignments.
    pub program: Option<String>,
    /// The program name is only known at run time (an unresolved expansion).
    pub dynamic: bool,
    /// The program word and its arguments.
    pub words: Vec<Word>,
    /// `NAME=value` assignments (prefixes, `env`'s, and `export`/`declare` arguments).
    pub assignments: Vec<Word>,
    /// Redirections.
    pub redirects: Vec<Redirect>,
    /// The wrappers that were removed, outermost first (`sudo`, `env`, `timeout` ...).
    pub wrappers: Vec<String>,
    /// Text given on standard input: heredoc bodies and here-strings.
    pub stdin_text: Vec<String>,
    /// 0 for the command line itself, one more per level of nesting.
    pub depth: usize,
    /// Where it came from.
    pub origin: Origin,
    /// Index into [`Script::pipelines`].
    pub pipeline: usize,
    /// Position in its pipeline.
    pub stage: usize,
    /// Ended with `&`.
    pub background: bool,
    /// The function whose body holds it.
    pub function: Option<String>,
    /// The folder a wrapper runs it in (`env -C DIR`), instead of the current one.
    pub chdir: Option<String>,
    /// Its text from the program word to its end, as written.
    pub raw: String,
}

/// A whole command line, read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Script {
    /// Every simple command, nested ones included, in the order they would start.
    pub commands: Vec<SimpleCommand>,
    /// Pipelines as lists of indices into `commands`, stages in order.
    pub pipelines: Vec<Vec<usize>>,
    /// Names of functions defined in the line.
    pub functions: Vec<String>,
    /// What the reader noticed (each kind once).
    pub signals: Vec<Signal>,
}

/// The basename of a program path (`/usr/bin/rm` -> `rm`).
pub fn basename(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// `NAME=value`, `NAME+=value` or `NAME[i]=value` with an unquoted, valid name.
pub fn is_assignment(word: &Word) -> bool {
    let Some(eq) = word.raw.find('=') else { return false };
    let name = word.raw[..eq].strip_suffix('+').unwrap_or(&word.raw[..eq]);
    let name = match name.strip_suffix(']').and_then(|n| n.split_once('[')) {
        Some((array, index)) if !index.contains(['[', ']']) => array,
        _ => name,
    };
    is_name(name)
}

/// A shell variable's name: a letter or `_`, then letters, digits and `_`.
pub(crate) fn is_name(text: &str) -> bool {
    let mut chars = text.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}
