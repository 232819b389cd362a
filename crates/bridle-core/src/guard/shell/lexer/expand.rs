//! Expansions and substitutions inside words: `$name`, `${...}`, `$(...)`, `$((...))`,
//! backticks, `<(...)`, ANSI-C `$'...'`, and the scan of text where only `$`, backticks and
//! backslashes are special (an unquoted heredoc, a `${x:-...}` default, arithmetic).
//!
//! Rule: an expansion stays as written in the word's value; a nested command's text is handed
//! back to be read as a script; ANSI-C quoting is decoded exactly as bash decodes it, since that
//! is what the program receives.

use super::super::{Nested, NestedKind, Signal};
use super::Lexer;

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
                if inner.starts_with('(') && inner.ends_with(')') && inner.len() >= 2 {
                    // `$((...))`: arithmetic, which only runs what is substituted inside it.
                    let nested = self.expansions_in(&inner[1..inner.len() - 1]);
                    self.word().nested.extend(nested);
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
        let nested = self.expansions_in(&inner);
        let raw: String = self.chars[self.i..=close].iter().collect();
        let w = self.word();
        w.nested.extend(nested);
        w.plain += raw.chars().count();
        w.value.push_str(&raw);
        self.i = close + 1;
    }

    /// `(( ... ))` as a command: arithmetic, one word.
    pub(super) fn arithmetic_command(&mut self) {
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
    pub(super) fn expansions_in(&mut self, text: &str) -> Vec<Nested> {
        if self.depth >= super::super::MAX_DEPTH {
            self.signal(Signal::TooDeep);
            return Vec::new();
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
        sub.word.map(|w| w.nested).unwrap_or_default()
    }
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
