//! The loop guard: the same call over and over, with nothing changing, is a stuck model.
//!
//! Rule: the third identical call in a row (same tool, same canonical arguments, no file
//! changed in between) gets a reminder in its result; the fourth is not run and ends the turn.

/// What the guard says about one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Repetition {
    /// Fine.
    Fresh,
    /// Third in a row: run it, but remind the model.
    Remind,
    /// Fourth in a row: do not run it; end the turn.
    Stop,
}

/// The reminder appended to a third identical call's result.
pub const REMINDER: &str = "\n\n[note: this is the third identical call in a row and nothing has changed; \
a fourth identical call will end the turn. Try something different or give your answer.]";

#[derive(Debug, Default)]
/// The turn's memory of the calls just made.
pub struct LoopGuard {
    last: Option<String>,
    repeats: u32,
}

impl LoopGuard {
    /// Observes the next call, identified by tool name and canonical arguments.
    pub fn observe(&mut self, key: String) -> Repetition {
        if self.last.as_ref() == Some(&key) {
            self.repeats += 1;
        } else {
            self.last = Some(key);
            self.repeats = 1;
        }
        match self.repeats {
            0..=2 => Repetition::Fresh,
            3 => Repetition::Remind,
            _ => Repetition::Stop,
        }
    }

    /// A file changed: earlier repeats no longer count.
    pub fn reset(&mut self) {
        self.last = None;
        self.repeats = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reminds_on_the_third_and_stops_on_the_fourth() {
        let mut g = LoopGuard::default();
        let seen: Vec<_> = (0..4).map(|_| g.observe("read{a}".into())).collect();
        assert_eq!(seen, [Repetition::Fresh, Repetition::Fresh, Repetition::Remind, Repetition::Stop]);
    }

    #[test]
    fn a_different_call_or_a_file_change_starts_over() {
        let mut g = LoopGuard::default();
        g.observe("a".into());
        g.observe("a".into());
        assert_eq!(g.observe("b".into()), Repetition::Fresh);
        g.observe("b".into());
        g.reset();
        assert_eq!(g.observe("b".into()), Repetition::Fresh);
        assert_eq!(g.observe("b".into()), Repetition::Fresh);
        assert_eq!(g.observe("b".into()), Repetition::Remind);
    }
}
