//! What bash does to a word before it runs that a reader of text must do too: brace expansion
//! (`{rm,-rf,~}` is three words) and the values of variables set earlier in the same line
//! (`D=$HOME; rm -rf $D` deletes the home folder).
//!
//! Rule: only what is certain is expanded — unquoted braces with a comma, variables whose value
//! the line itself set — and the number of words one word may become is bounded; anything else
//! stays as written (and unknown, for the guardians).

use std::collections::HashMap;

use super::Word;

/// Words one brace expression may produce before the rest is left unexpanded.
const MAX_EXPANSION: usize = 256;

/// `word` after brace expansion: itself, or the words bash would make of it.
pub(super) fn brace_expand(word: &Word) -> Vec<Word> {
    // Quoted or escaped braces are literal; an expansion's text is not known yet (a `~` is
    // expanded after braces, so it does not stop them).
    let unknown = word.expands && (word.value.contains('$') || !word.nested.is_empty());
    if word.quoted || unknown || word.raw != word.value {
        return vec![word.clone()];
    }
    let mut out = Vec::new();
    expand(&word.value, &mut out);
    if out.len() <= 1 || out.len() > MAX_EXPANSION {
        return vec![word.clone()];
    }
    out.into_iter().filter(|v| !v.is_empty()).map(|v| Word { raw: v.clone(), value: v, ..word.clone() }).collect()
}

fn expand(text: &str, out: &mut Vec<String>) {
    if out.len() > MAX_EXPANSION {
        return;
    }
    let Some((open, close, parts)) = first_brace(text) else {
        out.push(text.to_string());
        return;
    };
    let (prefix, suffix) = (&text[..open], &text[close + 1..]);
    for part in parts {
        expand(&format!("{prefix}{part}{suffix}"), out);
    }
}

/// The first `{...}` with a comma at its own level: where it opens and closes, and its parts.
fn first_brace(text: &str) -> Option<(usize, usize, Vec<&str>)> {
    let bytes = text.as_bytes();
    for open in (0..bytes.len()).filter(|&i| bytes[i] == b'{') {
        let mut depth = 0;
        let mut commas = Vec::new();
        for (i, &b) in bytes.iter().enumerate().skip(open) {
            match b {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        if commas.is_empty() {
                            break;
                        }
                        let mut parts = Vec::new();
                        let mut start = open + 1;
                        for &c in &commas {
                            parts.push(&text[start..c]);
                            start = c + 1;
                        }
                        parts.push(&text[start..i]);
                        return Some((open, i, parts));
                    }
                }
                b',' if depth == 1 => commas.push(i),
                _ => {}
            }
        }
    }
    None
}

/// `word` with `$NAME` and `${NAME}` replaced where the line set NAME earlier; still
/// `expands` if anything unknown remains.
pub(super) fn substitute(word: &Word, vars: &HashMap<String, String>) -> Word {
    if !word.expands || vars.is_empty() || !word.value.contains('$') {
        return word.clone();
    }
    let mut value = String::with_capacity(word.value.len());
    let mut rest = word.value.as_str();
    while let Some(at) = rest.find('$') {
        value.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let (name, used) = match after.strip_prefix('{') {
            Some(inner) => match inner.find('}') {
                Some(end) if is_name(&inner[..end]) => (&inner[..end], end + 2),
                _ => ("", 0),
            },
            None => {
                let len = after.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').count();
                (&after[..len], len)
            }
        };
        match vars.get(name).filter(|_| is_name(name)) {
            Some(known) => value.push_str(known),
            None => value.push('$'),
        }
        rest = if vars.contains_key(name) && is_name(name) { &after[used..] } else { after };
    }
    value.push_str(rest);
    let expands = value.contains('$') || !word.nested.is_empty();
    Word { quoted: word.quoted && !tilde_value(&word.value, &value), value, expands, ..word.clone() }
}

/// `"$D"` whose value is `~/x`: bash expanded the tilde where the value was set (an assignment,
/// a loop's list, a call's argument), so the word names the home folder, quoted or not.
fn tilde_value(written: &str, value: &str) -> bool {
    written.starts_with('$') && (value == "~" || value.starts_with("~/"))
}

