//! The session's event stream with a count: every event the engine sends is numbered in the
//! order the receiver gets it (1, 2, ...), so a window can tell which events a snapshot already
//! holds (DESIGN §11: `session_snapshot` returns `seq`, every event carries one).
//!
//! Rule: the count and the channel move together — an event is counted only once it is in the
//! channel, under one lock, so the n-th event received is the n-th counted, whichever task or
//! thread sent it.

use std::sync::{Arc, Mutex, PoisonError};

use bridle_protocol::Event;
use tokio::sync::mpsc;

/// The sending half; cheap to clone.
#[derive(Clone)]
pub(crate) struct EventSender {
    tx: mpsc::Sender<Event>,
    sent: Arc<Mutex<u64>>,
}

/// How many events a session has sent so far (shared with its [`super::Engine`]).
#[derive(Clone, Default)]
pub struct EventCount(Arc<Mutex<u64>>);

impl EventCount {
    /// Events sent so far: the `seq` of the last one.
    pub fn get(&self) -> u64 {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl EventSender {
    pub(crate) fn new(tx: mpsc::Sender<Event>) -> (Self, EventCount) {
        let count = EventCount::default();
        (Self { tx, sent: count.0.clone() }, count)
    }

    /// Sends, waiting for room; a receiver that went away is not an error of the session.
    pub(crate) async fn send(&self, event: Event) {
        let Ok(permit) = self.tx.reserve().await else { return };
        let mut sent = self.sent.lock().unwrap_or_else(PoisonError::into_inner);
        permit.send(event);
        *sent += 1;
    }

    /// Sends without waiting (from sync code and other threads); false when the channel is full
    /// or closed.
    pub(crate) fn try_send(&self, event: Event) -> bool {
        let mut sent = self.sent.lock().unwrap_or_else(PoisonError::into_inner);
        let ok = self.tx.try_send(event).is_ok();
        if ok {
            *sent += 1;
        }
        ok
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[tokio::test]
    async fn the_count_is_the_order_of_arrival() {
        let (tx, mut rx) = mpsc::channel(8);
        let (sender, count) = EventSender::new(tx);
        let event = |n: usize| Event::Warning {
            session_id: "s".into(),
            code: bridle_protocol::WarningCode::PromptTruncated,
            message: n.to_string(),
        };
        let mut tasks = Vec::new();
        for n in 0..4 {
            let sender = sender.clone();
            tasks.push(tokio::spawn(async move { sender.send(event(n)).await }));
        }
        assert!(sender.clone().try_send(event(9)));
        for task in tasks {
            task.await.unwrap();
        }
        assert_eq!(count.get(), 5);
        let mut received = 0;
        while rx.try_recv().is_ok() {
            received += 1;
        }
        assert_eq!(received, 5);
    }
}
