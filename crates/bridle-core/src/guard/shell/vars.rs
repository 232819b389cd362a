//! The variables a line sets for itself, and what reading one gives: `$x`, `${x}`,
//! `${x:-default}`, `${x%/*}`, `${arr[@]}`.
//!
//! Rule: a value the line gave (`d=~`, `arr=(rm -rf ~)`) is followed; a value the reader cannot
//! know — read from input (`read`, `mapfile`), printed into a variable (`printf -v`), named by
//! another (`declare -n`), set by bash as the line runs (`$_`, `$REPLY`), or an
//! expansion this module does not model (`${x/a/b}`, `${x^^}`, `${!x}`) — becomes [`UNKNOWN`],
//! which every guardian treats as unknown: never dropped, never read as empty. A variable the
//! line never set comes from the user's environment and stays as written (`$HOME` and `$PWD`
//! are located later; another is judged as possibly empty).

use std::collections::HashMap;

use super::{is_name, lexer, Word};

/// The value of something the reader cannot know. It reads as a command substitution, so a
/// program word holding it is dynamic and a path holding it cannot be located.
pub(crate) const UNKNOWN: &str = "$(?)";

/// Variables bash sets itself while the line runs: what they hold depends on what ran.
/// (`$OLDPWD` is left as written: the guardians follow the line's `cd`s to it.)
const SET_BY_BASH: &[&str] = &["_", "REPLY", "OPTARG", "MAPFILE", "COPROC", "BASH_REMATCH"];

/// The variables a line set, as scalars and arrays.
#[derive(Debug, Default, Clone)]
pub(crate) struct Vars {
    scalars: HashMap<String, String>,
    arrays: HashMap<String, Vec<String>>,
}

impl Vars {
    pub(crate) fn contains_key(&self, name: &str) -> bool {
        self.scalars.contains_key(name) || self.arrays.contains_key(name)
    }

    /// A scalar's value, or an array's first element (`$arr` is `${arr[0]}`).
    pub(crate) fn get(&self, name: &str) -> Option<&str> {
        match self.scalars.get(name) {
            Some(v) => Some(v),
            None => self.arrays.get(name).map(|a| a.first().map_or("", String::as_str)),
        }
    }

    /// Sets `name` from an assignment's value: `(a b c)` is an array of the words inside.
    pub(crate) fn assign(&mut self, name: &str, value: &str) {
        if let Some(inner) = value.strip_prefix('(').and_then(|v| v.strip_suffix(')')) {
            let items = lexer::lex(inner, super::MAX_DEPTH)
                .tokens
                .into_iter()
                .filter_map(|t| match t {
                    lexer::Token::Word(w) if w.expands => Some(UNKNOWN.to_string()),
                    lexer::Token::Word(w) => Some(w.value),
                    _ => None,
                })
                .collect();
            self.scalars.remove(name);
            self.arrays.insert(name.to_string(), items);
            return;
        }
        self.arrays.remove(name);
        self.scalars.insert(name.to_string(), value.to_string());
    }

    /// Sets an array from values already read (`set -- a b` sets `@`).
    pub(crate) fn set_array(&mut self, name: &str, values: Vec<String>) {
        self.scalars.remove(name);
        self.arrays.insert(name.to_string(), values);
    }

    /// `name[index]=value`: an element set by its index (an index the reader cannot read makes
    /// the whole array unknown).
    pub(crate) fn assign_element(&mut self, name: &str, index: &str, value: &str) {
        let Ok(i) = index.parse::<usize>() else {
            self.set_unknown(name);
            return;
        };
        if i > 1024 {
            self.set_unknown(name);
            return;
        }
        let mut items = self.arrays.remove(name).unwrap_or_else(|| self.scalars.remove(name).into_iter().collect());
        if items.len() <= i {
            items.resize(i + 1, String::new());
        }
        items[i] = value.to_string();
        self.arrays.insert(name.to_string(), items);
    }

    /// `name` now holds something the reader cannot know.
    pub(crate) fn set_unknown(&mut self, name: &str) {
        self.assign(name, UNKNOWN);
    }

    /// Sets a scalar (a loop's value).
    pub(crate) fn insert(&mut self, name: String, value: String) {
        self.arrays.remove(&name);
        self.scalars.insert(name, value);
    }

    /// Forgets a variable, returning its scalar value.
    pub(crate) fn remove(&mut self, name: &str) -> Option<String> {
        self.arrays.remove(name);
        self.scalars.remove(name)
    }

    /// The elements `"${name[@]}"` or `${name[*]}` expands to, when the whole word is one.
    pub(crate) fn splice(&self, word: &Word) -> Option<Vec<Word>> {
        let (name, star) = match word.value.as_str() {
            "$@" | "${@}" => ("@", false),
            "$*" | "${*}" => ("@", true),
            value => {
                let inner = value.strip_prefix("${")?.strip_suffix('}')?;
                let name = inner.strip_suffix("[@]").or_else(|| inner.strip_suffix("[*]"))?;
                (name, inner.ends_with("[*]"))
            }
        };
        let items = self.arrays.get(name)?;
        let quoted_star = word.quoted && star;
        if quoted_star {
            let joined = items.join(" ");
            return Some(vec![Word { raw: word.raw.clone(), value: joined, expands: false, ..word.clone() }]);
        }
        Some(
            items
                .iter()
                .map(|v| Word { value: v.clone(), expands: v.contains('$'), quoted: word.quoted, ..word.clone() })
                .collect(),
        )
    }