/// A function body's words with the call's arguments in place of `$1` ... `$9`, `$@` and `$*`;
/// a word that is only `$@` or `$*` becomes one word per argument, as `"$@"` does.
pub(super) fn bind_parameters(words: &[Word], args: &[String]) -> Vec<Word> {
    let mut out = Vec::with_capacity(words.len() + args.len());
    for word in words {
        if !word.expands || !word.value.contains('$') {
            out.push(word.clone());
            continue;
        }
        if matches!(word.value.as_str(), "$@" | "${@}" | "$*" | "${*}") && word.nested.is_empty() {
            out.extend(args.iter().map(|a| Word { raw: a.clone(), value: a.clone(), expands: false, ..word.clone() }));
            continue;
        }
        let all = args.join(" ");
        let mut value = word.value.clone();
        for (name, arg) in [("@", all.as_str()), ("*", all.as_str())] {
            value = value.replace(&format!("${{{name}}}"), arg).replace(&format!("${name}"), arg);
        }
        for n in (1..=9).rev() {
            let arg = args.get(n - 1).map_or("", String::as_str);
            value = value.replace(&format!("${{{n}}}"), arg).replace(&format!("${n}"), arg);
        }
        let expands = value.contains('$') || !word.nested.is_empty();
        out.push(Word { quoted: word.quoted && !tilde_value(&word.value, &value), value, expands, ..word.clone() });
    }
    out
}

/// What `echo` or `printf` prints for these arguments, escapes decoded (`printf '\x72\x6d'`
/// prints `rm`), so text piped into a shell is read as the script bash will run.
pub(super) fn printed(program: &str, args: &[&str]) -> String {
    if program == "printf" {
        let Some((format, mut rest)) = args.split_first() else { return String::new() };
        let mut out = String::new();
        // bash reuses the format while arguments remain; a few rounds are plenty to read.
        for _ in 0..16 {
            rest = format_once(format, rest, &mut out);
            if rest.is_empty() {
                break;
            }
        }
        return out;
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
    if escapes {
        unescape(&text, true)
    } else {
        text
    }
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

fn is_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn values(words: Vec<Word>) -> Vec<String> {
        words.into_iter().map(|w| w.value).collect()
    }

    #[test]
    fn braces_with_a_comma_expand_and_others_stay() {
        assert_eq!(values(brace_expand(&Word::plain("{rm,-rf,~}"))), ["rm", "-rf", "~"]);
        assert_eq!(values(brace_expand(&Word::plain("/etc/{passwd,shadow}"))), ["/etc/passwd", "/etc/shadow"]);
        assert_eq!(values(brace_expand(&Word::plain("a{b,c{d,e}}f"))), ["abf", "acdf", "acef"]);
        for literal in ["{}", "{a}", "x{", "}{", "${HOME}"] {
            assert_eq!(values(brace_expand(&Word::plain(literal))), [literal]);
        }
        let quoted = Word { quoted: true, ..Word::plain("{rm,-rf}") };
        assert_eq!(values(brace_expand(&quoted)), ["{rm,-rf}"]);
        let huge = "{a,b}".repeat(12);
        assert_eq!(brace_expand(&Word::plain(&huge)).len(), 1, "past the bound, left as written");
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
        let vars = HashMap::from([("D".to_string(), "$HOME".to_string()), ("X".to_string(), "/".to_string())]);
        let word = |v: &str| Word { expands: true, ..Word::plain(v) };
        assert_eq!(substitute(&word("$D"), &vars).value, "$HOME");
        assert_eq!(substitute(&word("${X}etc"), &vars).value, "/etc");
        let unknown = substitute(&word("$Y/x"), &vars);
        assert_eq!((unknown.value.as_str(), unknown.expands), ("$Y/x", true));
        let done = substitute(&word("$X"), &vars);
        assert_eq!((done.value.as_str(), done.expands), ("/", false));
    }
}
