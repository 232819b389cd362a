//! What bash does to a word before it runs that a reader of text must do too: brace expansion
//! (`{rm,-rf,~}` is three words) and the values of variables set earlier in the same line
//! (`D=$HOME; rm -rf $D` deletes the home folder).
//!
//! Rule: only what is certain is expanded — unquoted braces with a comma or a sequence,
//! variables whose value the line itself set — and every byte made is charged to the line's [`Budget`]; what would
//! pass it (or the number of words one brace expression may become) stays as written, unknown
//! for the guardians, and spends the budget so the line asks.

use std::mem::size_of;

use super::budget::Budget;
use super::vars::Vars;
use super::{lexer, Word, MAX_DEPTH};

/// Words one brace expression may produce before the rest is left unexpanded.
const MAX_EXPANSION: usize = 256;

/// `word` after brace expansion: itself, or the words bash would make of it. Braces expand on
/// the text as written, before quotes are removed, so `{rm,-rf,/}''` and `{r""m,-rf,~}` are
/// three words each (each product is then read again as a word); quoted or escaped braces
/// are literal.
pub(super) fn brace_expand(word: Word, budget: &mut Budget) -> Vec<Word> {
    // An expansion's text is not known yet (a `~` is expanded after braces, so it does not
    // stop them); a word a variable filled was not a brace expression when bash expanded braces.
    let unknown = word.raw.contains(['$', '`']) || !word.nested.is_empty();
    if unknown || !word.raw.contains('{') {
        return vec![word];
    }
    // Each product is kept twice (as written and as read).
    let Some(out) = expand(&word.raw, budget.left() / 2) else {
        // `{rm,-rf,~}{,}{,}...`: left as written, the word is not what runs.
        budget.give_up();
        return vec![word];
    };
    let weight: usize = out.iter().map(|v| size_of::<Word>() + 2 * v.len()).sum();
    let unchanged = out.len() == 1 && out[0] == word.raw;
    if unchanged || !budget.take(weight) {
        return vec![word];
    }
    let plain = word.raw == word.value;
    out.into_iter()
        .filter(|v| !v.is_empty())
        .filter_map(|raw| {
            if plain {
                return Some(Word { raw: raw.clone(), value: raw, ..word.clone() });
            }
            // Quotes inside a product: read it as the word it now is (`r""m` is `rm`).
            let read = lexer::lex(&raw, MAX_DEPTH).tokens.into_iter().find_map(|t| match t {
                lexer::Token::Word(w) => Some(w),
                _ => None,
            })?;
            Some(Word { raw, value: read.value, quoted: read.quoted, ..word.clone() })
        })
        .collect()
}

/// The words `text` expands to, in bash's order, or `None` past [`MAX_EXPANSION`] words or
/// `max_bytes` bytes. Expanded a level at a time (the first brace of every word), so neither
/// the stack nor the work grows with the number of braces: a level costs at most `max_bytes`,
/// and every level adds a word.
fn expand(text: &str, max_bytes: usize) -> Option<Vec<String>> {
    let mut level: Vec<(String, bool)> = vec![(text.to_string(), false)];
    loop {
        let mut next: Vec<(String, bool)> = Vec::with_capacity(level.len());
        let mut bytes = 0usize;
        let mut changed = false;
        for (text, done) in level {
            let brace = if done { None } else { first_brace(&text) };
            let Some((open, close, parts)) = brace else {
                bytes += text.len();
                next.push((text, true));
                continue;
            };
            changed = true;
            let (prefix, suffix) = (&text[..open], &text[close + 1..]);
            for part in parts {
                bytes += prefix.len() + part.len() + suffix.len();
                if next.len() >= MAX_EXPANSION || bytes > max_bytes {
                    return None;
                }
                next.push((format!("{prefix}{part}{suffix}"), false));
            }
        }
        if bytes > max_bytes {
            return None;
        }
        if !changed {
            return Some(next.into_iter().map(|(text, _)| text).collect());
        }
        level = next;
    }
}

