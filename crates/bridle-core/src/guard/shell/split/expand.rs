//! What bash does to a command's words before running it: substitutions it can compute folded,
//! variables replaced by their values, fields split, braces expanded, redirection targets
//! likewise; and what becomes of a command whose expansions read two ways (`${X:-~}`, read
//! once each way by [`Splitter::emit`]) or of a loop's words.
//!
//! Rule: what bash would make of a word is what the guard judges; a value that depends on the
//! reading taken is every value it may take, never only one.

use super::super::vars::Reading;
use super::super::{fold, is_assignment, words, Redirect, RedirectOp, Signal, Word};
use super::{Splitter, MAX_LOOP_VALUES};

impl Splitter {
    /// What bash does to the words before running them: substitutions it can compute folded,
    /// variables the line set replaced by their values, fields split, braces expanded; and the
    /// same to redirection targets (`F=~/.bashrc; : > $F`).
    pub(super) fn expand(&mut self, words: Vec<Word>, redirects: Vec<Redirect>) -> (Vec<Word>, Vec<Redirect>) {
        // Once the line sets IFS, an unquoted expansion splits at its characters: a word that
        // is one expansion is split there, any other stays unknown.
        let ifs_set = self.vars.contains_key("IFS");
        let ifs = self.vars.get("IFS").map(str::to_string);
        if ifs_set && words.iter().any(|w| w.expands && !w.quoted) {
            self.signal(Signal::IfsExpansion);
        }
        let mut expanded = Vec::with_capacity(words.len());
        for w in words {
            let w = fold::fold(w, &mut self.vars, &mut self.budget);
            if let Some(items) = self.vars.splice(&w) {
                // Each element is a word kept as written and as read (`f "$@" "$@"` doubles).
                let weight: usize = items.iter().map(|i| std::mem::size_of::<Word>() + 2 * i.value.len()).sum();
                if self.budget.take(weight) {
                    expanded.extend(items);
                } else {
                    expanded.push(w);
                }
                continue;
            }
            // With the line's own IFS, a word that is more than one expansion is split where the
            // reader does not follow: left unknown.
            if ifs_set && !w.quoted && !words::one_expansion(&w.raw) {
                expanded.push(w);
                continue;
            }
            let known = words::substitute(w, &mut self.vars, &mut self.budget);
            let fields = if is_assignment(&known) { vec![known] } else { words::split_fields(known, ifs.as_deref()) };
            for field in fields {
                expanded.extend(words::brace_expand(field, &mut self.budget));
            }
        }
        let redirects = redirects
            .into_iter()
            .map(|mut r| {
                if !matches!(r.op, RedirectOp::HereDoc { .. }) {
                    let target = fold::fold(std::mem::take(&mut r.target), &mut self.vars, &mut self.budget);
                    r.target = words::substitute(target, &mut self.vars, &mut self.budget);
                }
                r
            })
            .collect();
        (expanded, redirects)
    }

    /// Values assigned while one command was read several ways become the several values of
    /// their variables (`d=${X:-~}`: `d` is `$X` or `~`), as `${X:=w}` makes X.
    pub(super) fn settle_readings(&mut self, collected: Vec<(String, String)>) {
        let mut several: Vec<(String, Vec<String>)> = Vec::new();
        for (name, value) in collected {
            match several.iter_mut().find(|(n, _)| *n == name) {
                Some((_, values)) if !values.contains(&value) => values.push(value),
                Some(_) => {}
                None => several.push((name, vec![value])),
            }
        }
        for (name, both) in self.vars.take_defaults() {
            several.push((name, both.into_iter().collect()));
        }
        for (name, values) in several {
            if values.len() > 1 {
                self.vars.remove(&name);
                self.loops.insert(name, values);
            }
        }
    }

    /// The values a `for` loop's words give (each reading of an expansion with two), at most
    /// [`MAX_LOOP_VALUES`].
    pub(super) fn loop_values(&mut self, values: Vec<Word>) -> Vec<String> {
        let mut kept = Vec::new();
        for w in values {
            let outer = self.vars.begin_reading(Reading::of(0));
            let mut mask = 0;
            loop {
                let w = fold::fold(w.clone(), &mut self.vars, &mut self.budget);
                let known = words::substitute(w, &mut self.vars, &mut self.budget);
                for field in words::split_fields(known, None) {
                    kept.extend(words::brace_expand(field, &mut self.budget).into_iter().map(|w| w.value));
                }
                mask += 1;
                if mask >= 1u32 << self.vars.reading().met() {
                    break;
                }
                self.vars.begin_reading(Reading::of(mask));
            }
            self.vars.begin_reading(outer);
            if kept.len() >= MAX_LOOP_VALUES {
                kept.truncate(MAX_LOOP_VALUES);
                break;
            }
        }
        kept
    }
}
