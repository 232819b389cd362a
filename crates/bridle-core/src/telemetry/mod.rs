//! Export to the team's OpenTelemetry collector (DESIGN §17): every audit row as an OTLP log
//! record, turns and tool calls as spans, tokens, cost, tool latency and decisions as metrics,
//! all derived from the rows the audit log has just committed (sanitised and chained), over
//! OTLP/HTTP with the `opentelemetry` crates.
//!
//! Rule: exporting never slows a turn. Rows go into a bounded queue with `try_send` and one
//! worker thread exports them; a row that finds the queue full, or whose export fails, is
//! dropped and counted, and each outage (first drop to the next delivered export, or to exit)
//! is reported once, as an [`Outage`] the audit log turns into one `warning` row. At exit the
//! queue is flushed for at most the time the caller gives (2 s in the front ends).

mod pipeline;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TryRecvError, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bridle_protocol::AuditEvent;

use crate::config::TelemetryConfig;

/// Rows the queue holds before new ones are dropped.
pub const QUEUE_BOUND: usize = 4096;
/// Rows exported in one request at most.
const BATCH: usize = 512;
/// How long one export request may take.
const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);

/// Why the exporter could not be set up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TelemetryError {
    /// The endpoint or a header is not usable.
    #[error("telemetry: {0}")]
    Build(String),
    /// The worker thread could not start.
    #[error("telemetry: cannot start the export thread: {0}")]
    Thread(std::io::Error),
}

/// Records the collector did not get, over one outage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outage {
    /// The collector.
    pub endpoint: String,
    /// Audit rows whose records were dropped.
    pub dropped: u64,
    /// When the first was dropped (ms since the epoch).
    pub since_ms: i64,
    /// When an export got through again; `None` when Bridle exited first.
    pub until_ms: Option<i64>,
}

/// Cheap, cloneable handle on the export worker.
#[derive(Clone)]
pub struct Telemetry {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Telemetry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Telemetry").field("endpoint", &self.inner.endpoint).finish()
    }
}

struct Inner {
    endpoint: String,
    /// Rows; `None` wakes the worker to stop.
    tx: SyncSender<Option<Box<AuditEvent>>>,
    stop: AtomicBool,
    done: Mutex<Option<Receiver<()>>>,
    /// Rows taken into the queue.
    accepted: AtomicU64,
    /// Rows the worker finished with, delivered or not.
    settled: AtomicU64,
    outage: Mutex<OutageState>,
}

#[derive(Default)]
struct OutageState {
    dropped: u64,
    since_ms: Option<i64>,
    /// An outage that ended, waiting to be reported.
    ended: Option<Outage>,
}

impl Telemetry {
    /// Starts the export worker for `config` with `headers` (names and values, from the
    /// keychain); `Ok(None)` when telemetry is off.
    pub fn start(
        config: &TelemetryConfig,
        headers: HashMap<String, String>,
    ) -> Result<Option<Telemetry>, TelemetryError> {
        let Some(endpoint) = config.endpoint.clone().filter(|_| config.is_on()) else { return Ok(None) };
        Self::start_with(endpoint, headers, config.include_content, QUEUE_BOUND).map(Some)
    }