/// The first `{...}` with a comma at its own level, or a sequence (`{a..e}`, `{1..9..2}`):
/// where it opens and closes, and its parts. Braces inside quotes or after a backslash are
/// text. One pass pairs every brace (a stack of the open ones), so a word of many braces costs
/// its length, not its length squared.
fn first_brace(text: &str) -> Option<(usize, usize, Vec<String>)> {
    let bytes = text.as_bytes();
    // Open braces with the commas at their own level.
    let mut open: Vec<(usize, Vec<usize>)> = Vec::new();
    let mut first: Option<(usize, usize, Vec<String>)> = None;
    let mut quote: Option<u8> = None;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match (quote, b) {
            (Some(q), _) if b == q => quote = None,
            (Some(_), _) => {}
            (None, b'\\') => i += 1,
            (None, b'\'' | b'"') => quote = Some(b),
            (None, b'{') => open.push((i, Vec::new())),
            (None, b',') => {
                if let Some((_, commas)) = open.last_mut() {
                    commas.push(i);
                }
            }
            (None, b'}') => {
                if let Some((at, commas)) = open.pop() {
                    let earlier = first.as_ref().is_none_or(|(f, _, _)| at < *f);
                    let parts = if commas.is_empty() {
                        sequence(&text[at + 1..i])
                    } else {
                        Some(split_at(text, at, i, &commas))
                    };
                    if let (Some(parts), true) = (parts, earlier) {
                        first = Some((at, i, parts));
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
    first
}

fn split_at(text: &str, at: usize, close: usize, commas: &[usize]) -> Vec<String> {
    let mut parts = Vec::with_capacity(commas.len() + 1);
    let mut start = at + 1;
    for &c in commas {
        parts.push(text[start..c].to_string());
        start = c + 1;
    }
    parts.push(text[start..close].to_string());
    parts
}

/// `a..e`, `1..10`, `10..1..3`: the values bash makes, or `None` when it is not a sequence
/// (or would make more than [`MAX_EXPANSION`] values).
fn sequence(inner: &str) -> Option<Vec<String>> {
    let parts: Vec<&str> = inner.split("..").collect();
    let (from, to, step) = match parts.as_slice() {
        [a, b] => (*a, *b, 1i64),
        [a, b, c] => (*a, *b, c.parse::<i64>().ok()?.checked_abs()?.max(1)),
        _ => return None,
    };
    let letter = |s: &str| (s.len() == 1 && s.as_bytes()[0].is_ascii_alphabetic()).then(|| i64::from(s.as_bytes()[0]));
    let (start, end, letters) = match (from.parse::<i64>(), to.parse::<i64>()) {
        (Ok(a), Ok(b)) => (a, b, false),
        _ => (letter(from)?, letter(to)?, true),
    };
    let count = start.abs_diff(end) / step.unsigned_abs() + 1;
    if count > MAX_EXPANSION as u64 {
        return None;
    }
    let direction = if end >= start { step } else { -step };
    let values = (0..count as i64).map(|k| start + k * direction);
    Some(
        values
            .map(|v| if letters { char::from(u8::try_from(v).unwrap_or(b'?')).to_string() } else { v.to_string() })
            .collect(),
    )
}

/// `word` with each parameter the line can say something about replaced ([`Vars::parameter`]:
/// a value the line set, a default, [`UNKNOWN`](super::vars::UNKNOWN)); still `expands` if
/// anything unknown remains. A value that would pass what is left of the budget is not made:
/// the word stays as written.
pub(super) fn substitute(word: Word, vars: &mut Vars, budget: &mut Budget) -> Word {
    if !word.expands || !word.value.contains('$') {
        return word;
    }
    let limit = budget.left();
    let mut value = String::with_capacity(word.value.len().min(limit));
    let mut rest = word.value.as_str();
    let mut replaced = false;
    while let Some(at) = rest.find('$') {
        value.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let (read, used) = match after.strip_prefix('{') {
            Some(inner) => match closing_brace(inner) {
                Some(end) => (vars.parameter(&inner[..end]), end + 2),
                None => (None, 0),
            },
            None => {
                // `$1x` is `${1}x`; `$@`, `$*`, `$#` are one character too.
                let len = match after.chars().next() {
                    Some(c) if c.is_ascii_digit() || "@*#".contains(c) => 1,
                    _ => after.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').count(),
                };
                if len == 0 {
                    (None, 0)
                } else {
                    (vars.parameter(&after[..len]), len)
                }
            }
        };
        match read {
            Some(known) => {
                if value.len() + known.len() > limit {
                    budget.give_up();
                    return word;
                }
                value.push_str(&known);
                replaced = true;
                rest = &after[used..];
            }
            None => {
                value.push('$');
                rest = after;
            }
        }
    }
    value.push_str(rest);
    if !replaced {
        return word;
    }
    if !budget.take(value.len()) {
        return word;
    }
    let expands = value.contains('$') || !word.nested.is_empty();
    Word { quoted: word.quoted && !tilde_value(&word.value, &value), value, expands, ..word }
}

/// Where the `}` closing a `${` ends, nested braces counted.
fn closing_brace(inner: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => return Some(i),
            '}' => depth -= 1,
            _ => {}
        }
    }
    None
}

/// An unquoted word whose value a substitution filled with separators is split there, as bash
/// splits it (`x="rm -rf ~"; $x` runs `rm` with two arguments); `ifs` is the line's own `IFS`
/// (`IFS=,; c=rm,-rf,/; $c`), unknown when it could not be read.
pub(super) fn split_fields(word: Word, ifs: Option<&str>) -> Vec<Word> {
    let unknown = word.value.contains("$(") || word.value.contains('`') || ifs.is_some_and(|i| i.contains("$("));
    let separator = |c: char| match ifs {
        Some(ifs) => ifs.contains(c),
        None => matches!(c, ' ' | '\t' | '\n'),
    };
    // Only what an expansion made is split: with the default IFS an unquoted word's own text
    // holds no separator; with the line's own IFS only a word that is one expansion is split
    // (its literal text could hold separators bash leaves alone).
    let expanded = word.raw.contains(['$', '`']);
    if word.quoted
        || unknown
        || !expanded
        || (ifs.is_some() && !one_expansion(&word.raw))
        || !word.value.contains(separator)
    {
        return vec![word];
    }
    word.value
        .split(separator)
        .filter(|v| !v.is_empty())
        .map(|v| Word { raw: word.raw.clone(), value: v.to_string(), ..word.clone() })
        .collect()
}

/// A word that is one parameter expansion and nothing else (`$x`, `${x}`).
pub(super) fn one_expansion(raw: &str) -> bool {
    raw.strip_prefix('$')
        .is_some_and(|rest| !rest.is_empty() && rest.chars().all(|c| c.is_ascii_alphanumeric() || "_{}".contains(c)))
}

/// `"$D"` whose value is `~/x`: bash expanded the tilde where the value was set (an assignment,
/// a loop's list, a call's argument), so the word names the home folder, quoted or not.
fn tilde_value(written: &str, value: &str) -> bool {
    written.starts_with('$') && (value == "~" || value.starts_with("~/"))
}

/// What `echo` or `printf` prints for these arguments, escapes decoded (`printf '\x72\x6d'`
/// prints `rm`), so text piped into a shell is read as the script bash will run; `None` when
/// that is more than `limit` bytes.
pub(super) fn printed(program: &str, args: &[&str], limit: usize) -> Option<String> {
    if program == "seq" {
        return sequence_lines(args, limit);
    }
    if program == "printf" {
        let Some((format, mut rest)) = args.split_first() else { return Some(String::new()) };
        let mut out = String::new();
        // bash reuses the format while arguments remain; a few rounds are plenty to read.
        for _ in 0..16 {
            rest = format_once(format, rest, &mut out);
            if out.len() > limit {
                return None;
            }
            if rest.is_empty() {
                break;
            }
        }
        return Some(out);
    }
    let mut escapes = false;
    let mut at = 0;
    while let Some(flag) = args.get(at).and_then(|a| a.strip_prefix('-')) {
        if flag.is_empty() || !flag.chars().all(|c| matches!(c, 'e' | 'n' | 'E')) {
            break;
        }
        escapes = flag.contains('e') || (escapes && !flag.contains('E'));
        at += 1;
    }
    let text = args[at..].join(" ");
    let text = if escapes { unescape(&text, true) } else { text };
    (text.len() <= limit).then_some(text)
}

/// What `seq LAST`, `seq FIRST LAST` or `seq FIRST STEP LAST` prints, for integers without
/// options; `None` otherwise or past `limit` bytes.
fn sequence_lines(args: &[&str], limit: usize) -> Option<String> {
    let numbers: Vec<i64> = args.iter().map(|a| a.parse::<i64>().ok()).collect::<Option<_>>()?;
    let (first, step, last) = match numbers.as_slice() {
        [last] => (1, 1, *last),
        [first, last] => (*first, 1, *last),
        [first, step, last] if *step != 0 => (*first, *step, *last),
        _ => return None,
    };
    let mut out = String::new();
    let mut n = first;
    while (step > 0 && n <= last) || (step < 0 && n >= last) {
        out.push_str(&n.to_string());
        out.push('\n');
        if out.len() > limit {
            return None;
        }
        n = n.checked_add(step)?;
    }
    Some(out)
}

/// One pass of a printf format; returns the arguments it did not use.
fn format_once<'a>(format: &str, mut args: &'a [&'a str], out: &mut String) -> &'a [&'a str] {
    let mut next = || {
        let (first, rest) = args.split_first().map_or(("", &[][..]), |(f, r)| (*f, r));
        args = rest;
        first
    };
    let mut chars = format.chars().peekable();
    let mut literal = String::new();
    while let Some(c) = chars.next() {
        if c != '%' {
            literal.push(c);
            continue;
        }
        out.push_str(&unescape(&std::mem::take(&mut literal), false));
        // Flags and width, then the conversion.
        let mut conversion = None;
        for d in chars.by_ref() {
            if d.is_ascii_alphabetic() || d == '%' {
                conversion = Some(d);
                break;
            }
        }
        match conversion {
            Some('%') => out.push('%'),
            Some('b') => out.push_str(&unescape(next(), true)),
            Some(_) => out.push_str(next()),
            None => {}
        }
    }
    out.push_str(&unescape(&literal, false));
    args
}

/// Backslash escapes as `printf` (and `echo -e`, whose octal needs a leading 0) decode them.
fn unescape(text: &str, echo_style: bool) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = chars.next() else {
            out.push('\\');
            break;
        };
        let digits = |chars: &mut std::iter::Peekable<std::str::Chars<'_>>, radix: u32, max: usize| {
            let mut value = 0u32;
            let mut n = 0;
            while n < max {
                match chars.peek().and_then(|d| d.to_digit(radix)) {
                    Some(d) => {
                        value = value * radix + d;
                        chars.next();
                        n += 1;
                    }
                    None => break,
                }
            }
            (n > 0).then(|| char::from_u32(value)).flatten()
        };
        match e {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            'a' => out.push('\u{7}'),
            'b' => out.push('\u{8}'),
            'e' | 'E' => out.push('\u{1b}'),
            'f' => out.push('\u{c}'),
            'v' => out.push('\u{b}'),
            '\\' => out.push('\\'),
            'x' => out.extend(digits(&mut chars, 16, 2)),
            'u' => out.extend(digits(&mut chars, 16, 4)),
            'U' => out.extend(digits(&mut chars, 16, 8)),
            '0' if echo_style => out.extend(digits(&mut chars, 8, 3).or(Some('\0'))),
            '0'..='7' if !echo_style => {
                let mut value = e.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    match chars.peek().and_then(|d| d.to_digit(8)) {
                        Some(d) => {
                            value = value * 8 + d;
                            chars.next();
                        }
                        None => break,
                    }
                }
                out.extend(char::from_u32(value));
            }
            other => {
                out.push('\\');
                out.push(other);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::super::budget;
    use super::*;

    fn values(words: Vec<Word>) -> Vec<String> {
        words.into_iter().map(|w| w.value).collect()
    }

    fn brace_expand(word: &Word) -> Vec<Word> {
        super::brace_expand(word.clone(), &mut Budget::for_len(0))
    }

    fn printed(program: &str, args: &[&str]) -> String {
        super::printed(program, args, usize::MAX).unwrap()
    }

    fn vars(pairs: &[(&str, &str)]) -> Vars {
        let mut vars = Vars::default();
        for (name, value) in pairs {
            vars.assign(name, value);
        }
        vars
    }

    fn substitute(word: &Word, vars: &Vars) -> Word {
        super::substitute(word.clone(), &mut vars.clone(), &mut Budget::for_len(0))
    }

    #[test]
    fn braces_with_a_comma_expand_and_others_stay() {
        assert_eq!(values(brace_expand(&Word::plain("{rm,-rf,~}"))), ["rm", "-rf", "~"]);
        assert_eq!(values(brace_expand(&Word::plain("/etc/{passwd,shadow}"))), ["/etc/passwd", "/etc/shadow"]);
        assert_eq!(values(brace_expand(&Word::plain("a{b,c{d,e}}f"))), ["abf", "acdf", "acef"]);
        assert_eq!(values(brace_expand(&Word::plain("{r..r}m"))), ["rm"]);
        assert_eq!(values(brace_expand(&Word::plain("{a..c}"))), ["a", "b", "c"]);
        assert_eq!(values(brace_expand(&Word::plain("{3..1}"))), ["3", "2", "1"]);
        let quoted_part = Word { quoted: true, raw: "{rm,-rf,/}''".into(), ..Word::plain("{rm,-rf,/}") };
        assert_eq!(values(brace_expand(&quoted_part)), ["rm", "-rf", "/"]);
        for literal in ["{}", "{a}", "x{", "}{", "${HOME}", "{a..}", "{1..2..x}"] {
            assert_eq!(values(brace_expand(&Word::plain(literal))), [literal]);
        }
        let quoted = Word { quoted: true, raw: "'{rm,-rf}'".into(), ..Word::plain("{rm,-rf}") };
        assert_eq!(values(brace_expand(&quoted)), ["{rm,-rf}"]);
        assert_eq!(values(brace_expand(&Word::plain("{x,{a,b}}y"))), ["xy", "ay", "by"]);
        assert_eq!(values(brace_expand(&Word::plain("{{a,b}"))), ["{a", "{b"]);
        assert_eq!(values(brace_expand(&Word::plain("}{a,b}{"))), ["}a{", "}b{"]);
        let huge = "{a,b}".repeat(12);
        let mut budget = Budget::for_len(0);
        assert_eq!(super::brace_expand(Word::plain(&huge), &mut budget).len(), 1, "past the bound, left as written");
        assert!(budget.exhausted(), "and said");
    }

    #[test]
    fn what_would_pass_the_budget_is_left_as_written() {
        let big = "x".repeat(budget::FLOOR / 2 + 1);
        let vars = vars(&[("a", &big)]);
        let word = Word { expands: true, ..Word::plain("$a$a") };
        let mut budget = Budget::for_len(0);
        let kept = super::substitute(word.clone(), &mut vars.clone(), &mut budget);
        assert_eq!((kept.value.as_str(), kept.expands, budget.exhausted()), ("$a$a", true, true));
        let once = Word { expands: true, ..Word::plain("$a") };
        let mut budget = Budget::for_len(0);
        assert_eq!(super::substitute(once, &mut vars.clone(), &mut budget).value, big, "one copy fits");
        let mut vars = vars;
        vars.set_positionals(Some(vec![big]));
        let mut budget = Budget::for_len(0);
        let bound = super::substitute(Word { expands: true, ..Word::plain("$1$1$1") }, &mut vars, &mut budget);
        assert_eq!((bound.value.as_str(), budget.exhausted()), ("$1$1$1", true));
        assert_eq!(super::printed("printf", &["%s-%s", "a", "b"], 2), None, "3 bytes");
    }

    #[test]
    fn what_echo_and_printf_print_is_decoded() {
        assert_eq!(printed("printf", &["\\x72\\x6d\\x20-rf"]), "rm -rf");
        assert_eq!(printed("printf", &["%s %s\\n", "rm", "-rf", "a", "b"]), "rm -rf\na b\n");
        assert_eq!(printed("printf", &["\\162\\155 %b", "\\x7e"]), "rm ~");
        assert_eq!(printed("printf", &["100%% %d", "5"]), "100% 5");
        assert_eq!(printed("echo", &["-e", "\\x72m", "x"]), "rm x");
        assert_eq!(printed("echo", &["-ne", "\\0162m"]), "rm");
        assert_eq!(printed("echo", &["\\x72m"]), "\\x72m", "no -e, no decoding");
        assert_eq!(printed("echo", &["-x", "y"]), "-x y");
    }

    #[test]
    fn known_variables_are_substituted_and_unknown_ones_stay() {
        let vars = vars(&[("D", "$HOME"), ("X", "/")]);
        let word = |v: &str| Word { expands: true, ..Word::plain(v) };
        assert_eq!(substitute(&word("$D"), &vars).value, "$HOME");
        assert_eq!(substitute(&word("${X}etc"), &vars).value, "/etc");
        let unknown = substitute(&word("$Y/x"), &vars);
        assert_eq!((unknown.value.as_str(), unknown.expands), ("$Y/x", true));
        let done = substitute(&word("$X"), &vars);
        assert_eq!((done.value.as_str(), done.expands), ("/", false));
    }
}
