//! The variables a line sets for itself, and what reading one gives: `$x`, `${x}`,
//! `${x:-default}`, `${x%/*}`, `${arr[@]}`, the positional parameters `$1`, `$@`, `$#`.
//!
//! Rule: a value the line gave (`d=~`, `arr=(rm -rf ~)`, `x+=m`) is followed; a value the reader
//! cannot know — read from input (`read`, `mapfile`), printed into a variable (`printf -v`),
//! named by another (`declare -n`), set by bash as the line runs (`$_`, `$REPLY`), or an
//! expansion this module does not model — becomes [`UNKNOWN`], which every guardian treats as
//! unknown: never dropped, never read as empty. A variable the line never set comes from the
//! user's environment and stays as written (`$HOME` and `$PWD` are located later; another may
//! hold anything or nothing). Where an expansion has two readings (`${X:-~}` of a variable that
//! may be empty), the command is read once each way ([`Reading`]), so neither is missed.

mod expansion;

use std::collections::{HashMap, HashSet};

use super::{lexer, Word};

/// The value of something the reader cannot know. It reads as a command substitution, so a
/// program word holding it is dynamic and a path holding it cannot be located.
pub(crate) const UNKNOWN: &str = "$(?)";

/// Variables bash sets itself while the line runs: what they hold depends on what ran.
/// (`$OLDPWD` is left as written: the guardians follow the line's `cd`s to it.)
const SET_BY_BASH: &[&str] = &["_", "REPLY", "OPTARG", "MAPFILE", "COPROC", "BASH_REMATCH"];

/// Set and not empty in the environment every command runs in: `${HOME:-/tmp}` is `$HOME`.
const ALWAYS_SET: &[&str] = &["HOME", "PWD", "PATH"];

/// Expansions with two readings followed both ways in one command; past them each is
/// [`UNKNOWN`] (2^3 readings of a command at most).
pub(crate) const MAX_READINGS: u32 = 3;

/// Which reading a command takes of each expansion with two: bit `k` set takes the second
/// reading of the `k`-th such expansion met.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Reading {
    mask: u32,
    met: u32,
}

impl Reading {
    /// The reading given by `mask`.
    pub(crate) fn of(mask: u32) -> Self {
        Self { mask, met: 0 }
    }

    /// How many expansions with two readings were met (at most [`MAX_READINGS`] count).
    pub(crate) fn met(&self) -> u32 {
        self.met.min(MAX_READINGS)
    }
}

/// The positional parameters and `$0` as they were (`None`: unknown).
pub(crate) struct Positionals {
    args: Option<Vec<String>>,
    zero: Option<String>,
}

/// What the line did to a variable.
enum State {
    /// Set by the line, to this value (which may hold unknown parts).
    Set(String),
    /// Set, to something the reader cannot know.
    Unknown,
    /// Unset by the line (`unset X`).
    Unset,
    /// Never touched: from the environment, set or not.
    Environment,
}

