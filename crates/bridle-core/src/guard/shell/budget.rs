//! How much text the reader may make, beyond the text it reads — and the guardians after it.
//!
//! Rule: reading a line costs work in proportion to its length (nesting is bounded by
//! [`MAX_DEPTH`](super::MAX_DEPTH)), but following what bash does *makes* text — a variable's
//! value substituted (`a=$a$a` doubles it), a brace product (`{a,b}{c,d}...`), a loop body or a
//! function body read again per value or call, `find -exec` per start path, what `printf` prints
//! into a shell. All of that is charged, as the bytes it holds (text and the reader's structures
//! for it), against one allowance per line: [`GROWTH`] times the line's length or [`FLOOR`]
//! bytes, whichever is more. Once a charge is refused the allowance is
//! spent for good: from there on nothing more is made, words stay as written (unknown), and the
//! line carries [`Signal::TooLarge`](super::Signal::TooLarge), a finding that asks — a line
//! can never be allowed because the guard stopped following it.
//!
//! What the reader leaves of the allowance goes to the guardians' reading of the same line
//! (`ShellView`): each path looked up from a working directory the line moved into rereads that
//! directory's path, so the lookup is charged the length the line gave it (below the workspace
//! root; `cd a; ` said 20,000 times would otherwise cost the square of the line's length); a
//! refused lookup is made from an unknown folder and the line carries the same signal. So is
//! each glob's matcher, compiled to see whether the glob reaches a secret (once per distinct glob,
//! and only when its literal ends could): one the budget refuses is judged as its cut path.

use std::mem::size_of;

use super::{Redirect, SimpleCommand, Word};

/// Bytes a line may make per byte of its own.
pub const GROWTH: usize = 16;
/// Bytes any line may make, however short: a few loops over a few values, a function called a
/// few times, `touch {a,b,c,d}{1,2,3,4}.txt`, all fit many times over.
pub const FLOOR: usize = 256 * 1024;

/// The allowance of one line.
#[derive(Debug)]
pub(crate) struct Budget {
    left: usize,
    spent: usize,
    exhausted: bool,
}

impl Budget {
    /// The allowance of a line of `len` bytes.
    pub fn for_len(len: usize) -> Self {
        Self { left: len.saturating_mul(GROWTH).max(FLOOR), spent: 0, exhausted: false }
    }

    /// Takes `bytes` if that many are left and nothing was refused before; otherwise refuses
    /// this and every later charge.
    pub fn take(&mut self, bytes: usize) -> bool {
        if self.exhausted || bytes > self.left {
            self.exhausted = true;
            return false;
        }
        self.left -= bytes;
        self.spent += bytes;
        true
    }

    /// Bytes that may still be made (0 once a charge was refused).
    pub fn left(&self) -> usize {
        if self.exhausted {
            0
        } else {
            self.left
        }
    }

    /// Gives up for a reason other than size (a count bound was reached): the same as a
    /// refused charge.
    pub fn give_up(&mut self) {
        self.exhausted = true;
    }

    /// A charge was refused: something was left as written.
    pub fn exhausted(&self) -> bool {
        self.exhausted
    }

    /// Bytes made so far.
    #[cfg(test)]
    pub fn spent(&self) -> usize {
        self.spent
    }
}

/// What a word made again weighs: its text as written and as read, and the word itself.
pub(super) fn word_weight(word: &Word) -> usize {
    size_of::<Word>() + word.raw.len() + word.value.len()
}

/// What a command made again weighs (a loop body per value, a clause per start path): its
/// words, its redirections and the command itself.
pub(crate) fn command_weight(words: &[Word], redirects: &[Redirect]) -> usize {
    size_of::<SimpleCommand>()
        + words.iter().map(word_weight).sum::<usize>()
        + redirects
            .iter()
            .map(|r| size_of::<Redirect>() + word_weight(&r.target) + r.body.as_ref().map_or(0, String::len))
            .sum::<usize>()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_charge_spends_the_allowance_for_good() {
        let mut budget = Budget::for_len(10);
        assert_eq!(budget.left(), FLOOR);
        assert!(budget.take(FLOOR - 1));
        assert!(!budget.take(2), "more than is left");
        assert!(!budget.take(1), "refused once, refused for good");
        assert_eq!((budget.left(), budget.spent(), budget.exhausted()), (0, FLOOR - 1, true));
        assert_eq!(Budget::for_len(1 << 20).left(), GROWTH << 20);
    }
}
