//! What one parameter expansion `${...}` gives, operator by operator: defaults and alternatives
//! (`-`, `:-`, `=`, `:=`, `+`, `:+`, `?`, `:?`), pattern removal (`#`, `##`, `%`, `%%`),
//! replacement (`/`, `//`, `/#`, `/%`), substrings (`:offset:length`), case changes and the `@`
//! transforms (`@Q`, `@E`, `@P`, `@U`, `@u`, `@L`), lengths, array elements and the positional
//! parameters.
//!
//! Rule: each is followed exactly as bash follows it, or its value is [`UNKNOWN`]. A variable
//! from the environment may be set or not, and one that may be empty may be either, so where
//! the answer depends on that, both readings are given ([`Vars::either`]); `unset X` makes it
//! certain.

use super::super::{is_name, lexer};
use super::{maybe_empty, State, Vars, ALWAYS_SET, UNKNOWN};

/// Whether an expansion's word is used: always, never, or depending on what the variable holds.
#[derive(PartialEq, Eq)]
enum Taken {
    Yes,
    No,
    Maybe,
}

impl Vars {
    /// What `${inner}` reads to: the value, or [`UNKNOWN`]; `None` when it is a variable from the
    /// environment, to be left as written.
    pub(crate) fn parameter(&mut self, inner: &str) -> Option<String> {
        if let Some(special) = self.special(inner) {
            return special;
        }
        let name_len = inner.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').count();
        let (name, op) = inner.split_at(name_len);
        if name.is_empty() {
            return Some(self.prefixed(op));
        }
        if name.starts_with(|c: char| c.is_ascii_digit()) {
            return self.positional(name, op);
        }
        let state = self.state(name);
        if op.is_empty() {
            return match state {
                State::Set(v) => Some(v),
                State::Unknown => Some(UNKNOWN.to_string()),
                State::Unset => Some(String::new()),
                State::Environment => None,
            };
        }
        if let Some(rest) = op.strip_prefix('[') {
            return Some(self.element(name, rest, &state));
        }
        let value = match &state {
            State::Set(v) => v.clone(),
            State::Unknown => UNKNOWN.to_string(),
            State::Unset => String::new(),
            State::Environment => format!("${{{name}}}"),
        };
        // `${x:-w}` and `${x-w}`: w where x is unset (or empty, with the colon); `=` also
        // assigns it; `+` is w where x is set; `?` stops the line where it is not.
        for (text, colon) in [(":-", true), (":=", true), (":+", true), (":?", true)].into_iter().chain([
            ("-", false),
            ("=", false),
            ("+", false),
            ("?", false),
        ]) {
            let Some(word) = op.strip_prefix(text) else { continue };
            let taken = taken(&state, colon, name);
            let word = unquote(word);
            return match text.trim_start_matches(':') {
                "-" => Some(self.choose(taken, value, word)),
                "=" => {
                    if taken == Taken::Yes {
                        self.assign(name, &word);
                    } else if taken == Taken::Maybe {
                        self.defaults.push((name.to_string(), [value.clone(), word.clone()]));
                    }
                    Some(self.choose(taken, value, word))
                }
                "+" => {
                    let opposite = match taken {
                        Taken::Yes => Taken::No,
                        Taken::No => Taken::Yes,
                        Taken::Maybe => Taken::Maybe,
                    };
                    Some(self.choose(opposite, String::new(), word))
                }
                _ => match state {
                    State::Environment => None,
                    _ => Some(value),
                },
            };
        }
        let known = match state {
            State::Set(v) => v,
            State::Unset => String::new(),
            State::Unknown => {
                if op == "@P" {
                    self.prompts.push(UNKNOWN.to_string());
                }
                return Some(UNKNOWN.to_string());
            }
            // `${HOME%/*}`: the folder above; `${HOME#/}` is located later; anything else of
            // the environment is unknown.
            State::Environment if op == "%/*" => return Some(format!("${{{name}}}/..")),
            State::Environment if op == "#/" && ALWAYS_SET.contains(&name) => return None,
            State::Environment => return Some(UNKNOWN.to_string()),
        };
        Some(self.operate(&known, op).unwrap_or_else(|| UNKNOWN.to_string()))
    }

    /// The word where `taken` says so, else the value; both readings where it may go either way.
    fn choose(&mut self, taken: Taken, value: String, word: String) -> String {
        match taken {
            Taken::Yes => word,
            Taken::No => value,
            Taken::Maybe => self.either(value, word),
        }
    }

