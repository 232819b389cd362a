//! [`AuditSink`]: what the engine holds — records go into a bounded channel and one writer
//! thread appends them to the [`AuditLog`] in batches.
//!
//! Rule: nothing recorded is dropped. When the channel is full, `record` waits for room (it
//! never does I/O itself); a failed append is logged with `tracing`, reported by the next
//! `flush`, and kept for [`AuditSink::take_failure`] so the engine can tell the user; dropping
//! the last clone flushes and joins the writer.

use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use super::{AuditError, AuditLog, AuditRecord};

/// Records queued before `record` has to wait.
const CAPACITY: usize = 32 * 1024;
/// Records appended in one transaction at most.
const MAX_BATCH: usize = 2048;

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
    tx: SyncSender<Message>,
    thread: Mutex<Option<JoinHandle<()>>>,
    /// The first append failure nobody has been told about yet.
    unreported: Arc<Mutex<Option<String>>>,
}

impl AuditSink {
    /// Starts the writer thread, which owns `log` until the last clone is dropped.
    pub fn start(log: AuditLog) -> AuditSink {
        let (tx, rx) = mpsc::sync_channel(CAPACITY);
        let unreported = Arc::new(Mutex::new(None));
        let shared = unreported.clone();
        let spawned =
            std::thread::Builder::new().name("bridle-audit".into()).spawn(move || write_loop(&log, &rx, &shared));
        match spawned {
            Ok(handle) => {
                AuditSink { inner: Some(Arc::new(Writer { tx, thread: Mutex::new(Some(handle)), unreported })) }
            }
            Err(e) => {
                // Without a thread nothing can be written; say so loudly and let flush() fail.
                tracing::error!("audit log: cannot start the writer thread: {e}");
                let (dead_tx, _) = mpsc::sync_channel(1);
                *lock(&unreported) = Some(format!("cannot start the audit writer: {e}"));
                AuditSink { inner: Some(Arc::new(Writer { tx: dead_tx, thread: Mutex::new(None), unreported })) }
            }
        }
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
        let message = match writer.tx.try_send(Message::Record(Box::new(record))) {
            Ok(()) => return,
            Err(TrySendError::Full(message)) => message,
            Err(TrySendError::Disconnected(_)) => {
                tracing::error!("audit log: the writer thread has stopped; a record was lost");
                lock(&writer.unreported).get_or_insert_with(|| "the audit writer has stopped; records are lost".into());
                return;
            }
        };
        tracing::debug!("audit log: queue full, waiting for the writer");
        if writer.tx.send(message).is_err() {
            tracing::error!("audit log: the writer thread has stopped; a record was lost");
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

fn write_loop(log: &AuditLog, rx: &Receiver<Message>, unreported: &Mutex<Option<String>>) {
    let mut batch = Vec::with_capacity(MAX_BATCH);
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
        if !batch.is_empty() {
            if let Err(e) = log.append(&batch) {
                tracing::error!(records = batch.len(), "audit log: append failed: {e}");
                lock(unreported)
                    .get_or_insert_with(|| format!("{} audit record(s) could not be written: {e}", batch.len()));
                failure.get_or_insert(e);
            }
            batch.clear();
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
