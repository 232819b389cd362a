//! The lexer: a command line becomes words, operators and redirections, cut the way bash cuts
//! them, with what quoting did to each word.
//!
//! Rule: nothing is executed or expanded. Expansions stay as written in a word's value, and the
//! text of every command nested in a word (`$(...)`, backticks, `<(...)`, substitutions in an
//! unquoted heredoc or inside `${x:-...}` and `$((...))`) is handed back for the splitter to
//! read as a script of its own. A quoted heredoc's body is data and is never looked into. What
//! hides meaning from a reader is recorded as a [`Signal`] (each kind once).

mod expand;

use super::{Nested, NestedKind, Redirect, RedirectOp, Signal, Word};

/// A control operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Op {
    /// `&&`
    And,
    /// `||`
    Or,
    /// `;`, `;;`, `;&`, `;;&`
    Semi,
    /// `|`
    Pipe,
    /// `|&`
    PipeAll,
    /// `&`
    Background,
    /// `(`
    Open,
    /// `)`
    Close,
    /// A newline outside quotes.
    Newline,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Token {
    Word(Word),
    Op(Op),
    Redirect(Redirect),
}

pub(super) struct Lexed {
    pub tokens: Vec<Token>,
    pub signals: Vec<Signal>,
    pub chars: Vec<char>,
    /// In text read as [`Dialect::Posix`]: the `((...))` read as two subshells that bash (as
    /// `sh`) would evaluate as arithmetic instead.
    pub arithmetic: Vec<String>,
}

/// Reads `text` as bash reads it; `depth` counts how deep this text is nested, to bound the
/// work.
pub(super) fn lex(text: &str, depth: usize) -> Lexed {
    lex_as(text, depth, Dialect::Bash)
}

/// Reads `text` as the given shell reads it.
pub(super) fn lex_as(text: &str, depth: usize, dialect: Dialect) -> Lexed {
    let mut lexer = Lexer::new(text, depth);
    lexer.dialect = dialect;
    lexer.run();
    Lexed { tokens: lexer.out, signals: lexer.signals, chars: lexer.chars, arithmetic: lexer.arithmetic }
}

/// What the text in `text` runs: the commands substituted in it and the arithmetic it holds,
/// in text where only `$`, backticks and backslashes are special (an arithmetic expression, a
/// variable's value bash evaluates as one).
pub(super) fn expansions(text: &str, depth: usize) -> (Inside, Vec<Signal>) {
    let mut lexer = Lexer::new("", depth);
    let inside = lexer.expansions_in(text);
    (inside, lexer.signals)
}

/// Which shell reads the text: they part ways on `((`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Dialect {
    /// bash (and zsh, ksh): `((...))` is arithmetic where it closes with `))`.
    #[default]
    Bash,
    /// `sh`: dash, ash and posh have no arithmetic command, so `((cmd))` is two nested
    /// subshells running `cmd`; bash as `sh` evaluates it. Read both ways.
    Posix,
}

impl Dialect {
    /// The dialect of a shell program (a basename).
    pub(crate) fn of(shell: &str) -> Self {
        match shell.trim_end_matches(|c: char| c.is_ascii_digit()) {
            "sh" | "dash" | "ash" | "posh" => Dialect::Posix,
            _ => Dialect::Bash,
        }
    }
}

/// The commands and the arithmetic found inside a piece of text.
#[derive(Debug, Default)]
pub(super) struct Inside {
    pub nested: Vec<Nested>,
    pub arithmetic: Vec<String>,
}

#[derive(Default)]
struct WordBuf {
    start: usize,
    value: String,
    quoted: bool,
    expands: bool,
    escaped_operator: bool,
    nested: Vec<Nested>,
    arithmetic: Vec<String>,
    /// Characters that came from neither a substitution nor an expansion.
    plain: usize,
    substitutions: usize,
}

struct Lexer {
    chars: Vec<char>,
    i: usize,
    depth: usize,
    out: Vec<Token>,
    signals: Vec<Signal>,
    word: Option<WordBuf>,
    /// A redirection waiting for its target word.
    redirect: Option<Redirect>,
    /// Indices in `out` of heredocs whose body starts after the next newline.
    heredocs: Vec<usize>,
    command_start: bool,
    /// Inside `[[ ... ]]`, where `&&`, `<` and parentheses are part of the test.
    double_bracket: bool,
    /// Right after a `for` in command position, where `((` opens an arithmetic loop header.
    after_for: bool,
    dialect: Dialect,
    /// See [`Lexed::arithmetic`].
    arithmetic: Vec<String>,
}

