//! Secrets learnt before the next redaction: work whose result only a redaction needs waits here
//! and runs at the first redaction in any thread. The host environment at launch is such work:
//! testing its values compiles every secret shape, some 30 ms that the window's first screen
//! need not wait for.
//!
//! Rule: no redaction runs before the waiting work is done. Another thread's redaction waits for
//! it; the thread doing it redacts as it would have had the work run at once (it sees what is
//! known so far). Work given here never gives more work (it would wait for itself).

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};

type Work = Box<dyn FnOnce() + Send>;

static WAITING: Mutex<Vec<Work>> = Mutex::new(Vec::new());
/// Whether `WAITING` may hold work: the redactions after it is done skip the lock.
static ANY: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// This thread is doing the waiting work (its own redactions go on without it).
    static DOING: Cell<bool> = const { Cell::new(false) };
}

/// Runs `work` before the next redaction, in whichever thread redacts first.
pub fn learn_later(work: impl FnOnce() + Send + 'static) {
    let mut waiting = WAITING.lock().unwrap_or_else(PoisonError::into_inner);
    waiting.push(Box::new(work));
    ANY.store(true, Ordering::Release);
}

/// Does the waiting work, if any; every redaction calls it first.
pub(super) fn settle() {
    if !ANY.load(Ordering::Acquire) || DOING.get() {
        return;
    }
    // Held while the work runs: a redaction in another thread waits here until it is done.
    let mut waiting = WAITING.lock().unwrap_or_else(PoisonError::into_inner);
    struct Done;
    impl Drop for Done {
        fn drop(&mut self) {
            DOING.set(false);
        }
    }
    DOING.set(true);
    let _done = Done;
    for work in std::mem::take(&mut *waiting) {
        work();
    }
    ANY.store(false, Ordering::Release);
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use std::sync::atomic::AtomicUsize;
    use std::sync::Arc;

    use super::*;

    #[test]
    fn work_runs_once_at_the_first_redaction_and_its_secret_is_redacted() {
        let runs = Arc::new(AtomicUsize::new(0));
        let counted = runs.clone();
        learn_later(move || {
            counted.fetch_add(1, Ordering::SeqCst);
            crate::redact::remember(["later-learnt-secret-4711"]);
        });
        assert_eq!(runs.load(Ordering::SeqCst), 0, "nothing runs before a redaction");
        let text = crate::redact::sanitize_text("the value later-learnt-secret-4711 here");
        assert!(!text.contains("later-learnt-secret-4711"), "{text}");
        crate::redact::sanitize_text("again");
        assert_eq!(runs.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn another_thread_waits_for_the_work() {
        learn_later(|| {
            std::thread::sleep(std::time::Duration::from_millis(200));
            crate::redact::remember(["slowly-learnt-secret-0815"]);
        });
        let first = std::thread::spawn(|| crate::redact::sanitize_text("a"));
        std::thread::sleep(std::time::Duration::from_millis(20));
        let text = crate::redact::sanitize_text("see slowly-learnt-secret-0815");
        first.join().expect("the first thread redacts");
        assert!(!text.contains("slowly-learnt-secret-0815"), "{text}");
    }
}
