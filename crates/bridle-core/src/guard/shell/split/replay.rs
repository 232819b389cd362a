//! What bash runs again: a loop's body once per value of its variable, a function's body at
//! each call with its arguments bound — read by the splitter as bash would run them.
//!
//! Rule: every replay counts against one count per line ([`MAX_REPLAYS`]) and what it copies
//! against the line's [`Budget`](super::Budget), and a call nests at most [`MAX_DEPTH`] deep, so
//! a recursive function ends and nested loops stay bounded; what is left out is said
//! ([`Signal::TooDeep`], [`Signal::TooLarge`]), never silently allowed.

use std::collections::HashMap;

use super::super::budget::command_weight;
use super::super::{Origin, Redirect, Signal, Word, MAX_DEPTH};
use super::{Position, Splitter, MAX_REPLAYS};

impl Splitter {
    /// Emits the command once per value of each loop variable it mentions (bash runs the body
    /// once per value); returns the first command's index. When a bound stops it before any
    /// value, the command is still emitted once, as written (its variable unknown), so what it
    /// does in every case is judged.
    pub(super) fn emit_each_value(
        &mut self,
        loops: &[String],
        words: &[Word],
        redirects: &[Redirect],
        at: &Position<'_>,
        background: bool,
        function: Option<&str>,
    ) -> Option<usize> {
        let Some((name, rest)) = loops.split_first() else {
            return self.emit(words.to_vec(), redirects.to_vec(), at, background, function.map(str::to_string));
        };
        let values = self.loops.get(name).cloned().unwrap_or_default();
        let before = self.vars.remove(name);
        self.assigned_in_replay.push((name.clone(), Vec::new()));
        let mut first = None;
        let mut stopped = false;
        let weight = command_weight(words, redirects);
        for value in values {
            if self.replays >= MAX_REPLAYS {
                self.signal(Signal::TooDeep);
                stopped = true;
                break;
            }
            if !self.budget.take(weight + value.len()) {
                stopped = true;
                break;
            }
            self.replays += 1;
            self.vars.insert(name.clone(), value);
            let index = self.emit_each_value(rest, words, redirects, at, background, function);
            first = first.or(index);
        }
        if stopped && first.is_none() {
            first = self.emit(words.to_vec(), redirects.to_vec(), at, background, function.map(str::to_string));
        }
        self.vars.remove(name);
        let assigned = self.assigned_in_replay.pop().map(|(_, values)| values).unwrap_or_default();
        if !assigned.is_empty() {
            // The command gave the loop's variable new values: they are its values from here on.
            let mut values: Vec<String> = Vec::with_capacity(assigned.len());
            for value in assigned {
                if !values.contains(&value) {
                    values.push(value);
                }
            }
            self.loops.insert(name.clone(), values);
        } else if let Some(before) = before {
            self.vars.insert(name.clone(), before);
        }
        first
    }

    /// `name` was just set to its value in `vars`: while its loop's values are replayed, that is
    /// one of its new values; otherwise the values a loop or two readings gave it are over
    /// (`for d in a; do :; done; d=~; rm -rf $d` deletes `~`).
    pub(super) fn note_set(&mut self, name: &str) {
        match self.assigned_in_replay.iter_mut().rev().find(|(n, _)| n == name) {
            Some((_, values)) => values.push(self.vars.get(name).unwrap_or_default().to_string()),
            None => {
                self.loops.remove(name);
            }
        }
    }

    /// A function's body as defined (with `$1`, `$@` unknown) is only judged when no call was
    /// seen: every call reads it again with its arguments, and nothing else can call it unless
    /// a program name is only known at run time (`$cmd`, which keeps the definition).
    /// A call a bound kept from being read in full keeps the definition too.
    pub(super) fn drop_called_definitions(&mut self) {
        let cut_short = self.budget.exhausted() || self.signals.contains(&Signal::TooDeep);
        if self.called.is_empty() || cut_short || self.commands.iter().any(|c| c.dynamic) {
            return;
        }
        let mut drop = vec![false; self.commands.len()];
        for (name, body) in &self.bodies {
            if self.called.contains(name) {
                for &i in body {
                    drop[i] = true;
                }
            }
        }
        let mut new_index = vec![None; self.commands.len()];
        let mut kept = Vec::with_capacity(self.commands.len());
        for (i, cmd) in std::mem::take(&mut self.commands).into_iter().enumerate() {
            if !drop[i] {
                new_index[i] = Some(kept.len());
                kept.push(cmd);
            }
        }
        self.commands = kept;
        for pipeline in &mut self.pipelines {
            *pipeline = pipeline.iter().filter_map(|&i| new_index[i]).collect();
        }
        // A pipeline's id is its position: keep empty ones so the ids stay right.
        self.bodies.clear();
    }