    /// `$@`, `$*`, `$#` and their braced forms with an operator (`${@:2}`); `None` when `inner`
    /// is no special parameter.
    fn special(&self, inner: &str) -> Option<Option<String>> {
        let (first, op) = inner.split_at(inner.chars().next().filter(|c| "@*#".contains(*c))?.len_utf8());
        if first == "#" && !op.is_empty() {
            return None; // `${#x}`: a length
        }
        let Some(args) = self.arrays.get("@") else { return Some(None) };
        let all = || args.join(" ");
        Some(Some(match (first, op) {
            ("#", _) => args.len().to_string(),
            (_, "") => all(),
            (_, op) => match op.strip_prefix(':').map(|o| substring_bounds(o, args.len() + 1)) {
                // `${@:0}` starts with `$0`.
                Some(Some((from, to))) => {
                    let zero = self.scalars.get("0").cloned().unwrap_or_else(|| UNKNOWN.to_string());
                    std::iter::once(zero)
                        .chain(args.iter().cloned())
                        .skip(from)
                        .take(to - from)
                        .collect::<Vec<_>>()
                        .join(" ")
                }
                _ => UNKNOWN.to_string(),
            },
        }))
    }

    /// `$0`, `$1`, `${10}`: known after `set --`, a call or `sh -c '...' name args`.
    fn positional(&mut self, name: &str, op: &str) -> Option<String> {
        let n = name.parse::<usize>().ok()?;
        let value = match n {
            0 => self.scalars.get("0").cloned(),
            n => self.arrays.get("@").map(|args| args.get(n - 1).cloned().unwrap_or_default()),
        };
        match (value, op) {
            (value, "") => value,
            (Some(v), op) => Some(self.operate(&v, op).unwrap_or_else(|| UNKNOWN.to_string())),
            (None, _) => Some(UNKNOWN.to_string()),
        }
    }

    /// `${#x}` (a length) and `${!x}` (the variable x names).
    fn prefixed(&mut self, op: &str) -> String {
        if let Some(name) = op.strip_prefix('#') {
            if let Some(array) = name.strip_suffix("[@]").or_else(|| name.strip_suffix("[*]")) {
                return self.arrays.get(array).map_or_else(|| UNKNOWN.to_string(), |a| a.len().to_string());
            }
            return match self.state(name) {
                State::Set(v) if !v.contains('$') => v.chars().count().to_string(),
                State::Unset => "0".to_string(),
                _ => UNKNOWN.to_string(),
            };
        }
        let target = op.strip_prefix('!').and_then(|n| self.scalars.get(n)).filter(|t| is_name(t)).cloned();
        match target {
            Some(t) => self.parameter(&t).unwrap_or_else(|| format!("${{{t}}}")),
            None => UNKNOWN.to_string(),
        }
    }

    /// `${a[i]}`, `${a[-1]}`, `${a[@]}`; `rest` follows the `[`.
    fn element(&self, name: &str, rest: &str, state: &State) -> String {
        let Some(index) = rest.strip_suffix(']') else { return UNKNOWN.to_string() };
        match (self.arrays.get(name), index.trim().parse::<i64>()) {
            (Some(items), Ok(i)) => {
                let at = if i < 0 { items.len().checked_sub(i.unsigned_abs() as usize) } else { Some(i as usize) };
                at.and_then(|i| items.get(i)).cloned().unwrap_or_default()
            }
            (Some(items), Err(_)) if matches!(index, "@" | "*") => items.join(" "),
            (None, Ok(0)) => match state {
                State::Set(v) => v.clone(),
                State::Unset => String::new(),
                _ => UNKNOWN.to_string(),
            },
            _ => UNKNOWN.to_string(),
        }
    }