    /// [`Telemetry::start`] with the queue's bound given (tests, the memory figure).
    pub fn start_with(
        endpoint: String,
        headers: HashMap<String, String>,
        include_content: bool,
        bound: usize,
    ) -> Result<Telemetry, TelemetryError> {
        let (tx, rx) = mpsc::sync_channel(bound);
        let (done_tx, done_rx) = mpsc::sync_channel(1);
        let inner = Arc::new(Inner {
            endpoint: endpoint.clone(),
            tx,
            stop: AtomicBool::new(false),
            done: Mutex::new(Some(done_rx)),
            accepted: AtomicU64::new(0),
            settled: AtomicU64::new(0),
            outage: Mutex::new(OutageState::default()),
        });
        // The exporters are built on the worker (their blocking HTTP client must not be made or
        // dropped inside an async runtime); a build error comes back before `start` returns.
        let (ready_tx, ready_rx) = mpsc::sync_channel(1);
        let worker = inner.clone();
        std::thread::Builder::new()
            .name("bridle-telemetry".into())
            .spawn(move || {
                let pipeline = match pipeline::Pipeline::new(&endpoint, headers, include_content, EXPORT_TIMEOUT) {
                    Ok(p) => {
                        let _ = ready_tx.send(Ok(()));
                        p
                    }
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return;
                    }
                };
                work(&worker, pipeline, &rx);
                let _ = done_tx.send(());
            })
            .map_err(TelemetryError::Thread)?;
        match ready_rx.recv() {
            Ok(Ok(())) => Ok(Telemetry { inner }),
            Ok(Err(e)) => Err(TelemetryError::Build(e)),
            Err(_) => Err(TelemetryError::Build("the export thread ended".into())),
        }
    }

    /// The collector's URL.
    pub fn endpoint(&self) -> &str {
        &self.inner.endpoint
    }

    /// Queues committed rows for export; never waits. A row that finds the queue full is
    /// dropped and counted.
    pub fn offer(&self, rows: Vec<AuditEvent>, now_ms: i64) {
        if self.inner.stop.load(Ordering::Relaxed) {
            return;
        }
        for row in rows {
            match self.inner.tx.try_send(Some(Box::new(row))) {
                Ok(()) => {
                    self.inner.accepted.fetch_add(1, Ordering::Relaxed);
                }
                Err(TrySendError::Full(_)) | Err(TrySendError::Disconnected(_)) => self.inner.dropped(1, now_ms),
            }
        }
    }

    /// An outage that has ended and was not reported yet, once.
    pub fn take_ended_outage(&self) -> Option<Outage> {
        lock(&self.inner.outage).ended.take()
    }

    /// Stops taking rows, flushes what is queued for at most `within`, and returns what the
    /// collector never got (queued rows it had no time for included), if anything.
    pub fn shutdown(&self, within: Duration, now_ms: impl Fn() -> i64) -> Option<Outage> {
        let started = Instant::now();
        self.inner.stop.store(true, Ordering::Relaxed);
        // A full queue means the worker is busy and sees the flag after its batch.
        let _ = self.inner.tx.try_send(None);
        if let Some(done) = lock(&self.inner.done).take() {
            match done.recv_timeout(within) {
                Ok(()) | Err(RecvTimeoutError::Disconnected) => {}
                Err(RecvTimeoutError::Timeout) => {
                    tracing::warn!(
                        "telemetry: the collector took more than {within:?}; records still queued are dropped"
                    )
                }
            }
        }
        tracing::debug!("telemetry: flushed in {:?}", started.elapsed());
        let unsettled =
            self.inner.accepted.load(Ordering::Relaxed).saturating_sub(self.inner.settled.load(Ordering::Relaxed));
        let now = now_ms();
        if unsettled > 0 {
            self.inner.dropped(unsettled, now);
        }
        let mut state = lock(&self.inner.outage);
        let current = state.since_ms.take().map(|since_ms| Outage {
            endpoint: self.inner.endpoint.clone(),
            dropped: std::mem::take(&mut state.dropped),
            since_ms,
            until_ms: None,
        });
        // An ended outage not reported yet and another at exit: one report of both.
        match (state.ended.take(), current) {
            (Some(ended), Some(current)) => {
                Some(Outage { dropped: ended.dropped + current.dropped, since_ms: ended.since_ms, ..current })
            }
            (ended, current) => ended.or(current),
        }
    }
}

impl Inner {
    fn dropped(&self, n: u64, now_ms: i64) {
        let mut state = lock(&self.outage);
        state.dropped += n;
        state.since_ms.get_or_insert(now_ms);
    }

    fn delivered(&self, now_ms: i64) {
        let mut state = lock(&self.outage);
        if let Some(since_ms) = state.since_ms.take() {
            let dropped = std::mem::take(&mut state.dropped);
            let ended = Outage { endpoint: self.endpoint.clone(), dropped, since_ms, until_ms: Some(now_ms) };
            // Two outages between reports: one report covering both.
            state.ended = Some(match state.ended.take() {
                Some(earlier) => Outage { dropped: earlier.dropped + dropped, since_ms: earlier.since_ms, ..ended },
                None => ended,
            });
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}

/// The worker: batches of queued rows to the pipeline, until told to stop and the queue is
/// empty; then the open turns end and the pipeline shuts down.
fn work(inner: &Inner, mut pipeline: pipeline::Pipeline, rx: &Receiver<Option<Box<AuditEvent>>>) {
    let mut batch = Vec::with_capacity(BATCH);
    loop {
        // Once told to stop, the queue is drained without waiting for more.
        let stopping = inner.stop.load(Ordering::Relaxed);
        let next = if stopping {
            rx.try_recv().map_err(|e| match e {
                TryRecvError::Empty => RecvTimeoutError::Timeout,
                TryRecvError::Disconnected => RecvTimeoutError::Disconnected,
            })
        } else {
            rx.recv_timeout(Duration::from_millis(100))
        };
        match next {
            Ok(Some(row)) => batch.push(row),
            // Told to stop: what is queued still goes, then the loop ends on an empty queue.
            Ok(None) => continue,
            Err(RecvTimeoutError::Timeout) if stopping => break,
            Err(RecvTimeoutError::Timeout) => continue,
            Err(RecvTimeoutError::Disconnected) => break,
        }
        while batch.len() < BATCH {
            match rx.try_recv() {
                Ok(Some(row)) => batch.push(row),
                Ok(None) => {}
                Err(_) => break,
            }
        }
        let n = batch.len() as u64;
        let delivered = pipeline.export(batch.drain(..).map(|b| *b));
        inner.settled.fetch_add(n, Ordering::Relaxed);
        match delivered {
            Ok(()) => inner.delivered(now_ms()),
            Err(e) => {
                tracing::debug!("telemetry: export to {} failed: {e}", inner.endpoint);
                inner.dropped(n, now_ms());
            }
        }
    }
    pipeline.shutdown();
}