    /// `f a b` where `f` was defined in the line: its body's commands again, with `$1`, `$@`
    /// ... set to the arguments (and `shift` in the body shifting them), so `f(){ rm -rf "$@";
    /// }; f /` is read as `rm -rf /`.
    pub(super) fn call_function(&mut self, name: &str, args: &[Word], depth: usize, inherited: &[String]) {
        let Some(body) = self.bodies.get(name).cloned() else { return };
        if depth > MAX_DEPTH {
            self.signal(Signal::TooDeep);
            return;
        }
        // An unquoted unknown argument may be any number of them.
        let split = args.iter().any(|w| w.expands && !w.quoted && w.value.contains('$'));
        let params = (!split).then(|| args.iter().map(|w| w.value.clone()).collect());
        let caller = self.vars.save_positionals();
        self.vars.set_positionals(params);
        self.replaying += 1;
        // The body's pipelines again, with the new commands (a fork bomb is a piped call).
        let mut pipelines: Vec<(usize, Vec<usize>)> = Vec::new();
        for index in body {
            if self.replays >= MAX_REPLAYS {
                self.signal(Signal::TooDeep);
                break;
            }
            let cmd = &self.commands[index];
            if !self.budget.take(command_weight(&cmd.words, &cmd.redirects) + cmd.raw.len()) {
                break;
            }
            self.replays += 1;
            let words = cmd.words.clone();
            let redirects = cmd.redirects.clone();
            let (background, pipeline) = (cmd.background, cmd.pipeline);
            let mut wrappers = inherited.to_vec();
            wrappers.extend(cmd.wrappers.iter().cloned());
            let at =
                Position { chars: &[], end: 0, depth, origin: Origin::ShellString, inherited: &wrappers, stdin: None };
            if let Some(new) = self.emit(words, redirects, &at, background, Some(name.to_string())) {
                match pipelines.last_mut() {
                    Some((id, stages)) if *id == pipeline => stages.push(new),
                    _ => pipelines.push((pipeline, vec![new])),
                }
            }
        }
        for (_, stages) in pipelines {
            let id = self.pipelines.len();
            for (stage, &index) in stages.iter().enumerate() {
                self.commands[index].pipeline = id;
                self.commands[index].stage = stage;
            }
            self.pipelines.push(stages);
        }
        self.replaying -= 1;
        self.vars.restore_positionals(caller);
    }
}

/// The loop variables a command's words or redirections read (`$name` or `${name}`), in the
/// order they are first read. One pass over the words, whatever the number of loops.
pub(super) fn loop_variables(
    words: &[Word],
    redirects: &[Redirect],
    loops: &HashMap<String, Vec<String>>,
) -> Vec<String> {
    let mut read: Vec<String> = Vec::new();
    let is_name = |c: char| c.is_ascii_alphanumeric() || c == '_';
    for w in words.iter().chain(redirects.iter().map(|r| &r.target)).filter(|w| w.expands) {
        let mut rest = w.value.as_str();
        while let Some(at) = rest.find('$') {
            rest = &rest[at + 1..];
            // `$d`, `${d}`, `${d%/*}`: each reads d.
            let after = rest.strip_prefix('{').unwrap_or(rest);
            let name = &after[..after.find(|c: char| !is_name(c)).unwrap_or(after.len())];
            if loops.contains_key(name) && !read.iter().any(|r| r == name) {
                read.push(name.to_string());
            }
        }
    }
    read
}
