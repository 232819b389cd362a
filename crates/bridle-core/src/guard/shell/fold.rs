//! Substitutions whose output the reader can compute from their words alone: `$(echo rm)`,
//! `` `printf %s ~` ``, `$(seq 3)`, `$(dirname ~/x)`, `$(basename /bin/rm)`, `` `pwd` ``.
//!
//! Rule: the inner command has already been read and judged on its own. Where it only prints
//! text made of words the reader knows, that text is what the outer word holds and is judged as
//! such (`$(echo rm) -rf ~` is `rm -rf ~`, unquoted output split into words as bash splits it).
//! Anything else — another program, an unknown word, a redirection, a second command — stays a
//! substitution: its output is unknown, never trusted.

use super::budget::Budget;
use super::lexer::{self, Op, Token};
use super::vars::Vars;
use super::words::{printed, substitute};
use super::{basename, NestedKind, Signal, Word, MAX_DEPTH};

/// `word` with each substitution the reader can compute replaced by its output.
pub(super) fn fold(mut word: Word, vars: &mut Vars, budget: &mut Budget) -> Word {
    let computable = |kind: NestedKind| matches!(kind, NestedKind::Substitution | NestedKind::Backtick);
    if !word.nested.iter().any(|n| computable(n.kind)) {
        return word;
    }
    let mut value = word.value.clone();
    let mut kept = Vec::with_capacity(word.nested.len());
    let mut folded = false;
    let mut from = 0;
    for nested in std::mem::take(&mut word.nested) {
        let at = value.get(from..).and_then(|rest| rest.find(&nested.raw)).map(|i| i + from);
        let (Some(at), true) = (at, computable(nested.kind)) else {
            kept.push(nested);
            continue;
        };
        match output(&nested.text, vars, budget) {
            Some(out) => {
                value.replace_range(at..at + nested.raw.len(), &out);
                from = at + out.len();
                folded = true;
            }
            None => {
                from = at + nested.raw.len();
                kept.push(nested);
            }
        }
    }
    if folded {
        word.expands = value.contains('$') || !kept.is_empty();
        word.whole_substitution = None;
        word.value = value;
    }
    word.nested = kept;
    word
}

/// What `text` prints, when it is one `echo`, `printf`, `seq`, `dirname`, `basename` or `pwd` of known
/// words; trailing newlines removed, as a substitution removes them.
pub(super) fn output(text: &str, vars: &mut Vars, budget: &mut Budget) -> Option<String> {
    let lexed = lexer::lex(text, MAX_DEPTH);
    if lexed.signals.iter().any(|s| matches!(s, Signal::Unbalanced | Signal::TooDeep)) {
        return None;
    }
    let mut words = Vec::new();
    for token in lexed.tokens {
        match token {
            Token::Word(w) if w.nested.is_empty() => words.push(substitute(w, vars, budget)),
            Token::Op(Op::Newline) => {}
            _ => return None,
        }
    }
    let (program, args) = words.split_first()?;
    let name = basename(&program.value);
    // `$HOME` and `$PWD` pass through a print unchanged, to be located later; a path taken
    // apart must be known.
    let passes = |w: &Word| !w.expands || (matches!(name, "echo" | "printf") && located_later(&w.value));
    if program.expands || !args.iter().all(passes) {
        return None;
    }
    let args: Vec<&str> = args.iter().map(|w| w.value.as_str()).collect();
    let out = match name {
        "echo" | "printf" | "seq" => printed(name, &args, budget.left())?,
        "pwd" if args.iter().all(|a| matches!(*a, "-L" | "-P")) => "$PWD".to_string(),
        "dirname" => args.iter().filter(|a| !a.starts_with('-')).map(|a| dirname(a)).collect::<Vec<_>>().join("\n"),
        "basename" => match args.as_slice() {
            [path] => last_component(path).to_string(),
            [path, suffix] if !path.starts_with('-') => {
                let base = last_component(path);
                base.strip_suffix(suffix).filter(|b| !b.is_empty()).unwrap_or(base).to_string()
            }
            _ => return None,
        },
        _ => return None,
    };
    budget.take(out.len()).then(|| out.trim_end_matches('\n').to_string())
}

/// A value whose only expansions are the ones paths are located with (`$HOME`, `$PWD`).
fn located_later(value: &str) -> bool {
    value.match_indices('$').all(|(i, _)| {
        let rest = &value[i + 1..];
        ["HOME", "{HOME}", "PWD", "{PWD}"].iter().any(|n| {
            rest.strip_prefix(n).is_some_and(|r| !r.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_'))
        })
    })
}

/// `dirname` as coreutils computes it, lexically.
fn dirname(path: &str) -> String {
    let trimmed = path.trim_end_matches('/');
    if trimmed.is_empty() {
        return if path.is_empty() { ".".into() } else { "/".into() };
    }
    match trimmed.rfind('/') {
        None => ".".into(),
        Some(i) => {
            let parent = trimmed[..i].trim_end_matches('/');
            if parent.is_empty() {
                "/".into()
            } else {
                parent.to_string()
            }
        }
    }
}

fn last_component(path: &str) -> &str {
    let trimmed = path.trim_end_matches('/');
    if trimmed.is_empty() && !path.is_empty() {
        return "/";
    }
    trimmed.rsplit('/').next().unwrap_or(trimmed)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn folded(line: &str) -> String {
        let word = lexer::lex(line, 0)
            .tokens
            .into_iter()
            .find_map(|t| match t {
                Token::Word(w) => Some(w),
                _ => None,
            })
            .unwrap();
        fold(word, &mut Vars::default(), &mut Budget::for_len(0)).value
    }

    #[test]
    fn printing_substitutions_fold_and_others_stay() {
        assert_eq!(folded("$(echo rm -rf ~)"), "rm -rf ~");
        assert_eq!(folded("`echo rm`"), "rm");
        assert_eq!(folded("$(printf %s r m)"), "rm");
        assert_eq!(folded("$(printf 'r%s' m)x"), "rmx");
        assert_eq!(folded("\"$(echo $HOME)\""), "$HOME");
        assert_eq!(folded("$(dirname ~/x)"), "~");
        assert_eq!(folded("$(dirname /etc)"), "/");
        assert_eq!(folded("$(basename /bin/rm)"), "rm");
        assert_eq!(folded("$(echo -e '\\x72m')"), "rm");
        assert_eq!(folded("`pwd`/.."), "$PWD/..");
        for unknown in [
            "$(cat cmd.txt)",
            "$(echo $X)",
            "$(dirname \"$PWD\")",
            "$(echo a | tr a r)",
            "$(echo a > f)",
            "$(curl -s x)",
        ] {
            assert_eq!(folded(unknown), unknown);
        }
    }
}