const OPERATORS: &[(&str, Option<Op>, Option<RedirectOp>)] = &[
    (";;&", Some(Op::Semi), None),
    ("&>>", None, Some(RedirectOp::AppendOutErr)),
    ("<<<", None, Some(RedirectOp::HereString)),
    ("<<-", None, Some(RedirectOp::HereDoc { strip_tabs: true })),
    ("&&", Some(Op::And), None),
    ("||", Some(Op::Or), None),
    (";;", Some(Op::Semi), None),
    (";&", Some(Op::Semi), None),
    ("|&", Some(Op::PipeAll), None),
    ("&>", None, Some(RedirectOp::OutErr)),
    ("<<", None, Some(RedirectOp::HereDoc { strip_tabs: false })),
    ("<>", None, Some(RedirectOp::ReadWrite)),
    ("<&", None, Some(RedirectOp::DupIn)),
    (">>", None, Some(RedirectOp::Append)),
    (">&", None, Some(RedirectOp::DupOut)),
    (">|", None, Some(RedirectOp::Clobber)),
    ("&", Some(Op::Background), None),
    ("|", Some(Op::Pipe), None),
    (";", Some(Op::Semi), None),
    ("(", Some(Op::Open), None),
    (")", Some(Op::Close), None),
    ("<", None, Some(RedirectOp::In)),
    (">", None, Some(RedirectOp::Out)),
];

/// Reserved words after which the next word is again in command position.
const LEADING_KEYWORDS: &[&str] = &["if", "then", "else", "elif", "do", "while", "until", "!", "{", "time", "coproc"];

pub(super) fn is_invisible(c: char) -> bool {
    matches!(c,
        '\u{00AD}' | '\u{180E}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{2069}' | '\u{FEFF}')
}

impl Lexer {
    fn new(text: &str, depth: usize) -> Self {
        Self {
            chars: text.chars().collect(),
            i: 0,
            depth,
            out: Vec::new(),
            signals: Vec::new(),
            word: None,
            redirect: None,
            heredocs: Vec::new(),
            command_start: true,
            double_bracket: false,
            after_for: false,
            dialect: Dialect::Bash,
            arithmetic: Vec::new(),
        }
    }

    fn peek(&self, k: usize) -> Option<char> {
        self.chars.get(self.i + k).copied()
    }

    fn signal(&mut self, signal: Signal) {
        if !self.signals.contains(&signal) {
            self.signals.push(signal);
        }
    }

    fn word(&mut self) -> &mut WordBuf {
        let start = self.i;
        self.word.get_or_insert_with(|| WordBuf { start, ..WordBuf::default() })
    }

    fn literal(&mut self, c: char) {
        let w = self.word();
        w.value.push(c);
        w.plain += 1;
        self.i += 1;
    }

    /// Notes characters that hide meaning; `quoted` exempts Unicode spaces (they are text there).
    fn check_char(&mut self, c: char, quoted: bool) {
        if c.is_control() && c != '\t' && c != '\n' {
            self.signal(Signal::ControlChar(c));
        } else if !c.is_ascii() && c.is_whitespace() && !quoted {
            self.signal(Signal::UnicodeSpace(c));
        } else if is_invisible(c) {
            self.signal(Signal::Invisible(c));
        }
    }

