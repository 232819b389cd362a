//! Expansions and substitutions inside words: `$name`, `${...}`, `$(...)`, `$((...))`,
//! backticks, `<(...)`, ANSI-C `$'...'`, and the scan of text where only `$`, backticks and
//! backslashes are special (an unquoted heredoc, a `${x:-...}` default, arithmetic).
//!
//! Rule: an expansion stays as written in the word's value; a nested command's text is handed
//! back to be read as a script; ANSI-C quoting is decoded exactly as bash decodes it, since that
//! is what the program receives.

use super::super::{Nested, NestedKind, Signal};
use super::{Dialect, Inside, Lexer};

impl Lexer {
    pub(super) fn push_raw(&mut self, from: usize, to: usize) {
        let raw: String = self.chars[from..to].iter().collect();
        let w = self.word();
        w.value.push_str(&raw);
        w.expands = true;
    }

    pub(super) fn dollar(&mut self, in_double_quotes: bool) {
        self.word();
        let start = self.i;
        match self.peek(1) {
            Some('(') => {
                let Some(close) = matching_close(&self.chars, self.i + 2, '(', ')') else {
                    return self.unbalanced_rest();
                };
                let inner: String = self.chars[self.i + 2..close].iter().collect();
                let expression = inner.strip_prefix('(').and_then(|i| i.strip_suffix(')')).filter(|e| balanced(e));
                if let Some(expression) = expression {
                    // `$((...))`: arithmetic, which only runs what is substituted inside it (and
                    // what the values it reads hold). Unbalanced inside (`$((a)|(b))`), bash runs
                    // it as a command substitution.
                    self.note_arithmetic(expression);
                } else {
                    self.signal(Signal::CommandSubstitution { quoted: in_double_quotes });
                    let raw = self.chars[start..=close].iter().collect();
                    let w = self.word();
                    w.nested.push(Nested { kind: NestedKind::Substitution, text: inner, raw });
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
                let inside = self.expansions_in(&inner[name_len..]);
                let w = self.word();
                w.nested.extend(inside.nested);
                w.arithmetic.extend(inside.arithmetic);
                w.arithmetic.extend(parameter_arithmetic(&inner));
                self.push_raw(start, close + 1);
                self.i = close + 1;
            }
            // `$[...]`: bash's old spelling of `$((...))`.
            Some('[') => {
                let Some(close) = matching_close(&self.chars, self.i + 2, '[', ']') else {
                    return self.unbalanced_rest();
                };
                let expression: String = self.chars[self.i + 2..close].iter().collect();
                self.note_arithmetic(&expression);
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

    pub(super) fn unbalanced_rest(&mut self) {
        self.signal(Signal::Unbalanced);
        let end = self.chars.len();
        self.push_raw(self.i, end);
        self.i = end;
    }

    /// `$'...'`: decoded the way bash decodes it.
    pub(super) fn ansi_c_quote(&mut self) {
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
                            if ctl.is_some() {
                                self.i += 1;
                            }
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

    pub(super) fn radix_escape(&mut self, radix: u32, max: usize) -> Option<char> {
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

    pub(super) fn backtick(&mut self) {
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
        let raw = self.chars[start..self.i].iter().collect();
        let w = self.word();
        w.nested.push(Nested { kind: NestedKind::Backtick, text: inner, raw });
        w.substitutions += 1;
        self.push_raw(start, self.i);
    }

    pub(super) fn process_substitution(&mut self) {
        self.word();
        let start = self.i;
        let Some(close) = matching_close(&self.chars, self.i + 2, '(', ')') else {
            return self.unbalanced_rest();
        };
        let inner: String = self.chars[self.i + 2..close].iter().collect();
        self.signal(Signal::ProcessSubstitution);
        let raw = self.chars[start..=close].iter().collect();
        let w = self.word();
        w.nested.push(Nested { kind: NestedKind::Process, text: inner, raw });
        w.substitutions += 1;
        self.push_raw(start, close + 1);
        self.i = close + 1;
    }

    /// `@(a|b)` and friends (extglob), and `arr=(a b)`: parentheses inside a word.
    pub(super) fn paren_belongs_to_word(&self) -> bool {
        self.word.as_ref().is_some_and(|w| w.value.ends_with(['@', '!', '+', '*', '?', '=']))
    }

    pub(super) fn paren_in_word(&mut self) {
        let Some(close) = matching_close(&self.chars, self.i + 1, '(', ')') else {
            return self.unbalanced_rest();
        };
        let inner: String = self.chars[self.i + 1..close].iter().collect();
        let inside = self.expansions_in(&inner);
        let raw: String = self.chars[self.i..=close].iter().collect();
        let w = self.word();
        w.nested.extend(inside.nested);
        w.arithmetic.extend(inside.arithmetic);
        w.plain += raw.chars().count();
        w.value.push_str(&raw);
        self.i = close + 1;
    }

    /// `((` where a command starts (or after `for`): bash reads up to the `)` that closes the
    /// second parenthesis; followed by another `)`, it is an arithmetic command, one word;
    /// otherwise (`((cmd) )`, `((cmd);true)`) it is two nested subshells, and the commands in
    /// them run.
    pub(super) fn double_paren(&mut self) {
        let Some(close) = matching_close(&self.chars, self.i + 2, '(', ')') else {
            return self.unbalanced_rest();
        };
        if self.chars.get(close + 1) != Some(&')') {
            return self.operator();
        }
        let expression: String = self.chars[self.i + 2..close].iter().collect();
        if self.dialect == Dialect::Posix {
            self.arithmetic.push(expression);
            return self.operator();
        }
        let start = self.i;
        self.word();
        self.note_arithmetic(&expression);
        self.push_raw(start, close + 2);
        self.i = close + 2;
        self.finish_word();
    }

    /// Notes `expression` as arithmetic of the current word, with what is substituted in it.
    fn note_arithmetic(&mut self, expression: &str) {
        let inside = self.expansions_in(expression);
        let w = self.word();
        w.nested.extend(inside.nested);
        w.arithmetic.extend(inside.arithmetic);
        w.arithmetic.push(expression.to_string());
    }

    /// The substitutions inside text where only `$`, backticks and backslashes are special
    /// (an unquoted heredoc's body, `${x:-...}`, arithmetic).
    pub(super) fn expansions_in(&mut self, text: &str) -> Inside {
        if self.depth >= super::super::MAX_DEPTH {
            self.signal(Signal::TooDeep);
            return Inside::default();
        }
        let mut sub = Lexer::new(text, self.depth + 1);
        sub.word();
        while let Some(c) = sub.peek(0) {
            match c {
                '\\' => sub.i = (sub.i + 2).min(sub.chars.len()),
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
        sub.word.map(|w| Inside { nested: w.nested, arithmetic: w.arithmetic }).unwrap_or_default()
    }
}

/// bash's check that `$((...))` holds an arithmetic expression: its parentheses balance, quotes
/// and escapes skipped.
fn balanced(expression: &str) -> bool {
    let mut depth = 0usize;
    let mut chars = expression.chars();
    while let Some(c) = chars.next() {
        match c {
            '(' => depth += 1,
            ')' => match depth.checked_sub(1) {
                Some(d) => depth = d,
                None => return false,
            },
            '\\' => {
                chars.next();
            }
            '\'' if !chars.by_ref().any(|c| c == '\'') => return false,
            '"' => loop {
                match chars.next() {
                    None => return false,
                    Some('"') => break,
                    Some('\\') => {
                        chars.next();
                    }
                    Some(_) => {}
                }
            },
            _ => {}
        }
    }
    depth == 0
}

/// The arithmetic inside `${...}` (its text between the braces): an indexed array's subscript
/// (`${a[i+1]}`) and a substring's offset and length (`${x:i:2}`, `${x: -1}`).
fn parameter_arithmetic(inner: &str) -> Vec<String> {
    let mut out = Vec::new();
    let body = inner.strip_prefix(['#', '!']).filter(|b| !b.is_empty()).unwrap_or(inner);
    let name_len = match body.chars().next() {
        Some(c) if "@*#?$!-".contains(c) => 1,
        _ => body.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').count(),
    };
    let mut rest = &body[name_len..];
    if let Some(subscript) = rest.strip_prefix('[') {
        let mut depth = 1usize;
        let end = subscript.char_indices().find_map(|(i, c)| {
            match c {
                '[' => depth += 1,
                ']' => depth -= 1,
                _ => {}
            }
            (depth == 0).then_some(i)
        });
        let Some(end) = end else { return out };
        if !matches!(&subscript[..end], "@" | "*") {
            out.push(subscript[..end].to_string());
        }
        rest = &subscript[end + 1..];
    }
    if let Some(offset) = rest.strip_prefix(':').filter(|o| !o.starts_with(['-', '=', '+', '?'])) {
        let mut depth = 0usize;
        let split = offset.char_indices().find_map(|(i, c)| {
            match c {
                '(' => depth += 1,
                ')' => depth = depth.saturating_sub(1),
                ':' if depth == 0 => return Some(i),
                _ => {}
            }
            None
        });
        match split {
            Some(i) => out.extend([offset[..i].to_string(), offset[i + 1..].to_string()]),
            None => out.push(offset.to_string()),
        }
    }
    out
}

/// The index of the `close` that ends a group whose content starts at `from`, skipping quoted
/// text, escapes and nested groups; `None` when it never closes.
fn matching_close(chars: &[char], from: usize, open: char, close: char) -> Option<usize> {
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