    /// `op` applied to a known value: pattern removal, replacement, a substring, a case change, a
    /// transform; `None` for what this reader does not follow exactly.
    fn operate(&mut self, value: &str, op: &str) -> Option<String> {
        // Only a value the line wrote out can be cut or changed exactly (or its written part).
        let literal = !value.contains(['$', '`']);
        for (strip, suffix) in [("%%", true), ("%", true), ("##", false), ("#", false)] {
            if let Some(pattern) = op.strip_prefix(strip) {
                return remove_from_written(value, pattern, suffix, strip.len() == 2);
            }
        }
        if let Some(rest) = op.strip_prefix('/') {
            return replace(value, rest).filter(|_| literal);
        }
        if let Some(bounds) = op.strip_prefix(':') {
            let chars: Vec<char> = value.chars().collect();
            let (from, to) = substring_bounds(bounds, chars.len())?;
            return literal.then(|| chars[from..to].iter().collect());
        }
        if let Some(transform) = op.strip_prefix('@') {
            return self.transform(value, transform, literal);
        }
        match op {
            "^^" => literal.then(|| value.to_ascii_uppercase()),
            ",," => literal.then(|| value.to_ascii_lowercase()),
            "^" | "," => literal.then(|| {
                let mut chars = value.chars();
                let first =
                    chars.next().map(|c| if op == "^" { c.to_ascii_uppercase() } else { c.to_ascii_lowercase() });
                first.into_iter().chain(chars).collect()
            }),
            _ => None,
        }
    }

    /// `${x@Q}` quoted for reuse, `@E` with its backslash escapes decoded, `@U`, `@u`, `@L`
    /// recased; `@P` expanded as a prompt, which runs the substitutions the value holds (kept
    /// for the splitter to read) and gives what they print.
    fn transform(&mut self, value: &str, transform: &str, literal: bool) -> Option<String> {
        match transform {
            "P" => {
                self.prompts.push(value.to_string());
                None
            }
            _ if !literal => None,
            "Q" => Some(format!("'{}'", value.replace('\'', "'\\''"))),
            "E" => {
                let quoted = format!("$'{}'", value.replace('\'', "\\'"));
                lexer::lex(&quoted, super::super::MAX_DEPTH).tokens.into_iter().find_map(|t| match t {
                    lexer::Token::Word(w) => Some(w.value),
                    _ => None,
                })
            }
            "U" => Some(value.to_ascii_uppercase()),
            "L" => Some(value.to_ascii_lowercase()),
            "u" => {
                let mut chars = value.chars();
                Some(chars.next().map(|c| c.to_ascii_uppercase()).into_iter().chain(chars).collect())
            }
            _ => None,
        }
    }
}

/// Whether a default's word is used (`${x:-w}` with `colon`, `${x-w}` without), from what the
/// line did to the variable.
fn taken(state: &State, colon: bool, name: &str) -> Taken {
    match state {
        State::Unset => Taken::Yes,
        State::Set(v) if colon && v.is_empty() => Taken::Yes,
        State::Set(v) if colon && maybe_empty(v) => Taken::Maybe,
        State::Set(_) => Taken::No,
        State::Unknown if colon => Taken::Maybe,
        State::Unknown => Taken::No,
        State::Environment if ALWAYS_SET.contains(&name) => Taken::No,
        State::Environment => Taken::Maybe,
    }
}

