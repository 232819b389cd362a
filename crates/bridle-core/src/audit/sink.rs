//! [`AuditSink`]: what the engine holds — records go into a bounded queue and one writer
//! thread appends them to the [`AuditLog`] in batches.
//!
//! Rule: nothing recorded is dropped. When the queue is full, `record` waits for room (it
//! never does I/O itself); a failed append is logged with `tracing`, reported by the next
//! `flush`, and kept for [`AuditSink::take_failure`] so the engine can tell the user; dropping
//! the last clone flushes and joins the writer. The queue holds memory only for what is in it:
//! an idle sink keeps no room for a burst (a preallocated one was 768 KiB, held for the app's
//! whole life).

use std::sync::mpsc::{self, Receiver, Sender, SyncSender};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

use super::{AuditError, AuditLog, AuditRecord};

/// Records queued before `record` has to wait.
const CAPACITY: usize = 32 * 1024;
/// Records appended in one transaction at most.
const MAX_BATCH: usize = 2048;
/// The batch buffer kept between batches (a burst's larger one is given back).
const BATCH_KEPT: usize = 64;

enum Message {
    Record(Box<AuditRecord>),
    Flush(SyncSender<Result<(), AuditError>>),
    Shutdown,
}

/// Cheap, cloneable handle on the audit writer thread (or on nothing, see [`AuditSink::disabled`]).
#[derive(Clone)]
pub struct AuditSink {
    inner: Option<Arc<Writer>>,
}

impl std::fmt::Debug for AuditSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuditSink").field("enabled", &self.inner.is_some()).finish()
    }
}

struct Writer {
    tx: Sender<Message>,
    room: Arc<Room>,
    thread: Mutex<Option<JoinHandle<()>>>,
    /// The first append failure nobody has been told about yet.
    unreported: Arc<Mutex<Option<String>>>,
}

/// How many records are queued, and whether the writer still takes them: `record` waits on
/// `freed` while the queue is full.
struct Room {
    state: Mutex<Queued>,
    freed: Condvar,
    capacity: usize,
}

#[derive(Default)]
struct Queued {
    records: usize,
    writer_gone: bool,
}

impl Room {
    fn new(capacity: usize) -> Arc<Room> {
        Arc::new(Room { state: Mutex::default(), freed: Condvar::new(), capacity })
    }

    /// Waits for room for one record and takes it; false when the writer is gone.
    fn take(&self) -> bool {
        let full = |state: &mut Queued| state.records >= self.capacity && !state.writer_gone;
        let mut state = lock(&self.state);
        if full(&mut state) {
            tracing::debug!("audit log: queue full, waiting for the writer");
            state = self.freed.wait_while(state, full).unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        state.records += 1;
        !state.writer_gone
    }

    /// `n` records left the queue.
    fn give_back(&self, n: usize) {
        if n > 0 {
            let mut state = lock(&self.state);
            state.records = state.records.saturating_sub(n);
            self.freed.notify_all();
        }
    }

    /// The writer takes nothing more (it ended, or never started): nobody waits for room.
    fn close(&self) {
        lock(&self.state).writer_gone = true;
        self.freed.notify_all();
    }
}

impl AuditSink {
    /// Starts the writer thread, which owns `log` until the last clone is dropped.
    pub fn start(log: AuditLog) -> AuditSink {
        Self::start_with_room(log, CAPACITY)
    }

