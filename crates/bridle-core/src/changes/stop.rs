//! A call's writes under its timeout: the runner raises a stop when the call times out or is
//! interrupted, and waits until every write that had begun has settled, before the call returns.
//!
//! Rule: a write is all-or-nothing whatever the timeout. Its checks and plan look at the stop
//! between files and leave without writing; once it writes, it looks at the stop between files
//! too and, stopped, puts back what it wrote (from its checkpoints) before it ends; either way it
//! says what happened, and the call's result and audit carry that sentence. Dropping the call's
//! future never cuts a write short: the write runs on a thread of its own, and the runner waits.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// The writes of one call.
#[derive(Debug)]
pub struct CallWrites {
    stop: AtomicBool,
    running: tokio::sync::watch::Sender<usize>,
    told: Mutex<Vec<String>>,
}

impl Default for CallWrites {
    fn default() -> Self {
        CallWrites { stop: AtomicBool::new(false), running: tokio::sync::watch::Sender::new(0), told: Mutex::default() }
    }
}

impl CallWrites {
    /// Asks every write of the call to stop: what has not begun writing leaves nothing, what has
    /// rolls back.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
    }

    /// Whether the call was stopped.
    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }

    /// A write begins; it has settled when the ticket ends (or is dropped).
    pub fn begin(self: &Arc<Self>) -> WriteTicket {
        self.running.send_modify(|n| *n += 1);
        WriteTicket { writes: self.clone(), ended: false }
    }

    /// Waits until no write of the call runs; what each stopped or finished write said since.
    pub async fn settled(&self) -> Vec<String> {
        let mut running = self.running.subscribe();
        let _ = running.wait_for(|n| *n == 0).await;
        std::mem::take(&mut *self.told.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

/// One write of a call, running.
#[derive(Debug)]
pub struct WriteTicket {
    writes: Arc<CallWrites>,
    ended: bool,
}

impl WriteTicket {
    /// Whether the call was stopped.
    pub fn stopped(&self) -> bool {
        self.writes.stopped()
    }

    /// The write has settled; `told` (what it did, when the call was stopped) is kept for the
    /// call's result.
    pub fn end(mut self, told: Option<String>) {
        if let Some(told) = told.filter(|_| self.writes.stopped()) {
            self.writes.told.lock().unwrap_or_else(PoisonError::into_inner).push(told);
        }
        self.ended = true;
        self.writes.running.send_modify(|n| *n = n.saturating_sub(1));
    }
}

impl Drop for WriteTicket {
    fn drop(&mut self) {
        if !self.ended {
            self.writes.running.send_modify(|n| *n = n.saturating_sub(1));
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_runner_waits_for_a_write_and_hears_what_it_did_when_stopped() {
        let writes = Arc::new(CallWrites::default());
        assert!(writes.settled().await.is_empty());
        let ticket = writes.begin();
        let waiting = tokio::spawn({
            let writes = writes.clone();
            async move { writes.settled().await }
        });
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        assert!(!waiting.is_finished(), "settled before the write ended");
        writes.stop();
        assert!(ticket.stopped());
        ticket.end(Some("rolled back 3 files".into()));
        assert_eq!(waiting.await.unwrap(), ["rolled back 3 files"]);
        // Unstopped, a write's words are its result's own business; a dropped ticket settles too.
        let quiet = Arc::new(CallWrites::default());
        quiet.begin().end(Some("done".into()));
        drop(quiet.begin());
        assert!(quiet.settled().await.is_empty());
    }
}
