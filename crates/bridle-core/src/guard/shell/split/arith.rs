//! Arithmetic: where bash evaluates text as arithmetic — `$((...))`, `$[...]`, `((...))`, `for
//! ((...))`, `let`, `declare -i` and what is later assigned to an integer, `[[ a -eq b ]]`,
//! array subscripts, a substring's offset — and what that evaluation runs.
//!
//! Rule: bash expands an array subscript met inside arithmetic (`a[$(cmd)]`), and evaluates a
//! variable's value as arithmetic in turn, so a value holding `a[$(cmd)]` runs `cmd` wherever it
//! is evaluated. Every substitution met this way is read as a command. What a substitution
//! prints, or a value the reader cannot know, may hold anything bash would run: that is said
//! with [`Signal::UnknownEvaluated`], which asks. Values followed are charged to the budget and
//! nesting stops at [`MAX_DEPTH`].

use super::super::lexer;
use super::super::vars::UNKNOWN;
use super::super::{basename, fold, Origin, Signal, Word, MAX_DEPTH};
use super::Splitter;

/// `[[ ... ]]` operators whose operands are arithmetic.
const ARITHMETIC_TESTS: &[&str] = &["-eq", "-ne", "-lt", "-le", "-gt", "-ge"];

/// Builtins whose arguments name variables, where `a[i]` evaluates its subscript.
const NAMES_VARIABLES: &[&str] = &[
    "unset",
    "declare",
    "typeset",
    "local",
    "export",
    "readonly",
    "read",
    "mapfile",
    "readarray",
    "printf",
    "getopts",
    "wait",
    "test",
    "[",
    "[[",
];

impl Splitter {
    /// Evaluates `expression` as bash would, reading what it runs.
    pub(super) fn arithmetic(&mut self, expression: &str, depth: usize) {
        let mut visiting = Vec::new();
        self.evaluate(expression, depth, &mut visiting);
    }

    /// The arithmetic a simple command (its words expanded) makes bash evaluate: `let`'s
    /// arguments, `declare -i` values and values assigned to integers, `[[`'s arithmetic
    /// operands, subscripts of assigned elements and of variables named to builtins.
    pub(super) fn arithmetic_of_command(&mut self, words: &[Word], assignments: &[Word], depth: usize) {
        let program = words.first().map(|w| basename(&w.value)).unwrap_or_default();
        let args = words.get(1..).unwrap_or(&[]);
        let declares_integer = matches!(program, "declare" | "typeset" | "local")
            && args.iter().any(|w| w.value.starts_with('-') && w.value.contains('i'));
        let mut expressions: Vec<&str> = Vec::new();
        for a in assignments {
            let Some((name, value)) = a.value.split_once('=') else { continue };
            let name = name.trim_end_matches('+');
            match name.strip_suffix(']').and_then(|n| n.split_once('[')) {
                Some((array, index)) => {
                    expressions.push(index);
                    if self.vars.is_integer(array) || declares_integer {
                        expressions.push(value);
                    }
                }
                None if self.vars.is_integer(name) || declares_integer => expressions.push(value),
                None => {}
            }
        }
        match program {
            "let" => expressions.extend(args.iter().map(|w| w.value.as_str())),
            "[[" => {
                for (k, w) in args.iter().enumerate() {
                    if ARITHMETIC_TESTS.contains(&w.value.as_str()) && !w.quoted {
                        expressions.extend(k.checked_sub(1).and_then(|p| args.get(p)).map(|w| w.value.as_str()));
                        expressions.extend(args.get(k + 1).map(|w| w.value.as_str()));
                    }
                }
            }
            _ => {}
        }
        if NAMES_VARIABLES.contains(&program) {
            expressions.extend(args.iter().filter_map(|w| subscript(&w.value)));
        }
        let expressions: Vec<String> = expressions.into_iter().map(str::to_string).collect();
        for expression in expressions {
            self.arithmetic(&expression, depth);
        }
    }

    /// Text bash expands as a prompt (`${x@P}`): the substitutions it holds run.
    pub(super) fn evaluate_code(&mut self, text: &str, depth: usize) {
        let (inside, signals) = lexer::expansions(text, depth);
        for s in signals {
            self.signal(s);
        }
        for nested in inside.nested {
            self.run_substitution(&nested.text, depth);
        }
    }

