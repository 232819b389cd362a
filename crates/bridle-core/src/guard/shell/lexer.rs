//! The lexer: a command line becomes words, operators and redirections, cut the way bash cuts
//! them, with what quoting did to each word.
//!
//! Rule: nothing is executed or expanded. Expansions stay as written in a word's value, and the
//! text of every command nested in a word (`$(...)`, backticks, `<(...)`, substitutions in an
//! unquoted heredoc or inside `${x:-...}` and `$((...))`) is handed back for the splitter to
//! read as a script of its own. A quoted heredoc's body is data and is never looked into. What
//! hides meaning from a reader is recorded as a [`Signal`] (each kind once).

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
}

/// Reads `text`; `depth` counts how deep this text is nested, to bound the work.
pub(super) fn lex(text: &str, depth: usize) -> Lexed {
    let mut lexer = Lexer::new(text, depth);
    lexer.run();
    Lexed { tokens: lexer.out, signals: lexer.signals, chars: lexer.chars }
}

#[derive(Default)]
struct WordBuf {
    start: usize,
    value: String,
    quoted: bool,
    expands: bool,
    escaped_operator: bool,
    nested: Vec<Nested>,
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
const LEADING_KEYWORDS: &[&str] = &["if", "then", "else", "elif", "do", "while", "until", "!", "{", "time"];

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
                '(' if self.word.is_none() && self.command_start && self.peek(1) == Some('(') => {
                    self.arithmetic_command()
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

    fn push_raw(&mut self, from: usize, to: usize) {
        let raw: String = self.chars[from..to].iter().collect();
        let w = self.word();
        w.value.push_str(&raw);
        w.expands = true;
    }

    fn dollar(&mut self, in_double_quotes: bool) {
        self.word();
        let start = self.i;
        match self.peek(1) {
            Some('(') => {
                let Some(close) = matching_close(&self.chars, self.i + 2, '(', ')') else {
                    return self.unbalanced_rest();
                };
                let inner: String = self.chars[self.i + 2..close].iter().collect();
                if inner.starts_with('(') && inner.ends_with(')') && inner.len() >= 2 {
                    // `$((...))`: arithmetic, which only runs what is substituted inside it.
                    let nested = self.expansions_in(&inner[1..inner.len() - 1]);
                    self.word().nested.extend(nested);
                } else {
                    self.signal(Signal::CommandSubstitution { quoted: in_double_quotes });
                    let w = self.word();
                    w.nested.push(Nested { kind: NestedKind::Substitution, text: inner });
                    w.substitutions += 1;
                }
                self.push_raw(start, close + 1);
                self.i = close + 1;
            }
            Some('{') => {
                let Some(close) = matching_close(&self.chars, self.i + 2, '{', '}') else {
                    return self.unbalanced_rest();
                };
                let inner: String = self.chars[self.i + 2..close].iter().collect();
                if inner.len() > 1 && inner.starts_with('!') {
                    self.signal(Signal::Indirection);
                }
                let name_len = inner.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').count();
                if &inner[..name_len] == "IFS" {
                    self.signal(Signal::IfsExpansion);
                }
                let nested = self.expansions_in(&inner[name_len..]);
                self.word().nested.extend(nested);
                self.push_raw(start, close + 1);
                self.i = close + 1;
            }
            Some('\'') if !in_double_quotes => self.ansi_c_quote(),
            Some('"') if !in_double_quotes => {
                self.i += 2;
                self.double_quote();
            }
            Some(c) if c.is_ascii_alphabetic() || c == '_' => {
                let mut end = self.i + 1;
                while self.chars.get(end).is_some_and(|c| c.is_ascii_alphanumeric() || *c == '_') {
                    end += 1;
                }
                if self.chars[self.i + 1..end].iter().collect::<String>() == "IFS" {
                    self.signal(Signal::IfsExpansion);
                }
                self.push_raw(start, end);
                self.i = end;
            }
            Some(c) if c.is_ascii_digit() || "?$!#@*-".contains(c) => {
                self.push_raw(start, start + 2);
                self.i += 2;
            }
            _ => self.literal('$'),
        }
    }

    fn unbalanced_rest(&mut self) {
        self.signal(Signal::Unbalanced);
        let end = self.chars.len();
        self.push_raw(self.i, end);
        self.i = end;
    }

    /// `$'...'`: decoded the way bash decodes it.
    fn ansi_c_quote(&mut self) {
        self.signal(Signal::AnsiCQuote);
        self.i += 2;
        let mut value = String::new();
        loop {
            let Some(c) = self.peek(0) else {
                self.signal(Signal::Unbalanced);
                break;
            };
            self.i += 1;
            match c {
                '\'' => break,
                '\\' => {
                    let Some(e) = self.peek(0) else { break };
                    self.i += 1;
                    let decoded = match e {
                        'n' => Some('\n'),
                        't' => Some('\t'),
                        'r' => Some('\r'),
                        'a' => Some('\u{7}'),
                        'b' => Some('\u{8}'),
                        'e' | 'E' => Some('\u{1b}'),
                        'f' => Some('\u{c}'),
                        'v' => Some('\u{b}'),
                        'x' => self.radix_escape(16, 2),
                        'u' => self.radix_escape(16, 4),
                        'U' => self.radix_escape(16, 8),
                        '0'..='7' => {
                            self.i -= 1;
                            self.radix_escape(8, 3)
                        }
                        'c' => {
                            let ctl = self.peek(0).map(|c| char::from((u32::from(c) & 0x1f) as u8));
                            self.i += 1;
                            ctl
                        }
                        other => Some(other),
                    };
                    if let Some(d) = decoded {
                        self.check_char(d, true);
                        value.push(d);
                    }
                }
                c => {
                    self.check_char(c, true);
                    value.push(c);
                }
            }
        }
        let w = self.word();
        w.quoted = true;
        w.plain += value.chars().count().max(1);
        w.value.push_str(&value);
    }

    fn radix_escape(&mut self, radix: u32, max: usize) -> Option<char> {
        let mut n = 0u32;
        let mut digits = 0;
        while digits < max {
            let Some(d) = self.peek(0).and_then(|c| c.to_digit(radix)) else { break };
            n = n * radix + d;
            digits += 1;
            self.i += 1;
        }
        if digits == 0 {
            return None;
        }
        char::from_u32(n)
    }

    fn backtick(&mut self) {
        self.word();
        let start = self.i;
        self.i += 1;
        let mut inner = String::new();
        loop {
            match self.peek(0) {
                None => {
                    self.signal(Signal::Unbalanced);
                    break;
                }
                Some('`') => {
                    self.i += 1;
                    break;
                }
                Some('\\') if matches!(self.peek(1), Some('`' | '\\' | '$')) => {
                    inner.extend(self.peek(1));
                    self.i += 2;
                }
                Some(c) => {
                    inner.push(c);
                    self.i += 1;
                }
            }
        }
        self.signal(Signal::Backtick);
        let w = self.word();
        w.nested.push(Nested { kind: NestedKind::Backtick, text: inner });
        w.substitutions += 1;
        self.push_raw(start, self.i);
    }

    fn process_substitution(&mut self) {
        self.word();
        let start = self.i;
        let Some(close) = matching_close(&self.chars, self.i + 2, '(', ')') else {
            return self.unbalanced_rest();
        };
        let inner: String = self.chars[self.i + 2..close].iter().collect();
        self.signal(Signal::ProcessSubstitution);
        let w = self.word();
        w.nested.push(Nested { kind: NestedKind::Process, text: inner });
        w.substitutions += 1;
        self.push_raw(start, close + 1);
        self.i = close + 1;
    }

    /// `@(a|b)` and friends (extglob), and `arr=(a b)`: parentheses inside a word.
    fn paren_belongs_to_word(&self) -> bool {
        self.word.as_ref().is_some_and(|w| w.value.ends_with(['@', '!', '+', '*', '?', '=']))
    }

    fn paren_in_word(&mut self) {
        let Some(close) = matching_close(&self.chars, self.i + 1, '(', ')') else {
            return self.unbalanced_rest();
        };
        let inner: String = self.chars[self.i + 1..close].iter().collect();
        let nested = self.expansions_in(&inner);
        let raw: String = self.chars[self.i..=close].iter().collect();
        let w = self.word();
        w.nested.extend(nested);
        w.plain += raw.chars().count();
        w.value.push_str(&raw);
        self.i = close + 1;
    }

    /// `(( ... ))` as a command: arithmetic, one word.
    fn arithmetic_command(&mut self) {
        let Some(close) = matching_close(&self.chars, self.i + 1, '(', ')') else {
            return self.unbalanced_rest();
        };
        let inner: String = self.chars[self.i + 1..close].iter().collect();
        let nested = self.expansions_in(&inner);
        self.word().nested.extend(nested);
        self.push_raw(self.i, close + 1);
        self.i = close + 1;
        self.finish_word();
    }

    /// The substitutions inside text where only `$`, backticks and backslashes are special
    /// (an unquoted heredoc's body, `${x:-...}`, arithmetic).
    fn expansions_in(&mut self, text: &str) -> Vec<Nested> {
        if self.depth >= super::MAX_DEPTH {
            self.signal(Signal::TooDeep);
            return Vec::new();
        }
        let mut sub = Lexer::new(text, self.depth + 1);
        sub.word();
        while let Some(c) = sub.peek(0) {
            match c {
                '\\' => sub.i += 2,
                '$' => sub.dollar(true),
                '`' => sub.backtick(),
                c => {
                    sub.check_char(c, true);
                    sub.i += 1;
                }
            }
        }
        for s in sub.signals {
            self.signal(s);
        }
        sub.word.map(|w| w.nested).unwrap_or_default()
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
            let nested = if quoted { Vec::new() } else { self.expansions_in(&body) };
            if let Some(Token::Redirect(r)) = self.out.get_mut(index) {
                r.target.nested.extend(nested);
                r.body = Some(body);
            }
        }
    }
}

/// The index of the `close` that ends a group whose content starts at `from`, skipping quoted
/// text, escapes and nested groups; `None` when it never closes.
pub(super) fn matching_close(chars: &[char], from: usize, open: char, close: char) -> Option<usize> {
    let mut depth = 1usize;
    let mut in_double = false;
    let mut i = from;
    while let Some(&c) = chars.get(i) {
        match c {
            '\\' => i += 1,
            '\'' if !in_double => {
                i += 1;
                while chars.get(i).is_some_and(|c| *c != '\'') {
                    i += 1;
                }
            }
            '"' => in_double = !in_double,
            '`' => {
                i += 1;
                while chars.get(i).is_some_and(|c| *c != '`') {
                    if chars[i] == '\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            '$' if chars.get(i + 1) == Some(&open) => {
                depth += 1;
                i += 1;
            }
            c if c == open && !in_double => depth += 1,
            c if c == close && (!in_double || depth > 1) => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}