/// The variables a line set, as scalars and arrays.
#[derive(Debug, Default, Clone)]
pub(crate) struct Vars {
    scalars: HashMap<String, String>,
    arrays: HashMap<String, Vec<String>>,
    /// Names the line unset: `${X-w}` is `w`, whatever the environment held.
    unset: HashSet<String>,
    /// Names declared integer (`declare -i n`): what is assigned to them is arithmetic.
    integers: HashSet<String>,
    /// The reading the command being expanded takes.
    reading: Reading,
    /// `${X:=w}` read the way that assigns `w` where X may have held something else: the name
    /// and the value each reading leaves.
    defaults: Vec<(String, [String; 2])>,
    /// Prompt strings expanded with `${x@P}`: bash runs the substitutions they hold.
    prompts: Vec<String>,
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
        self.unset.remove(name);
        if let Some(items) = array_items(value) {
            self.scalars.remove(name);
            self.arrays.insert(name.to_string(), items);
            return;
        }
        self.arrays.remove(name);
        self.scalars.insert(name.to_string(), value.to_string());
    }

    /// `name+=value`: appended to a scalar (`x+=m`), to an array's elements (`a+=(rm)`), or to an
    /// array's first element (`a+=m`); added, for an integer (`declare -i n; n+=1`).
    pub(crate) fn append(&mut self, name: &str, value: &str) {
        if self.integers.contains(name) {
            let old = self.parameter(name).unwrap_or_else(|| format!("${{{name}}}"));
            self.assign(name, &format!("$(({old}+({value})))"));
            return;
        }
        let items = array_items(value);
        match (self.arrays.get_mut(name), items) {
            (Some(array), Some(items)) => array.extend(items),
            (Some(array), None) => match array.first_mut() {
                Some(first) => first.push_str(value),
                None => array.push(value.to_string()),
            },
            (None, items) => {
                let old = match self.state(name) {
                    State::Set(v) => v,
                    State::Unknown => UNKNOWN.to_string(),
                    State::Unset => String::new(),
                    State::Environment => format!("${{{name}}}"),
                };
                match items {
                    Some(items) => {
                        let mut all = vec![old];
                        all.extend(items);
                        self.set_array(name, all);
                    }
                    None => self.assign(name, &format!("{old}{value}")),
                }
            }
        }
    }

    /// Sets an array from values already read.
    pub(crate) fn set_array(&mut self, name: &str, values: Vec<String>) {
        self.unset.remove(name);
        self.scalars.remove(name);
        self.arrays.insert(name.to_string(), values);
    }

    /// `name[index]=value` (or `+=`, with `append`): an element set by its index (an index the
    /// reader cannot read makes the whole array unknown).
    pub(crate) fn assign_element(&mut self, name: &str, index: &str, value: &str, append: bool) {
        let i = match index.trim().parse::<usize>() {
            Ok(i) if i <= 1024 => i,
            _ => return self.set_unknown(name),
        };
        let mut items = self.arrays.remove(name).unwrap_or_else(|| self.scalars.remove(name).into_iter().collect());
        if items.len() <= i {
            items.resize(i + 1, String::new());
        }
        if append {
            items[i].push_str(value);
        } else {
            items[i] = value.to_string();
        }
        self.set_array(name, items);
    }

    /// `name` now holds something the reader cannot know.
    pub(crate) fn set_unknown(&mut self, name: &str) {
        self.assign(name, UNKNOWN);
    }

    /// Sets a scalar (a loop's value).
    pub(crate) fn insert(&mut self, name: String, value: String) {
        self.unset.remove(&name);
        self.arrays.remove(&name);
        self.scalars.insert(name, value);
    }

    /// Forgets a variable, as if the line had never set it, returning its scalar value.
    pub(crate) fn remove(&mut self, name: &str) -> Option<String> {
        self.arrays.remove(name);
        self.scalars.remove(name)
    }

    /// `unset name`: known to be unset from here on.
    pub(crate) fn unset(&mut self, name: &str) {
        self.remove(name);
        self.unset.insert(name.to_string());
    }

    /// `declare -i name`.
    pub(crate) fn declare_integer(&mut self, name: &str) {
        self.integers.insert(name.to_string());
    }

    /// Whether what is assigned to `name` is evaluated as arithmetic.
    pub(crate) fn is_integer(&self, name: &str) -> bool {
        self.integers.contains(name)
    }

    /// Every value `name` holds (an array's elements), [`UNKNOWN`] for what the reader cannot
    /// know; `None` for a variable from the environment.
    pub(crate) fn values(&self, name: &str) -> Option<Vec<String>> {
        match self.state(name) {
            State::Set(_) if self.arrays.contains_key(name) => self.arrays.get(name).cloned(),
            State::Set(v) => Some(vec![v]),
            State::Unknown => Some(vec![UNKNOWN.to_string()]),
            State::Unset => Some(Vec::new()),
            State::Environment => None,
        }
    }

    /// The positional parameters and `$0`, to be put back after a call or a `sh -c` string.
    pub(crate) fn save_positionals(&self) -> Positionals {
        Positionals { args: self.arrays.get("@").cloned(), zero: self.scalars.get("0").cloned() }
    }

    /// Puts back what [`Vars::save_positionals`] kept.
    pub(crate) fn restore_positionals(&mut self, saved: Positionals) {
        self.set_positionals(saved.args);
        self.set_zero(saved.zero);
    }

    /// Sets `$0`, or makes it unknown.
    pub(crate) fn set_zero(&mut self, zero: Option<String>) {
        match zero {
            Some(zero) => self.scalars.insert("0".to_string(), zero),
            None => self.scalars.remove("0"),
        };
    }

    /// Sets the positional parameters (`set --`, a call, `bash -c '...' name args`), or makes
    /// them unknown.
    pub(crate) fn set_positionals(&mut self, values: Option<Vec<String>>) {
        match values {
            Some(values) => self.set_array("@", values),
            None => {
                self.arrays.remove("@");
            }
        }
    }

    /// `shift n`: the first `n` positional parameters dropped (none when there are fewer, as bash
    /// refuses); an amount the reader cannot read makes them unknown.
    pub(crate) fn shift(&mut self, amount: Option<&str>) {
        let n = match amount.map(str::parse::<usize>) {
            None => 1,
            Some(Ok(n)) => n,
            Some(Err(_)) => return self.set_positionals(None),
        };
        if let Some(args) = self.arrays.get_mut("@") {
            if n <= args.len() {
                args.drain(..n);
            }
        }
    }

    /// Starts reading a command the way `reading` says; returns the reading it replaces.
    pub(crate) fn begin_reading(&mut self, reading: Reading) -> Reading {
        std::mem::replace(&mut self.reading, reading)
    }

    /// The reading in force: how many expansions with two readings it met so far.
    pub(crate) fn reading(&self) -> Reading {
        self.reading
    }

    /// `${X:=w}` met with two readings since the last call: each name with both values.
    pub(crate) fn take_defaults(&mut self) -> Vec<(String, [String; 2])> {
        std::mem::take(&mut self.defaults)
    }

    /// Prompt strings expanded since the last call.
    pub(crate) fn take_prompts(&mut self) -> Vec<String> {
        std::mem::take(&mut self.prompts)
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

    /// What the line did to `name`.
    fn state(&self, name: &str) -> State {
        match self.get(name) {
            Some(v) if v == UNKNOWN => State::Unknown,
            Some(v) => State::Set(v.to_string()),
            None if SET_BY_BASH.contains(&name) => State::Unknown,
            None if self.unset.contains(name) => State::Unset,
            None => State::Environment,
        }
    }

    /// One of two readings of an expansion, as the reading in force says; the same text needs
    /// no choice.
    fn either(&mut self, first: String, second: String) -> String {
        if first == second {
            return first;
        }
        let k = self.reading.met;
        self.reading.met += 1;
        if k >= MAX_READINGS {
            return UNKNOWN.to_string();
        }
        if self.reading.mask >> k & 1 == 1 {
            second
        } else {
            first
        }
    }
}

/// The words of an array's value `(a b c)`; `None` for a scalar's.
fn array_items(value: &str) -> Option<Vec<String>> {
    let inner = value.strip_prefix('(')?.strip_suffix(')')?;
    let items = lexer::lex(inner, super::MAX_DEPTH)
        .tokens
        .into_iter()
        .filter_map(|t| match t {
            lexer::Token::Word(w) if w.expands => Some(UNKNOWN.to_string()),
            lexer::Token::Word(w) => Some(w.value),
            _ => None,
        })
        .collect();
    Some(items)
}

/// A value that may turn out empty: nothing but expansions (`$X`, `${X}`, an unknown).
fn maybe_empty(value: &str) -> bool {
    let mut rest = value;
    while !rest.is_empty() {
        let Some(after) = rest.strip_prefix('$') else { return false };
        let len = if let Some(braced) = after.strip_prefix('{') {
            match braced.find('}') {
                Some(end) => end + 2,
                None => return false,
            }
        } else if after.starts_with("(?)") {
            3
        } else {
            let len = after.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').count();
            if len == 0 {
                return false;
            }
            len
        };
        rest = &after[len..];
    }
    true
}

#[cfg(test)]
mod tests;
