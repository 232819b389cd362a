//! The variables a line sets: by assignment (`x=rm`, `x+=m`, `a[1]=rm`, `declare -n`,
//! `declare -i`), through builtins (`read`, `mapfile`, `getopts`, `printf -v`, `set --`,
//! `shift`, `unset`); and what an `echo` in a pipeline feeds the next stage.
//!
//! Rule: a value the reader can compute (a here-string `read` reads, what `printf -v` prints)
//! is followed; anything else is [`UNKNOWN`], never left unset, and positional parameters whose
//! number the reader cannot know (`set -- $(cat f)`) are unknown, never fewer.

use super::super::lexer::Dialect;
use super::super::vars::UNKNOWN;
use super::super::{basename, words, Word};
use super::Splitter;

impl Splitter {
    /// Remembers what assignments set, so `x=rm; $x -rf /` is read as `rm -rf /`: `+=` appends,
    /// `a[i]=v` sets an element, `declare -n r=HOME` makes `$r` read `$HOME`, `declare -i n`
    /// makes `n` an integer; `declaring` is the `declare`-like command carrying them, if any.
    /// Values assigned while the command is read several ways are collected as well.
    pub(super) fn note_assignments(&mut self, assignments: &[Word], declaring: Option<&[Word]>) {
        let options = |letter: char| {
            declaring.is_some_and(|w| w[1..].iter().any(|w| w.value.starts_with('-') && w.value.contains(letter)))
        };
        let (nameref, integer) = (options('n'), options('i'));
        if integer {
            let names = declaring.unwrap_or_default()[1..].iter().filter(|w| !w.value.starts_with('-'));
            for w in names {
                let name = w.value.split(['=', '+', '[']).next().unwrap_or_default();
                self.vars.declare_integer(name);
            }
        }
        let collect = self.vars.reading().met() > 0;
        for a in assignments {
            let Some((name, value)) = a.value.split_once('=') else { continue };
            let (name, append) = match name.strip_suffix('+') {
                Some(name) => (name, true),
                None => (name, false),
            };
            // `a[0]=rm`: one element of an array.
            if let Some((array, index)) = name.strip_suffix(']').and_then(|n| n.split_once('[')) {
                self.vars.assign_element(array, index, value, append);
                continue;
            }
            let unknown = !a.nested.is_empty() || value.contains(UNKNOWN);
            if nameref {
                let target = self.vars.get(value).map_or_else(|| format!("${{{value}}}"), str::to_string);
                self.vars.assign(name, &target);
            } else if unknown {
                self.vars.set_unknown(name);
            } else if append {
                let before = self.vars.get(name).map_or_else(|| format!("${{{name}}}"), str::to_string);
                self.vars.append(name, value);
                if self.dialect == Dialect::Posix {
                    // dash has no `+=`: it runs `name+=value` as a command, and name keeps its
                    // value; bash as `sh` appends. Both.
                    let after = self.vars.get(name).unwrap_or_default().to_string();
                    self.vars.remove(name);
                    self.loops.insert(name.to_string(), vec![before, after]);
                    continue;
                }
            } else {
                self.vars.assign(name, value);
            }
            self.note_set(name);
            if let Some(value) = self.vars.get(name).filter(|_| collect) {
                self.collected.push((name.to_string(), value.to_string()));
            }
        }
    }

    /// What command `index` prints, when it is an `echo`, `printf` or `seq` (of known words only, when
    /// `known_only`); what it makes is charged to the budget.
    pub(super) fn printed_by(&mut self, index: usize, known_only: bool) -> Option<String> {
        let cmd = self.commands.get(index)?;
        let program = cmd.program.as_deref().filter(|p| matches!(*p, "echo" | "printf" | "seq"))?;
        if known_only && cmd.args().iter().any(|w| w.expands) {
            return None;
        }
        let args: Vec<&str> = cmd.args().iter().map(|w| w.value.as_str()).collect();
        let text = words::printed(program, &args, self.budget.left())?;
        self.budget.take(text.len()).then_some(text)
    }