    fn run(&mut self) {
        while let Some(c) = self.peek(0) {
            match c {
                ' ' | '\t' => {
                    self.finish_word();
                    self.i += 1;
                }
                '\n' => {
                    self.finish_word();
                    self.i += 1;
                    self.push_op(Op::Newline);
                    self.read_heredoc_bodies();
                }
                '#' if self.word.is_none() => {
                    while self.peek(0).is_some_and(|c| c != '\n') {
                        self.i += 1;
                    }
                }
                '\\' => self.backslash(),
                '\'' => self.single_quote(),
                '"' => {
                    self.word();
                    self.i += 1;
                    self.double_quote();
                }
                '`' => self.backtick(),
                '$' => self.dollar(false),
                '<' | '>' if self.peek(1) == Some('(') && self.word.is_none() && !self.double_bracket => {
                    self.process_substitution()
                }
                '(' if self.paren_belongs_to_word() => self.paren_in_word(),
                '(' if self.word.is_none() && (self.command_start || self.after_for) && self.peek(1) == Some('(') => {
                    self.double_paren()
                }
                // `for((...))`, `while((...))`: the reserved word ends where `((` starts.
                '(' if self.peek(1) == Some('(')
                    && self.word.as_ref().is_some_and(|w| self.keyword_before_paren(w)) =>
                {
                    self.finish_word();
                    self.double_paren();
                }
                '&' | '|' | '(' | ')' | '<' | '>' if self.double_bracket => self.literal(c),
                ';' | '&' | '|' | '(' | ')' | '<' | '>' => self.operator(),
                c => {
                    self.check_char(c, false);
                    self.literal(c);
                }
            }
        }
        self.finish_word();
        if let Some(r) = self.redirect.take() {
            self.signal(Signal::Unbalanced);
            self.out.push(Token::Redirect(r));
        }
        if !self.heredocs.is_empty() {
            // A heredoc with no newline after it has an empty body (bash warns and runs).
            self.heredocs.clear();
        }
    }

    /// A reserved word, unquoted, in command position, that `((` may follow unspaced.
    fn keyword_before_paren(&self, w: &WordBuf) -> bool {
        self.command_start && !w.quoted && (w.value == "for" || LEADING_KEYWORDS.contains(&w.value.as_str()))
    }

    fn finish_word(&mut self) {
        let Some(w) = self.word.take() else { return };
        let raw: String = self.chars[w.start..self.i].iter().collect();
        let whole_substitution = (w.substitutions == 1 && w.plain == 0 && !w.nested.is_empty())
            .then(|| w.nested.last().filter(|n| n.kind != NestedKind::Process).map(|n| n.text.clone()))
            .flatten();
        let word = Word {
            raw,
            value: w.value,
            quoted: w.quoted,
            expands: w.expands,
            escaped_operator: w.escaped_operator,
            nested: w.nested,
            whole_substitution,
            arithmetic: w.arithmetic,
            span: (w.start, self.i),
        };
        if let Some(mut r) = self.redirect.take() {
            let heredoc = matches!(r.op, RedirectOp::HereDoc { .. });
            r.target = word;
            self.out.push(Token::Redirect(r));
            if heredoc {
                self.heredocs.push(self.out.len() - 1);
            }
            return;
        }
        let was_command_start = self.command_start;
        self.command_start = LEADING_KEYWORDS.contains(&word.raw.as_str()) || super::is_assignment(&word);
        self.after_for = was_command_start && word.raw == "for";
        if word.raw == "[[" && was_command_start {
            self.double_bracket = true;
        } else if word.raw == "]]" && self.double_bracket {
            self.double_bracket = false;
        }
        self.out.push(Token::Word(word));
    }

    fn push_op(&mut self, op: Op) {
        self.finish_word();
        if let Some(r) = self.redirect.take() {
            self.signal(Signal::Unbalanced);
            self.out.push(Token::Redirect(r));
        }
        self.out.push(Token::Op(op));
        self.command_start = true;
        self.after_for = false;
    }

    fn operator(&mut self) {
        let rest: String = self.chars[self.i..self.chars.len().min(self.i + 3)].iter().collect();
        let Some(&(text, op, redirect)) = OPERATORS.iter().find(|(text, _, _)| rest.starts_with(text)) else {
            // Unreachable: every character dispatched here starts some operator.
            let c = self.chars[self.i];
            self.literal(c);
            return;
        };
        if let Some(op) = op {
            // The word before ends here, not after the operator (`{rm,-rf,~};` is a word of
            // its own whose raw text has no `;`).
            self.finish_word();
            self.i += text.len();
            self.push_op(op);
            return;
        }
        // `2>`: a word of digits right before a redirection is its file descriptor.
        let fd = match &self.word {
            Some(w) if !w.quoted && !w.value.is_empty() && w.value.chars().all(|c| c.is_ascii_digit()) => {
                w.value.parse().ok()
            }
            _ => None,
        };
        if fd.is_some() {
            self.word = None;
        } else {
            self.finish_word();
        }
        if let Some(r) = self.redirect.take() {
            self.signal(Signal::Unbalanced);
            self.out.push(Token::Redirect(r));
        }
        self.i += text.len();
        let op = redirect.unwrap_or(RedirectOp::Out);
        self.redirect = Some(Redirect { fd, op, target: Word::default(), body: None });
    }

