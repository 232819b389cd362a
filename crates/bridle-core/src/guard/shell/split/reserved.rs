//! Reserved words (`if`, `then`, `do`, `{`, `}`, `for`, `case`, `function`, `coproc` ...): what is
//! stripped from the front of a command so the command after them is seen, and the groups and
//! function bodies they open and close.
//!
//! Rule: a reserved word counts only unquoted and unexpanded at the front; a `for`, `select` or
//! `case` header runs nothing itself and is dropped whole, its loop's values kept.

use super::super::Word;
use super::Walk;

/// A `{` or `(` opens a group: the body of a function whose header came just before.
pub(super) fn open_group(walk: &mut Walk<'_>) {
    walk.group_depth += 1;
    if let Some(name) = walk.pending_function.take() {
        walk.function_stack.push((name, walk.group_depth));
    }
}

/// A `}` or `)` closes the innermost group, and the function body it ends.
pub(super) fn close_group(walk: &mut Walk<'_>) {
    if walk.function_stack.last().is_some_and(|(_, at)| *at == walk.group_depth) {
        walk.function_stack.pop();
    }
    walk.group_depth = walk.group_depth.saturating_sub(1);
}

/// What [`strip_reserved_words`] found besides the command.
#[derive(Default)]
pub(super) struct Stripped {
    /// The name a `function name` header defines.
    pub defined: Option<String>,
    /// A `for NAME in WORDS` or `select NAME in WORDS` header: the name and its words.
    pub loop_values: Option<(String, Vec<Word>)>,
}

/// Removes reserved words from the front (`if`, `then`, `do`, `{`, `}` ...); a `for`, `select`
/// or `case` header runs nothing itself and is dropped whole (a loop's values are kept).
pub(super) fn strip_reserved_words(words: &mut Vec<Word>, walk: &mut Walk<'_>) -> Stripped {
    // Counted first and drained once: removing from the front one word at a time made
    // 100,000 nested `{` quadratic.
    let mut defined = None;
    let mut at = 0;
    while let Some(first) = words.get(at) {
        if first.quoted || first.expands {
            break;
        }
        match first.value.as_str() {
            "{" => open_group(walk),
            "}" => close_group(walk),
            "!" | "if" | "then" | "else" | "elif" | "do" | "while" | "until" | "fi" | "done" | "esac" => {}
            "for" | "select" => {
                let loop_values = match words.get(at + 1..at + 3) {
                    Some([name, kw]) if kw.value == "in" && !name.expands => {
                        Some((name.value.clone(), words[at + 3..].to_vec()))
                    }
                    _ => None,
                };
                words.clear();
                return Stripped { defined, loop_values };
            }
            "case" => {
                words.clear();
                return Stripped { defined, loop_values: None };
            }
            // `coproc cmd` and `coproc NAME { cmds; }` run the command in the background.
            "coproc" => {
                if words.get(at + 2).is_some_and(|w| w.value == "{" && !w.quoted) {
                    at += 1;
                }
            }
            "function" if words.len() >= at + 2 => {
                let name = words[at + 1].value.clone();
                walk.pending_function = Some(name.clone());
                defined = Some(name);
                at += 2;
                continue;
            }
            _ => break,
        }
        at += 1;
    }
    words.drain(..at);
    Stripped { defined, loop_values: None }
}