    /// Variables a builtin sets: to what it reads from a here-string the reader knows (`read -r
    /// d <<< ~`), to what it prints (`printf -v d %s ~`), or else to what the reader cannot know
    /// (`read d`, `mapfile`, `getopts`); `unset` forgets them.
    pub(super) fn note_variables_set(&mut self, words: &[Word], stdin: Option<&str>) {
        let Some((first, args)) = words.split_first() else { return };
        let values = |with_value: &[&str]| {
            let mut names = Vec::new();
            let mut i = 0;
            while let Some(w) = args.get(i) {
                let v = w.value.as_str();
                if with_value.contains(&v) {
                    if v == "-a" {
                        names.extend(args.get(i + 1).map(|w| w.value.clone()));
                    }
                    i += 2;
                    continue;
                }
                if !v.starts_with('-') {
                    names.push(v.to_string());
                }
                i += 1;
            }
            names
        };
        let unknown = match basename(&first.value) {
            "read" => {
                let names = values(&["-a", "-d", "-n", "-N", "-p", "-t", "-u", "-i"]);
                let array = args.iter().any(|w| w.value.starts_with('-') && w.value.contains('a'));
                let line = stdin.and_then(|text| text.lines().next());
                match (line, array) {
                    (Some(line), true) => {
                        for name in &names {
                            self.vars.assign(name, &format!("({line})"));
                            self.note_set(name);
                        }
                    }
                    (Some(line), false) => {
                        let mut fields = line.split_whitespace();
                        for (k, name) in names.iter().enumerate() {
                            let value = if k + 1 == names.len() {
                                fields.by_ref().collect::<Vec<_>>().join(" ")
                            } else {
                                fields.next().unwrap_or_default().to_string()
                            };
                            self.vars.assign(name, &value);
                            self.note_set(name);
                        }
                    }
                    (None, _) => {
                        for name in &names {
                            self.vars.set_unknown(name);
                            self.note_set(name);
                        }
                    }
                }
                return;
            }
            "mapfile" | "readarray" => {
                values(&["-d", "-n", "-O", "-s", "-u", "-C", "-c"]).into_iter().rev().take(1).collect()
            }
            "getopts" => args.get(1).map(|w| vec![w.value.clone()]).unwrap_or_default(),
            "printf" if args.first().is_some_and(|w| w.value == "-v") => {
                let Some(name) = args.get(1).map(|w| w.value.clone()) else { return };
                let rest: Vec<&str> = args[2..].iter().map(|w| w.value.as_str()).collect();
                let known = !args[2..].iter().any(|w| w.expands);
                match known.then(|| words::printed("printf", &rest, self.budget.left())).flatten() {
                    Some(text) if self.budget.take(text.len()) => self.vars.assign(&name, &text),
                    _ => self.vars.set_unknown(&name),
                }
                self.note_set(&name);
                return;
            }
            // `set -- a b` (or `set a b`): the positional parameters. An unquoted unknown may be
            // any number of them.
            "set" => {
                let from = match args.iter().position(|w| w.value == "--") {
                    Some(p) => p + 1,
                    None if args.first().is_some_and(|w| !w.value.starts_with(['-', '+'])) => 0,
                    None => return,
                };
                let given = &args[from..];
                let unknown = |w: &Word| w.expands && w.value.contains('$');
                let values = match given.iter().any(|w| unknown(w) && !w.quoted) {
                    true => None,
                    false => Some(given.iter().map(|w| if unknown(w) { UNKNOWN.to_string() } else { w.value.clone() })),
                };
                self.vars.set_positionals(values.map(Iterator::collect));
                return;
            }
            "shift" => {
                self.vars.shift(args.first().map(|w| w.value.as_str()));
                return;
            }
            "unset" => {
                let functions = args.iter().any(|w| w.value == "-f");
                for w in args.iter().filter(|w| !w.value.starts_with('-') && !functions) {
                    self.vars.unset(&w.value);
                    self.loops.remove(&w.value);
                }
                return;
            }
            _ => return,
        };
        for name in unknown {
            self.vars.set_unknown(&name);
            self.note_set(&name);
        }
    }
}