    /// What `${inner}` reads to: the value, or [`UNKNOWN`]; `None` when it is a variable from the
    /// environment, to be left as written.
    pub(crate) fn parameter(&self, inner: &str) -> Option<String> {
        let name_len = inner.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').count();
        let (name, op) = inner.split_at(name_len);
        if name.is_empty() {
            // `${!x}` where x names a variable: that variable; `${#x}`, `${@:2}`: not modelled.
            let target = op.strip_prefix('!').and_then(|n| self.scalars.get(n)).filter(|t| is_name(t));
            return Some(match target {
                Some(t) => self.parameter(t).unwrap_or_else(|| format!("${{{t}}}")),
                None => UNKNOWN.to_string(),
            });
        }
        // `$1` after `set -- a b`.
        if let (Ok(n), Some(args)) = (name.parse::<usize>(), self.arrays.get("@")) {
            return Some(n.checked_sub(1).and_then(|i| args.get(i)).cloned().unwrap_or_default());
        }
        let known = self.get(name).map(str::to_string);
        let from_env = known.is_none() && !SET_BY_BASH.contains(&name);
        if op.is_empty() {
            return match known {
                Some(v) => Some(v),
                None if from_env => None,
                None => Some(UNKNOWN.to_string()),
            };
        }
        if let Some(index) = op.strip_prefix('[').and_then(|o| o.strip_suffix(']')) {
            let items = self.arrays.get(name);
            return Some(match (items, index.parse::<usize>()) {
                (Some(items), Ok(i)) => items.get(i).cloned().unwrap_or_default(),
                (Some(items), Err(_)) if matches!(index, "@" | "*") => items.join(" "),
                (None, Ok(0)) if known.is_some() => known.unwrap_or_default(),
                _ => UNKNOWN.to_string(),
            });
        }
        // `${x:-w}`, `${x-w}`, `${x:=w}`, `${x=w}`: x's value, or w where x is unset or empty.
        // A variable from the environment may be either: the word the line gave is what an
        // attacker chose, so it is what is judged.
        for default in [":-", "-", ":=", "="] {
            if let Some(word) = op.strip_prefix(default) {
                return Some(match known {
                    Some(v) if !v.is_empty() => v,
                    _ => unquote(word),
                });
            }
        }
        // `${x:+w}`, `${x+w}`: w where x is set.
        for alternative in [":+", "+"] {
            if let Some(word) = op.strip_prefix(alternative) {
                return Some(unquote(word));
            }
        }
        // `${x:?message}`: x, or the line stops.
        if op.starts_with(":?") || op.starts_with('?') {
            return known.or(if from_env { None } else { Some(UNKNOWN.to_string()) });
        }
        // `${HOME%/*}`: the folder above; other pattern removals on a known value.
        for (strip, suffix) in [("%%", true), ("%", true), ("##", false), ("#", false)] {
            if let Some(pattern) = op.strip_prefix(strip) {
                return Some(match (known, pattern) {
                    (Some(v), p) => remove_pattern(&v, p, suffix, strip.len() == 2).unwrap_or_else(|| UNKNOWN.into()),
                    (None, "/*") if from_env && suffix && strip == "%" => format!("${{{name}}}/.."),
                    _ => UNKNOWN.to_string(),
                });
            }
        }
        Some(UNKNOWN.to_string())
    }
}

/// A default word's quotes removed (`${x:-"~/a b"}`).
fn unquote(word: &str) -> String {
    lexer::lex(word, super::MAX_DEPTH)
        .tokens
        .into_iter()
        .filter_map(|t| match t {
            lexer::Token::Word(w) => Some(w.value),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// `value` with a literal `pattern` (or `/*`, `*/`) removed from its end or start; `None` for a
/// pattern this reader does not match.
fn remove_pattern(value: &str, pattern: &str, suffix: bool, longest: bool) -> Option<String> {
    if !pattern.contains(['*', '?', '[', '\\', '$']) {
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn parameters_read_as_bash_reads_them() {
        let mut vars = Vars::default();
        vars.assign("d", "/a/b/c");
        vars.assign("arr", "(rm -rf ~)");
        let p = |inner: &str| vars.parameter(inner);
        assert_eq!(p("d").as_deref(), Some("/a/b/c"));
        assert_eq!(p("d%/*").as_deref(), Some("/a/b"));
        assert_eq!(p("d##*/").as_deref(), Some("c"));
        assert_eq!(p("d#/a").as_deref(), Some("/b/c"));
        assert_eq!(p("X:-~").as_deref(), Some("~"));
        assert_eq!(p("X:=/").as_deref(), Some("/"));
        assert_eq!(p("d:-/x").as_deref(), Some("/a/b/c"));
        assert_eq!(p("HOME%/*").as_deref(), Some("${HOME}/.."));
        assert_eq!(p("HOME").as_deref(), None, "from the environment: left as written");
        assert_eq!(p("REPLY").as_deref(), Some(UNKNOWN));
        assert_eq!(p("d/a/b").as_deref(), Some(UNKNOWN));
        assert_eq!(p("!d").as_deref(), Some(UNKNOWN));
        assert_eq!(p("arr[0]").as_deref(), Some("rm"));
        assert_eq!(p("arr[2]").as_deref(), Some("~"));
        assert_eq!(p("arr[$i]").as_deref(), Some(UNKNOWN));
        assert_eq!(vars.get("arr"), Some("rm"));
        let spliced = vars.splice(&Word { quoted: true, ..Word::plain("${arr[@]}") }).unwrap();
        assert_eq!(spliced.iter().map(|w| w.value.as_str()).collect::<Vec<_>>(), ["rm", "-rf", "~"]);
        vars.set_unknown("r");
        assert_eq!(vars.parameter("r").as_deref(), Some(UNKNOWN));
    }
}