    fn evaluate(&mut self, text: &str, depth: usize, visiting: &mut Vec<String>) {
        if depth > MAX_DEPTH {
            self.signal(Signal::TooDeep);
            return;
        }
        if !self.budget.take(text.len()) {
            return;
        }
        let (inside, signals) = lexer::expansions(text, depth);
        for s in signals {
            self.signal(s);
        }
        // A substitution runs; what it prints is evaluated in turn.
        for nested in inside.nested {
            if self.run_substitution(&nested.text, depth) {
                match fold::output(&nested.text, &mut self.vars, &mut self.budget) {
                    Some(out) => self.evaluate(&out, depth + 1, visiting),
                    None => self.signal(Signal::UnknownEvaluated),
                }
            }
        }
        // A variable's value is evaluated again.
        for name in names_in(text) {
            if visiting.iter().any(|v| v == name) {
                continue;
            }
            let values = match self.vars.values(name) {
                Some(values) => values,
                // From the environment: the user's, not the line's.
                None => self.loops.get(name).cloned().unwrap_or_default(),
            };
            visiting.push(name.to_string());
            for value in values {
                if value.contains(UNKNOWN) {
                    self.signal(Signal::UnknownEvaluated);
                } else if value.parse::<i64>().is_err() {
                    self.evaluate(&value, depth + 1, visiting);
                }
            }
            visiting.pop();
        }
    }

    /// Reads a substitution's command; `false` for [`UNKNOWN`]'s, which stands for a value, not
    /// a command, and is said instead.
    fn run_substitution(&mut self, text: &str, depth: usize) -> bool {
        if text == "?" {
            self.signal(Signal::UnknownEvaluated);
            return false;
        }
        if self.seen.insert(text.to_string()) {
            self.parse_into(text, depth + 1, Origin::Substitution, &[], self.dialect);
        }
        true
    }
}

/// The names in arithmetic text (`x`, `$x`, `${x}`, `a` of `a[i]`), outside substitutions.
fn names_in(text: &str) -> Vec<&str> {
    let bytes = text.as_bytes();
    let mut names: Vec<&str> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        // A command, not names: skipped to its end.
        if b == b'`' {
            i += 1 + bytes[i + 1..].iter().position(|c| *c == b'`').map_or(bytes.len(), |p| p + 1);
            continue;
        }
        if b == b'$' && bytes.get(i + 1) == Some(&b'(') {
            let mut depth = 0usize;
            let mut j = i + 1;
            while j < bytes.len() {
                match bytes[j] {
                    b'(' => depth += 1,
                    b')' => depth -= 1,
                    _ => {}
                }
                j += 1;
                if depth == 0 {
                    break;
                }
            }
            i = j;
            continue;
        }
        let starts = b.is_ascii_alphabetic() || b == b'_';
        let after_word = i > 0 && (bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
        if starts && !after_word {
            let end = bytes[i..]
                .iter()
                .position(|c| !(c.is_ascii_alphanumeric() || *c == b'_'))
                .map_or(bytes.len(), |p| i + p);
            let name = &text[i..end];
            if !names.contains(&name) {
                names.push(name);
            }
            i = end;
            continue;
        }
        i += 1;
    }
    names
}

/// The subscript of `name[subscript]` (or `name[subscript]=value`), when a word is one.
fn subscript(word: &str) -> Option<&str> {
    let open = word.find('[')?;
    if !super::super::is_name(&word[..open]) {
        return None;
    }
    let close = word.rfind(']')?;
    (close > open && (close + 1 == word.len() || word[close + 1..].starts_with(['=', '+'])))
        .then(|| &word[open + 1..close])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_subscripts_are_found_outside_substitutions() {
        assert_eq!(names_in("a[$(rm -rf ~)] + b*2 - $c + ${d} + 0x1f"), ["a", "b", "c", "d"]);
        assert_eq!(names_in("`rm x` + y"), ["y"]);
        assert_eq!(subscript("a[$(id)]"), Some("$(id)"));
        assert_eq!(subscript("a[i+1]=3"), Some("i+1"));
        assert_eq!(subscript("-v"), None);
        assert_eq!(subscript("[x]"), None);
    }
}