    /// [`Self::start`] with room for `capacity` records (tests of a full queue use a small one).
    pub(super) fn start_with_room(log: AuditLog, capacity: usize) -> AuditSink {
        let (tx, rx) = mpsc::channel();
        let room = Room::new(capacity);
        let unreported = Arc::new(Mutex::new(None));
        let (shared, writers_room) = (unreported.clone(), room.clone());
        let spawned = std::thread::Builder::new().name("bridle-audit".into()).spawn(move || {
            // However the loop ends (a panic too), a full queue's waiters are let go.
            struct Closing(Arc<Room>);
            impl Drop for Closing {
                fn drop(&mut self) {
                    self.0.close();
                }
            }
            let closing = Closing(writers_room);
            write_loop(&log, &rx, &closing.0, &shared);
        });
        let thread = match spawned {
            Ok(handle) => Some(handle),
            Err(e) => {
                // Without a thread nothing can be written; say so loudly and let flush() fail.
                tracing::error!("audit log: cannot start the writer thread: {e}");
                *lock(&unreported) = Some(format!("cannot start the audit writer: {e}"));
                room.close();
                None
            }
        };
        AuditSink { inner: Some(Arc::new(Writer { tx, room, thread: Mutex::new(thread), unreported })) }
    }

    /// A sink that records nothing (tests, benches).
    pub fn disabled() -> AuditSink {
        AuditSink { inner: None }
    }

    /// Whether records go anywhere.
    pub fn is_enabled(&self) -> bool {
        self.inner.is_some()
    }

    /// Queues `record`; waits only if the queue is full.
    pub fn record(&self, record: AuditRecord) {
        let Some(writer) = &self.inner else { return };
        if !writer.room.take() || writer.tx.send(Message::Record(Box::new(record))).is_err() {
            tracing::error!("audit log: the writer thread has stopped; a record was lost");
            lock(&writer.unreported).get_or_insert_with(|| "the audit writer has stopped; records are lost".into());
        }
    }

    /// The first append failure since the last call, once: what the user must be told.
    pub fn take_failure(&self) -> Option<String> {
        self.inner.as_ref().and_then(|w| lock(&w.unreported).take())
    }

    /// Waits until everything recorded so far (by any clone) is committed; reports the first
    /// append error since the previous flush.
    pub fn flush(&self) -> Result<(), AuditError> {
        let Some(writer) = &self.inner else { return Ok(()) };
        let (reply_tx, reply_rx) = mpsc::sync_channel(1);
        writer.tx.send(Message::Flush(reply_tx)).map_err(|_| AuditError::Stopped)?;
        reply_rx.recv().map_err(|_| AuditError::Stopped)?
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        let _ = self.tx.send(Message::Shutdown);
        let handle = match self.thread.get_mut() {
            Ok(handle) => handle.take(),
            Err(poisoned) => poisoned.into_inner().take(),
        };
        if let Some(handle) = handle {
            if handle.join().is_err() {
                tracing::error!("audit log: the writer thread panicked");
            }
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn write_loop(log: &AuditLog, rx: &Receiver<Message>, room: &Room, unreported: &Mutex<Option<String>>) {
    let mut batch = Vec::new();
    let mut waiting = Vec::new();
    let mut failure: Option<AuditError> = None;
    loop {
        let Ok(first) = rx.recv() else { break };
        let mut next = Some(first);
        let mut shutdown = false;
        // Take whatever is already queued, up to a batch: one transaction for all of it.
        while let Some(message) = next.take() {
            match message {
                Message::Record(r) => batch.push(*r),
                Message::Flush(reply) => waiting.push(reply),
                Message::Shutdown => shutdown = true,
            }
            if shutdown || batch.len() >= MAX_BATCH {
                break;
            }
            next = rx.try_recv().ok();
        }
        // Out of the queue: room for more while this batch is written.
        room.give_back(batch.len());
        if !batch.is_empty() {
            if let Err(e) = log.append(&batch) {
                tracing::error!(records = batch.len(), "audit log: append failed: {e}");
                lock(unreported)
                    .get_or_insert_with(|| format!("{} audit record(s) could not be written: {e}", batch.len()));
                failure.get_or_insert(e);
            }
            batch.clear();
            batch.shrink_to(BATCH_KEPT);
        }
        if !waiting.is_empty() {
            let message = failure.take().map(|e| e.to_string());
            for reply in waiting.drain(..) {
                let _ = reply.send(match &message {
                    None => Ok(()),
                    Some(m) => Err(AuditError::Writer(m.clone())),
                });
            }
        }
        if shutdown {
            break;
        }
    }
}