    fn backslash(&mut self) {
        match self.peek(1) {
            None => self.literal('\\'),
            Some('\n') => {
                if self.word.is_some() {
                    self.signal(Signal::ContinuationInWord);
                }
                self.i += 2;
            }
            Some(n) => {
                if n == ' ' || n == '\t' || n.is_whitespace() {
                    self.signal(Signal::EscapedWhitespace);
                } else {
                    self.check_char(n, true);
                }
                let w = self.word();
                w.quoted = true;
                w.value.push(n);
                w.plain += 1;
                if matches!(n, ';' | '&' | '|' | '<' | '>' | '(' | ')') {
                    w.escaped_operator = true;
                }
                self.i += 2;
            }
        }
    }

    fn single_quote(&mut self) {
        self.word();
        self.i += 1;
        let mut value = String::new();
        loop {
            match self.peek(0) {
                None => {
                    self.signal(Signal::Unbalanced);
                    break;
                }
                Some('\'') => {
                    self.i += 1;
                    break;
                }
                Some(c) => {
                    self.check_char(c, true);
                    value.push(c);
                    self.i += 1;
                }
            }
        }
        let w = self.word();
        w.quoted = true;
        w.plain += value.chars().count().max(1);
        w.value.push_str(&value);
    }

    /// Inside `"..."`, the opening quote already consumed.
    fn double_quote(&mut self) {
        self.word().quoted = true;
        loop {
            match self.peek(0) {
                None => {
                    self.signal(Signal::Unbalanced);
                    return;
                }
                Some('"') => {
                    self.i += 1;
                    let w = self.word();
                    if w.value.is_empty() && w.nested.is_empty() {
                        w.plain += 1; // `""` is an empty argument, not nothing
                    }
                    return;
                }
                Some('\\') => match self.peek(1) {
                    Some('\n') => self.i += 2,
                    Some(n @ ('$' | '`' | '"' | '\\')) => {
                        let w = self.word();
                        w.value.push(n);
                        w.plain += 1;
                        self.i += 2;
                    }
                    _ => self.literal('\\'),
                },
                Some('$') => self.dollar(true),
                Some('`') => self.backtick(),
                Some(c) => {
                    self.check_char(c, true);
                    self.literal(c);
                }
            }
        }
    }

    fn read_heredoc_bodies(&mut self) {
        for index in std::mem::take(&mut self.heredocs) {
            let Some(Token::Redirect(r)) = self.out.get(index) else { continue };
            let delimiter = r.target.value.clone();
            let quoted = r.target.quoted;
            let strip = matches!(r.op, RedirectOp::HereDoc { strip_tabs: true });
            let mut body = String::new();
            let mut terminated = false;
            while self.i < self.chars.len() {
                let end = self.chars[self.i..].iter().position(|c| *c == '\n').map_or(self.chars.len(), |p| self.i + p);
                let line: String = self.chars[self.i..end].iter().collect();
                self.i = (end + 1).min(self.chars.len());
                let line = if strip { line.trim_start_matches('\t').to_string() } else { line };
                if line == delimiter {
                    terminated = true;
                    break;
                }
                body.push_str(&line);
                body.push('\n');
            }
            if !terminated {
                self.signal(Signal::Unbalanced);
            }
            for c in body.chars() {
                if c.is_control() && c != '\t' && c != '\n' {
                    self.signal(Signal::ControlChar(c));
                } else if is_invisible(c) {
                    self.signal(Signal::Invisible(c));
                }
            }
            // An unquoted heredoc's substitutions run; a quoted one's body is data.
            let inside = if quoted { Inside::default() } else { self.expansions_in(&body) };
            if let Some(Token::Redirect(r)) = self.out.get_mut(index) {
                r.target.nested.extend(inside.nested);
                r.target.arithmetic.extend(inside.arithmetic);
                r.body = Some(body);
            }
        }
    }
}
