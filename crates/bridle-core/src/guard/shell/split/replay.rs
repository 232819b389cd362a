//! What bash runs again: a loop's body once per value of its variable, a function's body at
//! each call with its arguments bound — read by the splitter as bash would run them.
//!
//! Rule: every replay counts against one budget per line ([`MAX_REPLAYS`]) and a call nests
//! at most [`MAX_DEPTH`] deep, so a recursive function ends and nested loops stay bounded; what
//! is left out is said ([`Signal::TooDeep`]), never silently allowed.

use super::super::{words, Origin, Redirect, Signal, Word, MAX_DEPTH};
use super::{Position, Splitter, MAX_REPLAYS};

impl Splitter {
    /// Emits the command once per value of each loop variable it mentions (bash runs the body
    /// once per value); returns the first command's index.
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
        let mut first = None;
        for value in values {
            if self.replays >= MAX_REPLAYS {
                self.signal(Signal::TooDeep);
                break;
            }
            self.replays += 1;
            self.vars.insert(name.clone(), value);
            let index = self.emit_each_value(rest, words, redirects, at, background, function);
            first = first.or(index);
        }
        self.vars.remove(name);
        if let Some(before) = before {
            self.vars.insert(name.clone(), before);
        }
        first
    }

    /// A function's body as defined (with `$1`, `$@` unknown) is only judged when no call was
    /// seen: every call reads it again with its arguments, and nothing else can call it unless
    /// a program name is only known at run time (`$cmd`, which keeps the definition).
    pub(super) fn drop_called_definitions(&mut self) {
        if self.called.is_empty() || self.commands.iter().any(|c| c.dynamic) {
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
    /// ... set to the arguments, so `f(){ rm -rf "$@"; }; f /` is read as `rm -rf /`.
    pub(super) fn call_function(&mut self, name: &str, args: &[Word], depth: usize, inherited: &[String]) {
        let Some(body) = self.bodies.get(name).cloned() else { return };
        if depth > MAX_DEPTH {
            self.signal(Signal::TooDeep);
            return;
        }
        let params: Vec<String> = args.iter().map(|w| w.value.clone()).collect();
        self.replaying += 1;
        // The body's pipelines again, with the new commands (a fork bomb is a piped call).
        let mut pipelines: Vec<(usize, Vec<usize>)> = Vec::new();
        for index in body {
            if self.replays >= MAX_REPLAYS {
                self.signal(Signal::TooDeep);
                break;
            }
            self.replays += 1;
            let cmd = &self.commands[index];
            let words = words::bind_parameters(&cmd.words, &params);
            let redirects = cmd.redirects.clone();
            let (background, pipeline) = (cmd.background, cmd.pipeline);
            let mut wrappers = inherited.to_vec();
            wrappers.extend(cmd.wrappers.iter().cloned());
            let at = Position { chars: &[], end: 0, depth, origin: Origin::ShellString, inherited: &wrappers };
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
    }
}

/// Whether a command's words or redirections read `$name` or `${name}`.
pub(super) fn mentions(words: &[Word], redirects: &[Redirect], name: &str) -> bool {
    let (short, long) = (format!("${name}"), format!("${{{name}}}"));
    let reads = |w: &Word| {
        w.expands
            && (w.value.contains(&long)
                || w.value.match_indices(&short).any(|(at, _)| {
                    !w.value[at + short.len()..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
                }))
    };
    words.iter().any(reads) || redirects.iter().any(|r| reads(&r.target))
}
