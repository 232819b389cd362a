//! A background process's output: the last [`super::RING_BYTES`] of it, and how far the model has
//! read.
//!
//! Rule: memory stays bounded whatever the process writes; what falls out before it was read is
//! counted, so a reader is told how much it missed.

use std::collections::VecDeque;

/// The ring of one process.
#[derive(Debug)]
pub(super) struct Ring {
    bytes: VecDeque<u8>,
    capacity: usize,
    /// Bytes written since the start.
    written: u64,
    /// Bytes the model has been given (or has missed) since the start.
    read: u64,
}

/// What a read returns: the new text and how many bytes fell out of the ring unread before it.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct NewOutput {
    pub text: String,
    pub dropped: u64,
}

impl Ring {
    pub(super) fn new(capacity: usize) -> Self {
        Self { bytes: VecDeque::with_capacity(capacity.min(64 * 1024)), capacity, written: 0, read: 0 }
    }

    /// Keeps `chunk`, dropping the oldest bytes past the capacity.
    pub(super) fn push(&mut self, chunk: &[u8]) {
        self.written += chunk.len() as u64;
        let chunk = &chunk[chunk.len().saturating_sub(self.capacity)..];
        let over = (self.bytes.len() + chunk.len()).saturating_sub(self.capacity);
        self.bytes.drain(..over);
        self.bytes.extend(chunk);
    }

    /// Whether bytes arrived that the model has not read.
    pub(super) fn has_new(&self) -> bool {
        self.written > self.read
    }

    /// The bytes not read yet (as text), and how many were lost before they could be.
    pub(super) fn take_new(&mut self) -> NewOutput {
        let oldest = self.written - self.bytes.len() as u64;
        let dropped = oldest.saturating_sub(self.read);
        let from = usize::try_from(self.read.max(oldest) - oldest).unwrap_or(usize::MAX);
        let (a, b) = self.bytes.as_slices();
        let mut new = Vec::with_capacity(self.bytes.len() - from);
        if from < a.len() {
            new.extend_from_slice(&a[from..]);
            new.extend_from_slice(b);
        } else {
            new.extend_from_slice(&b[from - a.len()..]);
        }
        self.read = self.written;
        NewOutput { text: text_of(&new), dropped }
    }

    /// The last `n` bytes (as text), read or not.
    pub(super) fn tail(&self, n: usize) -> String {
        let from = self.bytes.len().saturating_sub(n);
        let bytes: Vec<u8> = self.bytes.range(from..).copied().collect();
        text_of(&bytes)
    }

    /// Bytes held now.
    #[cfg(test)]
    pub(super) fn held(&self) -> usize {
        self.bytes.len()
    }
}

/// Bytes as text: a character cut at the start is skipped, invalid bytes are replaced.
fn text_of(bytes: &[u8]) -> String {
    let start = bytes.iter().take(3).take_while(|b| (**b & 0b1100_0000) == 0b1000_0000).count();
    String::from_utf8_lossy(&bytes[start..]).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_return_only_what_is_new() {
        let mut ring = Ring::new(100);
        ring.push(b"one\n");
        assert_eq!(ring.take_new(), NewOutput { text: "one\n".into(), dropped: 0 });
        assert!(!ring.has_new());
        ring.push(b"two\n");
        ring.push(b"three\n");
        assert_eq!(ring.take_new().text, "two\nthree\n");
        assert_eq!(ring.take_new(), NewOutput::default());
    }

    #[test]
    fn what_falls_out_unread_is_counted_and_memory_stays_bounded() {
        let mut ring = Ring::new(10);
        ring.push(b"0123456789");
        ring.push(b"abcde");
        assert_eq!(ring.held(), 10);
        assert_eq!(ring.take_new(), NewOutput { text: "56789abcde".into(), dropped: 5 });
        // A chunk larger than the ring keeps its end.
        ring.push(&[b'x'; 25]);
        assert_eq!(ring.held(), 10);
        let read = ring.take_new();
        assert_eq!((read.text.len(), read.dropped), (10, 15));
        assert_eq!(ring.tail(3), "xxx");
    }

    #[test]
    fn a_character_cut_by_the_ring_is_skipped_not_garbled() {
        let mut ring = Ring::new(4);
        ring.push("aé€".as_bytes()); // 1 + 2 + 3 bytes: the ring keeps the last byte of é and €
        let read = ring.take_new();
        assert_eq!(read.text, "€");
        assert_eq!(read.dropped, 2);
    }
}