/// A default word's quotes removed (`${x:-"~/a b"}`).
fn unquote(word: &str) -> String {
    lexer::lex(word, super::super::MAX_DEPTH)
        .tokens
        .into_iter()
        .filter_map(|t| match t {
            lexer::Token::Word(w) => Some(w.value),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// `${x:offset}` or `${x:offset:length}` of a value `len` long, as character positions, with
/// bash's negative offsets (from the end: `${x: -2}`, `${x:(-2)}`) and lengths (an end counted
/// from the end); `None` unless both are integers written out.
fn substring_bounds(bounds: &str, len: usize) -> Option<(usize, usize)> {
    let number = |text: &str| -> Option<i64> {
        let text = text.trim();
        let text = text.strip_prefix('(').and_then(|t| t.strip_suffix(')')).unwrap_or(text).trim();
        text.parse::<i64>().ok()
    };
    let (offset, length) = match bounds.split_once(':') {
        Some((o, l)) => (number(o)?, Some(number(l)?)),
        None => (number(bounds)?, None),
    };
    let len = i64::try_from(len).ok()?;
    let from = if offset < 0 { len + offset } else { offset };
    if from < 0 || from > len {
        return Some((0, 0));
    }
    let to = match length {
        None => len,
        Some(l) if l < 0 => len + l,
        Some(l) => from.saturating_add(l).min(len),
    };
    if to < from {
        return None; // bash: "substring expression < 0"
    }
    Some((usize::try_from(from).ok()?, usize::try_from(to).ok()?))
}

/// [`remove_pattern`] on a value that may hold expansions (`$HOME/a/b`): exact when the match
/// lies in the written text after the last expansion (for a suffix) or before the first (for a
/// prefix), and a longest match cannot reach past it; `None` otherwise.
fn remove_from_written(value: &str, pattern: &str, suffix: bool, longest: bool) -> Option<String> {
    let Some((first, end)) = expansion_span(value) else {
        return remove_pattern(value, pattern, suffix, longest);
    };
    if pattern.is_empty() {
        return Some(value.to_string());
    }
    let wildcard = pattern.contains(['*', '?', '[']);
    if longest && wildcard {
        return None;
    }
    let (written, kept) = if suffix { (&value[end..], &value[..end]) } else { (&value[..first], &value[first..]) };
    let cut = remove_pattern(written, pattern, suffix, longest)?;
    if cut == written {
        return None; // no match in the written part: the expansion may hold one
    }
    Some(if suffix { format!("{kept}{cut}") } else { format!("{cut}{kept}") })
}

/// Where the first expansion in `value` starts and the last one ends (`$X`, `${...}`, `$(...)`).
fn expansion_span(value: &str) -> Option<(usize, usize)> {
    let first = value.find(['$', '`'])?;
    let mut end = first;
    let mut at = first;
    while let Some(offset) = value[at..].find(['$', '`']) {
        let start = at + offset;
        let rest = &value[start + 1..];
        let len = if value[start..].starts_with('`') {
            rest.find('`').map_or(rest.len(), |i| i + 1)
        } else if let Some(braced) = rest.strip_prefix('{') {
            braced.find('}').map_or(rest.len(), |i| i + 2)
        } else if let Some(parens) = rest.strip_prefix('(') {
            let mut depth = 1usize;
            parens
                .char_indices()
                .find_map(|(i, c)| {
                    match c {
                        '(' => depth += 1,
                        ')' => depth -= 1,
                        _ => {}
                    }
                    (depth == 0).then_some(i + 2)
                })
                .unwrap_or(rest.len())
        } else {
            rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').count()
        };
        end = start + 1 + len;
        at = end;
    }
    Some((first, end))
}

/// `value` with a literal `pattern` (or `/*`, `*/`) removed from its end or start; `None` for a
/// pattern this reader does not match.
fn remove_pattern(value: &str, pattern: &str, suffix: bool, longest: bool) -> Option<String> {
    if !pattern.contains(['*', '?', '[', '\\', '$', '\'', '"']) {
        let kept = if suffix { value.strip_suffix(pattern) } else { value.strip_prefix(pattern) };
        return Some(kept.unwrap_or(value).to_string());
    }
    let at = match (pattern, suffix, longest) {
        ("/*", true, false) => value.rfind('/'),
        ("/*", true, true) => value.find('/'),
        ("*/", false, false) => value.find('/').map(|i| i + 1),
        ("*/", false, true) => value.rfind('/').map(|i| i + 1),
        _ => return None,
    };
    Some(match (at, suffix) {
        (Some(i), true) => value[..i].to_string(),
        (Some(i), false) => value[i..].to_string(),
        (None, _) => value.to_string(),
    })
}

/// `${x/pattern/with}` (`rest` follows the first `/`): `//` every match, `/#` at the start,
/// `/%` at the end; only a literal pattern and replacement are followed.
fn replace(value: &str, rest: &str) -> Option<String> {
    let (every, anchor, rest) = match rest.chars().next() {
        Some('/') => (true, None, &rest[1..]),
        Some('#') => (false, Some(true), &rest[1..]),
        Some('%') => (false, Some(false), &rest[1..]),
        _ => (false, None, rest),
    };
    let (pattern, with) = rest.split_once('/').unwrap_or((rest, ""));
    let special = ['*', '?', '[', '\\', '$', '\'', '"', '&', '`'];
    if pattern.contains(special) || with.contains(special) {
        return None;
    }
    if pattern.is_empty() {
        return Some(value.to_string());
    }
    Some(match anchor {
        Some(true) => value.strip_prefix(pattern).map_or_else(|| value.to_string(), |r| format!("{with}{r}")),
        Some(false) => value.strip_suffix(pattern).map_or_else(|| value.to_string(), |r| format!("{r}{with}")),
        None if every => value.replace(pattern, with),
        None => value.replacen(pattern, with, 1),
    })
}
